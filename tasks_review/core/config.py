"""The ``generate --config FILE`` configuration: parsed, checked and frozen.

    source:
      kind: trajectory            # the only source kind
      path: ../shared/corpus      # a file or folder; relative to the config file's folder
      format: auto                # atif (default) | claude-code | codex | pi | auto
      clones:                     # optional: the user's own clones of the projects
        /Users/me/src/app: ~/src/app                 # a recorded cwd (or a folder above it)
        git@github.com:org/lib.git: ../clones/lib    # or a recorded git remote
      tasks:                      # optional: Harbor task folders, for the trials of each
        pyutils__line_profiler.a646bf0f: ../datasets/swesmith/pyutils__line_profiler.a646bf0f
    pipeline:
      name: trajectory_to_env
      options:
        families: [repair]        # any of repair, build, extend, qa (default [repair])
        limit: 20                 # at most this many candidates go past mining (default: all)
        jobs: 4                   # candidates prepared in parallel (default 1)
        scan: false               # screen trajectories with atif-scan first (default false)
        propose_only: false       # stop before images and task files (default false)
        platform: linux/amd64     # image platform (default linux/amd64)
    output:
      destination: out/           # task folders and report.json; relative to the config file

Every mistake is a ``ConfigError`` that names the key path (``pipeline.options.famlies``), so
the command can exit 2 with a message the user can act on. Unknown keys are errors at every
level: a misspelt option silently taking its default is the failure this guards against.

``source.clones`` maps a project as trajectories record it (the absolute directory the session
ran in, or its git remote URL) to a local git clone; mining lays a session's replayed files over
the clone's tree at the commit the session started from (``core/clones``). Each clone must be a
git repository when the config is read (``check_clones``; a stored run's config is re-read
without it, and a clone gone by then is a reason on the run, not a failure).

``source.tasks`` maps a Harbor task (its name, or the path result.json records) to its folder:
a trial of that task starts from the files its ``environment/Dockerfile`` copies in
(``core/clones/harbortask``). A task folder beside the jobs folder, where harbor ran, is found
without it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .clones import CloneError, is_remote, open_repository

SOURCE_KINDS = ("trajectory",)
SOURCE_FORMATS = ("atif", "claude-code", "codex", "pi", "auto")
PIPELINES = ("trajectory_to_env",)
# Families the design names, and the ones this build can run. Asking for a named family that is
# not built yet gets its own message rather than "unknown family".
KNOWN_FAMILIES = ("repair", "build", "extend", "qa")
AVAILABLE_FAMILIES = ("repair", "build", "extend", "qa")
DEFAULT_PLATFORM = "linux/amd64"
_PLATFORM = re.compile(r"^[a-z0-9]+/[a-z0-9_]+(/[a-z0-9]+)?$")


class ConfigError(ValueError):
    """A configuration that cannot be used; ``key`` is the dotted path at fault, if any."""

    def __init__(self, message: str, key: str | None = None) -> None:
        self.message = message
        self.key = key
        super().__init__(f"{key}: {message}" if key else message)

    def __reduce__(self) -> tuple[Any, ...]:  # workers pickle errors across processes
        return (type(self), (self.message, self.key))


@dataclass(frozen=True, slots=True)
class SourceConfig:
    path: Path
    kind: str = "trajectory"
    format: str = "atif"
    # A recorded project directory or git remote -> the local clone of that project.
    clones: Mapping[str, Path] = field(default_factory=dict)
    # A Harbor task's name or recorded path -> its task folder (task.toml, environment/): the
    # start of that task's trials.
    tasks: Mapping[str, Path] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PipelineOptions:
    families: tuple[str, ...] = ("repair",)
    limit: int | None = None
    jobs: int = 1
    scan: bool = False
    propose_only: bool = False
    platform: str = DEFAULT_PLATFORM


@dataclass(frozen=True, slots=True)
class PipelineConfig:
    name: str = "trajectory_to_env"
    options: PipelineOptions = field(default_factory=PipelineOptions)


@dataclass(frozen=True, slots=True)
class OutputConfig:
    destination: Path | None = None


@dataclass(frozen=True, slots=True)
class GenerateConfig:
    source: SourceConfig
    pipeline: PipelineConfig = field(default_factory=PipelineConfig)
    output: OutputConfig = field(default_factory=OutputConfig)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, with resolved paths: what report.json records as the run's config."""
        options = self.pipeline.options
        destination = self.output.destination
        return {
            "source": {
                "kind": self.source.kind,
                "path": str(self.source.path),
                "format": self.source.format,
                "clones": {key: str(path) for key, path in self.source.clones.items()},
                "tasks": {key: str(path) for key, path in self.source.tasks.items()},
            },
            "pipeline": {
                "name": self.pipeline.name,
                "options": {
                    "families": list(options.families),
                    "limit": options.limit,
                    "jobs": options.jobs,
                    "scan": options.scan,
                    "propose_only": options.propose_only,
                    "platform": options.platform,
                },
            },
            "output": {"destination": None if destination is None else str(destination)},
        }


def load_config(path: Path | str) -> GenerateConfig:
    """Read a YAML config file; relative paths in it resolve against its folder."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = ""
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            where = f" at line {mark.line + 1}, column {mark.column + 1}"
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{path} is not valid YAML{where}: {problem}") from None
    if data is None:
        raise ConfigError(f"{path} is empty")
    return parse_config(data, base_dir=path.resolve().parent)


def parse_config(data: Any, *, base_dir: Path | str, check_clones: bool = True) -> GenerateConfig:
    """Check a config given as a mapping (parsed YAML or a dict built in code); with
    ``check_clones``, each of ``source.clones`` must be a git repository now."""
    base = Path(base_dir)
    top = _mapping(data, None)
    _only(top, None, ("source", "pipeline", "output"))
    if "source" not in top:
        raise ConfigError("missing required key", "source")
    if "pipeline" not in top:
        raise ConfigError("missing required key", "pipeline")
    return GenerateConfig(
        source=_source(top["source"], base, check_clones),
        pipeline=_pipeline(top["pipeline"]),
        output=_output(top.get("output"), base),
    )


def _source(value: Any, base: Path, check_clones: bool) -> SourceConfig:
    source = _mapping(value, "source")
    _only(source, "source", ("kind", "path", "format", "clones", "tasks"))
    kind = _choice(source.get("kind", "trajectory"), "source.kind", SOURCE_KINDS)
    if "path" not in source:
        raise ConfigError("missing required key", "source.path")
    fmt = _choice(source.get("format", "atif"), "source.format", SOURCE_FORMATS)
    clones = _clones(source.get("clones"), base, check_clones)
    return SourceConfig(
        path=_path(source["path"], "source.path", base),
        kind=kind,
        format=fmt,
        clones=clones,
        tasks=_tasks(source.get("tasks"), base, check_clones),
    )


def _tasks(value: Any, base: Path, check: bool) -> dict[str, Path]:
    """``source.tasks``: Harbor task name or recorded path -> the task's folder."""
    if value is None:
        return {}
    found: dict[str, Path] = {}
    for name, folder in _mapping(value, "source.tasks").items():
        key = f"source.tasks[{name!r}]"
        if not isinstance(name, str) or not name.strip():
            raise ConfigError("expected a task's name or its recorded path", key)
        path = _path(folder, key, base)
        if check and not (path / "task.toml").is_file():
            what = "is not a folder" if not path.is_dir() else "has no task.toml"
            raise ConfigError(f"{path} {what}: a Harbor task folder has one", key)
        found[name.strip().rstrip("/")] = path
    return found


def _clones(value: Any, base: Path, check: bool) -> dict[str, Path]:
    if value is None:
        return {}
    clones = _mapping(value, "source.clones")
    found: dict[str, Path] = {}
    for project, local in clones.items():
        key = f"source.clones[{project!r}]"
        name = project.strip()
        if is_remote(name):
            pass
        elif name.startswith("/"):
            name = posixpath.normpath(name)
        else:
            raise ConfigError(
                "expected the project as trajectories record it: the absolute directory the "
                f"sessions ran in, or a git remote URL; got {project!r}",
                key,
            )
        if name in found:
            raise ConfigError(f"the project {name!r} is listed twice", key)
        path = _path(local, key, base)
        if check:
            try:
                open_repository(path)
            except CloneError as exc:
                raise ConfigError(str(exc), key) from None
        found[name] = path
    return found


def _pipeline(value: Any) -> PipelineConfig:
    pipeline = _mapping(value, "pipeline")
    _only(pipeline, "pipeline", ("name", "options"))
    if "name" not in pipeline:
        raise ConfigError("missing required key", "pipeline.name")
    name = _choice(pipeline["name"], "pipeline.name", PIPELINES)
    raw = pipeline.get("options")
    options = _options({} if raw is None else _mapping(raw, "pipeline.options"))
    return PipelineConfig(name=name, options=options)


def _options(options: Mapping[str, Any]) -> PipelineOptions:
    prefix = "pipeline.options"
    _only(options, prefix, ("families", "limit", "jobs", "scan", "propose_only", "platform"))
    defaults = PipelineOptions()
    families = defaults.families
    if "families" in options:
        families = _families(options["families"], f"{prefix}.families")
    limit = options.get("limit")
    if limit is not None:
        limit = _positive_int(limit, f"{prefix}.limit")
    jobs = _positive_int(options.get("jobs", defaults.jobs), f"{prefix}.jobs")
    platform = options.get("platform", defaults.platform)
    if not isinstance(platform, str) or not _PLATFORM.match(platform):
        raise ConfigError(
            f"expected a platform such as 'linux/amd64' or 'linux/arm64', got {platform!r}",
            f"{prefix}.platform",
        )
    return PipelineOptions(
        families=families,
        limit=limit,
        jobs=jobs,
        scan=_bool(options.get("scan", defaults.scan), f"{prefix}.scan"),
        propose_only=_bool(
            options.get("propose_only", defaults.propose_only), f"{prefix}.propose_only"
        ),
        platform=platform,
    )


def _families(value: Any, key: str) -> tuple[str, ...]:
    if isinstance(value, str):  # `families: repair` is a common slip for `[repair]`
        value = [value]
    if not isinstance(value, list) or not value:
        raise ConfigError(f"expected a non-empty list of families, got {value!r}", key)
    seen: list[str] = []
    for i, family in enumerate(value):
        where = f"{key}[{i}]"
        if not isinstance(family, str):
            raise ConfigError(f"expected a family name, got {family!r}", where)
        if family not in KNOWN_FAMILIES:
            raise ConfigError(
                f"unknown family {family!r}; expected one of {', '.join(KNOWN_FAMILIES)}", where
            )
        if family not in AVAILABLE_FAMILIES:
            raise ConfigError(
                f"family {family!r} is not available in this build; "
                f"available: {', '.join(AVAILABLE_FAMILIES)}",
                where,
            )
        if family in seen:
            raise ConfigError(f"family {family!r} is listed twice", where)
        seen.append(family)
    return tuple(seen)


def _output(value: Any, base: Path) -> OutputConfig:
    if value is None:
        return OutputConfig()
    output = _mapping(value, "output")
    _only(output, "output", ("destination",))
    destination = output.get("destination")
    if destination is None:
        return OutputConfig()
    return OutputConfig(destination=_path(destination, "output.destination", base))


# -- small checkers ----------------------------------------------------------------------------


def _mapping(value: Any, key: str | None) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        what = "the config" if key is None else "this section"
        raise ConfigError(f"expected {what} to be a mapping, got {_kind(value)}", key)
    for name in value:
        if not isinstance(name, str):
            raise ConfigError(f"keys must be strings, got {name!r}", key)
    return value


def _only(section: Mapping[str, Any], key: str | None, allowed: tuple[str, ...]) -> None:
    for name in section:
        if name not in allowed:
            where = f"{key}.{name}" if key else name
            raise ConfigError(f"unknown key; expected one of {', '.join(allowed)}", where)


def _choice(value: Any, key: str, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ConfigError(f"expected one of {', '.join(allowed)}, got {value!r}", key)
    return value


def _positive_int(value: Any, key: str) -> int:
    # bool is an int in Python; `jobs: true` is a mistake, not 1.
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"expected a whole number, got {_kind(value)} {value!r}", key)
    if value < 1:
        raise ConfigError(f"expected a number of at least 1, got {value}", key)
    return value


def _bool(value: Any, key: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"expected true or false, got {_kind(value)} {value!r}", key)
    return value


def _path(value: Any, key: str, base: Path) -> Path:
    if isinstance(value, Path):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"expected a path, got {_kind(value)} {value!r}", key)
    if "://" in value:
        raise ConfigError(f"only local paths are supported, got {value!r}", key)
    path = Path(value).expanduser()
    return path if path.is_absolute() else (base / path).resolve()


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a mapping",
    }.get(type(value), type(value).__name__)
