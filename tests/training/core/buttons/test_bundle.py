"""Embedding our own modules in a standalone script: same code, standard library only."""

from __future__ import annotations

import ast
import doctest
import importlib
import subprocess
import sys

import pytest

from training.core.buttons.bundle import Bundle, BundleError, bundle
from training.core.buttons.claude import EXTRACTED
from training.core.catalogue import catalogue


def run_script(python3: str, tmp_path, body: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(body)
    return subprocess.run(
        [python3, "-I", str(script)], capture_output=True, text=True, cwd=tmp_path, check=False
    )


def test_an_embedded_module_runs_where_the_project_cannot_be_imported(python3, tmp_path):
    embedded = bundle(["training.core.globs"])
    outside = run_script(python3, tmp_path, "import training")
    assert outside.returncode == 1 and "No module named 'training'" in outside.stderr
    done = run_script(
        python3,
        tmp_path,
        embedded.render()
        + "\ninstall()\nfrom training.core.globs import glob_match\n"
        + "print(glob_match('tests/**', 'tests/unit/test_a.py'), glob_match('*.py', 'a/b.txt'))\n",
    )
    assert done.stdout == "True False\n", done.stderr


def test_whole_modules_are_verbatim_and_parents_are_empty_packages():
    embedded = bundle(["training.core.globs"])
    assert set(embedded.sources) == {"training.core.globs"}
    import training.core.globs as globs

    assert embedded.sources["training.core.globs"] == open(globs.__file__).read()
    assert embedded.packages == {"training", "training.core"}


def test_an_extracted_module_keeps_only_the_definitions_used_with_their_own_imports():
    embedded = bundle(["training.core.buttons.rules"], extract={name: () for name in EXTRACTED})
    spec = embedded.sources["training.core.spec"]
    assert "class ForbiddenRule" in spec and "class ActionKind(StrEnum)" in spec
    assert "jsonschema" not in spec and "def load_spec" not in spec
    catalogue = embedded.sources["training.core.forbidden"]  # a package: its detectors' modules
    assert "CATALOGUE" in catalogue
    for module, detector in (
        ("push", "_force_push"),
        ("tampering", "_tamper_with_tests"),
        ("edits", "_edit_unread_file"),
    ):
        assert f"def {detector}(" in embedded.sources[f"training.core.forbidden.{module}"]
    credentials = embedded.sources["training.core.forbidden.credentials"]
    assert "@functools.lru_cache(maxsize=4096)\ndef is_credential_file" in credentials
    assert "def read_targets(" in embedded.sources["training.core.facts.shell"]
    for part in ("training.core.facts.model", "training.core.facts.build"):
        facts = embedded.sources[part]
        assert "def build_facts(" not in facts and "def facts_of(" not in facts
        assert "from trajectories.core.replay import" not in facts  # the package needs unidiff
    for name, source in embedded.sources.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                top = node.module.split(".")[0]
                assert top in sys.stdlib_module_names or top in ("training", "trajectories"), (
                    f"{name} imports {node.module}"
                )


def test_the_claude_code_hooks_carry_the_replays_shell_reading_and_effect_walker():
    embedded = bundle(["training.core.buttons.runtime"], extract={name: () for name in EXTRACTED})
    assert {
        "trajectories.core.replay.shell",
        "trajectories.core.replay.effects.walk",
        "trajectories.core.replay.tools",
        "training.core.buttons.rules",
    } <= set(embedded.sources)
    assert "trajectories.core.replay.engine" not in embedded.sources


def test_a_module_that_needs_a_third_party_package_is_refused_at_generation_time():
    with pytest.raises(BundleError, match="imports Draft202012Validator from jsonschema, which"):
        bundle(["training.core.spec"])


def test_extracting_a_name_the_module_does_not_define_is_refused():
    with pytest.raises(BundleError, match="training.core.spec has no top-level 'load_specs'"):
        bundle([], extract={"training.core.spec": ("load_specs",)})


def test_embedded_text_reads_back_exactly_whatever_quotes_and_backslashes_it_holds():
    tricky = "s = '''a\\\\b'''\nt = \"\"\"x\"\"\"\nu = r'\\d+'  # ends in quotes''"
    rendered = Bundle({"tricky": tricky}, frozenset()).render()
    namespace: dict = {}
    exec(rendered, namespace)
    assert namespace["_SOURCES"] == {"tricky": tricky}


def test_the_same_spec_gives_the_same_script_byte_for_byte():
    from training.core.buttons import claude_code_hook, git_hooks

    spec = catalogue()["safe-dependency-update"]
    assert claude_code_hook(spec).script == claude_code_hook(spec).script
    assert git_hooks(spec) == git_hooks(spec)


@pytest.mark.parametrize("module", ["words", "plain", "prompt", "bundle", "runtime"])
def test_the_examples_opening_each_docstring_run_as_written(module):
    result = doctest.testmod(
        importlib.import_module(f"training.core.buttons.{module}"), optionflags=doctest.ELLIPSIS
    )
    assert result.attempted and not result.failed
