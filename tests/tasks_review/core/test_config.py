"""The generate config: defaults, resolved paths, and errors that name the key at fault."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from tasks_review.core.config import (
    ConfigError,
    GenerateConfig,
    PipelineOptions,
    load_config,
    parse_config,
)

MINIMAL = {
    "source": {"kind": "trajectory", "path": "samples"},
    "pipeline": {"name": "trajectory_to_env"},
}


def _with(**sections):
    data = {key: dict(value) for key, value in MINIMAL.items()}
    for key, value in sections.items():
        data[key] = value
    return data


def _error(data, base: Path = Path("/cfg")) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse_config(data, base_dir=base)
    return caught.value


def test_minimal_config_takes_every_default():
    config = parse_config(MINIMAL, base_dir=Path("/cfg"))
    assert config.source.kind == "trajectory"
    assert config.source.format == "atif"
    assert config.source.path == Path("/cfg/samples")
    options = config.pipeline.options
    assert options == PipelineOptions()
    assert options.families == ("repair",)
    assert (options.limit, options.jobs, options.scan, options.propose_only) == (
        None,
        1,
        False,
        False,
    )
    assert options.platform == "linux/amd64"
    assert config.output.destination is None


def test_full_yaml_config_loads_with_paths_relative_to_its_folder(tmp_path):
    folder = tmp_path / "configs"
    folder.mkdir()
    path = folder / "generate.yaml"
    path.write_text(
        "source:\n"
        "  kind: trajectory\n"
        "  path: ../corpus\n"
        "  format: auto\n"
        "pipeline:\n"
        "  name: trajectory_to_env\n"
        "  options:\n"
        "    families: [repair]\n"
        "    limit: 5\n"
        "    jobs: 3\n"
        "    scan: true\n"
        "    propose_only: true\n"
        "    platform: linux/arm64\n"
        "output:\n"
        "  destination: out\n"
    )
    config = load_config(path)
    assert config.source.path == tmp_path / "corpus"
    assert config.source.format == "auto"
    assert config.pipeline.options == PipelineOptions(
        families=("repair",), limit=5, jobs=3, scan=True, propose_only=True, platform="linux/arm64"
    )
    assert config.output.destination == folder / "out"
    assert config.to_dict()["pipeline"]["options"]["jobs"] == 3
    assert config.to_dict()["output"]["destination"] == str(folder / "out")


def test_absolute_and_home_paths_are_not_rebased(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    config = parse_config(
        _with(source={"path": "~/logs"}, output={"destination": "/abs/out"}), base_dir="/cfg"
    )
    assert config.source.path == tmp_path / "logs"
    assert config.output.destination == Path("/abs/out")


def test_config_is_frozen():
    config = parse_config(MINIMAL, base_dir="/cfg")
    assert isinstance(config, GenerateConfig)
    with pytest.raises(AttributeError):
        config.source = None  # type: ignore[misc]
    with pytest.raises(AttributeError):
        config.pipeline.options.jobs = 4  # type: ignore[misc]


@pytest.mark.parametrize(
    "data, key",
    [
        ({**MINIMAL, "sorce": {}}, "sorce"),
        (_with(source={"path": "x", "formt": "atif"}), "source.formt"),
        (_with(pipeline={"name": "trajectory_to_env", "option": {}}), "pipeline.option"),
        (
            _with(pipeline={"name": "trajectory_to_env", "options": {"famlies": ["repair"]}}),
            "pipeline.options.famlies",
        ),
        (_with(output={"destinaton": "out"}), "output.destinaton"),
    ],
)
def test_unknown_keys_are_errors_that_name_the_key_path(data, key):
    error = _error(data)
    assert error.key == key
    assert str(error).startswith(f"{key}: unknown key")


@pytest.mark.parametrize(
    "data, key, fragment",
    [
        ({"pipeline": MINIMAL["pipeline"]}, "source", "missing"),
        ({"source": MINIMAL["source"]}, "pipeline", "missing"),
        (_with(source={"kind": "trajectory"}), "source.path", "missing"),
        (_with(source={"kind": "repository", "path": "x"}), "source.kind", "trajectory"),
        (_with(source={"path": "x", "format": "jsonl"}), "source.format", "claude-code"),
        (_with(source={"path": 3}), "source.path", "expected a path"),
        (_with(source={"path": "hf://datasets/x"}), "source.path", "local paths"),
        (_with(pipeline={"name": "repo_to_env"}), "pipeline.name", "trajectory_to_env"),
        (_with(pipeline={"options": {}}), "pipeline.name", "missing"),
        (_with(source=["x"]), "source", "mapping"),
    ],
)
def test_missing_and_wrong_values_are_errors_that_say_what_was_expected(data, key, fragment):
    error = _error(data)
    assert error.key == key
    assert fragment in str(error)


def _options(**options):
    return _with(pipeline={"name": "trajectory_to_env", "options": options})


@pytest.mark.parametrize(
    "options, key, fragment",
    [
        ({"jobs": 0}, "pipeline.options.jobs", "at least 1"),
        ({"jobs": "4"}, "pipeline.options.jobs", "whole number"),
        ({"jobs": True}, "pipeline.options.jobs", "whole number"),
        ({"limit": -1}, "pipeline.options.limit", "at least 1"),
        ({"limit": 2.5}, "pipeline.options.limit", "whole number"),
        ({"scan": "yes please"}, "pipeline.options.scan", "true or false"),
        ({"propose_only": 1}, "pipeline.options.propose_only", "true or false"),
        ({"platform": "amd64"}, "pipeline.options.platform", "linux/amd64"),
        ({"families": []}, "pipeline.options.families", "non-empty"),
        ({"families": ["repiar"]}, "pipeline.options.families[0]", "unknown family"),
        ({"families": ["repair", "repair"]}, "pipeline.options.families[1]", "twice"),
        ({"families": [3]}, "pipeline.options.families[0]", "family name"),
    ],
)
def test_bad_options_name_the_option(options, key, fragment):
    error = _error(_options(**options))
    assert error.key == key
    assert fragment in str(error)


def test_all_four_families_are_available_and_one_left_out_of_a_build_is_named(monkeypatch):
    families = ["repair", "build", "extend", "qa"]
    config = parse_config(_options(families=families), base_dir="/cfg")
    assert config.pipeline.options.families == tuple(families)
    monkeypatch.setattr("tasks_review.core.config.AVAILABLE_FAMILIES", ("repair",))
    error = _error(_options(families=["repair", "build"]))
    assert error.key == "pipeline.options.families[1]" and "not available" in str(error)


def test_a_single_family_name_is_read_as_a_list():
    config = parse_config(_options(families="repair"), base_dir="/cfg")
    assert config.pipeline.options.families == ("repair",)


def test_empty_options_and_output_sections_mean_defaults():
    config = parse_config(
        _with(pipeline={"name": "trajectory_to_env", "options": None}, output=None),
        base_dir="/cfg",
    )
    assert config.pipeline.options == PipelineOptions()
    assert config.output.destination is None


def test_yaml_errors_missing_files_and_empty_files_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "absent.yaml")
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    with pytest.raises(ConfigError, match="empty"):
        load_config(empty)
    broken = tmp_path / "broken.yaml"
    broken.write_text("source:\n  path: [unclosed\n")
    with pytest.raises(ConfigError, match=r"not valid YAML at line \d+"):
        load_config(broken)
    scalar = tmp_path / "scalar.yaml"
    scalar.write_text("just a string\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(scalar)


def test_config_errors_survive_pickling_for_workers():
    error = _error(_options(jobs=0))
    again = pickle.loads(pickle.dumps(error))
    assert (str(again), again.key) == (str(error), error.key)


# -- source.clones: the user's own clones of the projects ----------------------------------------


def _clones(clones, base: Path, **kwargs):
    return parse_config(
        _with(source={"path": "samples", "clones": clones}), base_dir=base, **kwargs
    )


def test_clones_map_recorded_projects_to_clones_relative_to_the_config(tmp_path):
    from tests.tasks_review.gitrepo import GitRepo

    GitRepo(tmp_path / "clones" / "app")
    GitRepo(tmp_path / "lib")
    config = _clones(
        {"/Users/me/src/app/": "clones/app", "git@github.com:org/lib.git": str(tmp_path / "lib")},
        tmp_path,
    )
    assert config.source.clones == {
        "/Users/me/src/app": tmp_path / "clones" / "app",
        "git@github.com:org/lib.git": tmp_path / "lib",
    }
    again = parse_config(config.to_dict(), base_dir=Path("/elsewhere"))
    assert again.source.clones == config.source.clones


@pytest.mark.parametrize(
    "clones, fragment",
    [
        (["/a"], "expected this section to be a mapping"),
        ({"src/app": "x"}, "the absolute directory the sessions ran in, or a git remote URL"),
        ({"/a": ""}, "expected a path"),
        ({"/a": "https://example.org/a.git"}, "only local paths"),
        ({"/a/": "x", "/a": "y"}, "is listed twice"),
    ],
)
def test_bad_clones_are_errors_naming_their_key(tmp_path, clones, fragment):
    with pytest.raises(ConfigError) as caught:
        _clones(clones, tmp_path, check_clones=False)  # the shape alone is wrong
    assert fragment in caught.value.message
    assert caught.value.key.startswith("source.clones")


def test_a_clone_that_is_not_a_git_repository_is_an_error_naming_it(tmp_path):
    (tmp_path / "plain").mkdir()
    with pytest.raises(ConfigError) as caught:
        _clones({"/Users/me/app": "plain"}, tmp_path)
    assert caught.value.key == "source.clones['/Users/me/app']"
    assert caught.value.message == f"{tmp_path / 'plain'} is not a git repository"
    with pytest.raises(ConfigError, match="is not a folder"):
        _clones({"/Users/me/app": "missing"}, tmp_path)


def test_a_stored_runs_config_is_read_again_without_looking_at_its_clones(tmp_path):
    config = _clones({"/Users/me/app": "missing"}, tmp_path, check_clones=False)
    assert config.source.clones == {"/Users/me/app": tmp_path / "missing"}


def test_without_clones_the_source_has_none():
    config = parse_config(MINIMAL, base_dir=Path("/cfg"))
    assert config.source.clones == {} and config.to_dict()["source"]["clones"] == {}


def test_tasks_map_harbor_task_names_or_paths_to_task_folders_each_with_a_task_toml(tmp_path):
    (tmp_path / "datasets" / "calc").mkdir(parents=True)
    (tmp_path / "datasets" / "calc" / "task.toml").write_text('version = "1.0"\n')
    (tmp_path / "empty").mkdir()
    config = parse_config(
        _with(source={"path": "logs", "tasks": {"calc": "datasets/calc"}}), base_dir=tmp_path
    )
    assert config.source.tasks == {"calc": tmp_path / "datasets" / "calc"}
    assert parse_config(config.to_dict(), base_dir=Path("/x")).source.tasks == config.source.tasks
    for folder, said in (("missing", "is not a folder"), ("empty", "has no task.toml")):
        with pytest.raises(ConfigError) as caught:
            parse_config(_with(source={"path": "logs", "tasks": {"x": folder}}), base_dir=tmp_path)
        assert caught.value.key == "source.tasks['x']" and said in caught.value.message
