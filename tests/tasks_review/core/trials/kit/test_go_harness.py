"""The go test harness's pieces without Go: its reading of `go test` arguments, the copies it
writes into a test file's overlay, and the command it runs (the whole runner is exercised in
Docker by test_go_and_services.py)."""

from __future__ import annotations

import json
import re

from .helpers import load

go = load("go_harness")

SOURCE = """package calc

import "testing"

// TestAdd checks Add. A brace in a comment: }
func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Fatalf("want 5, got %d: }", got)
	}
	_ = `raw } string`
	_ = '}'
}

func TestMul(tt *testing.T) {
	tt.Run("sub", func(t *testing.T) { t.Log("{") })
}

func testHelper(t *testing.T) {}

func Testlowercase(t *testing.T) {}
"""


def test_flags_packages_and_test_binary_arguments_are_told_apart():
    flags, packages, rest = go.split_args(
        ["-v", "-run", "TestAdd", "./...", "-count=1", "-tags", "integration", "-args", "-x"]
    )
    assert [(n, v) for n, v, _ in flags] == [
        ("v", None),
        ("run", "TestAdd"),
        ("count", "1"),
        ("tags", "integration"),
    ]
    assert packages == ["./..."] and rest == ["-x"]


def test_only_top_level_test_functions_are_listed_and_run_filters_them(tmp_path):
    path = tmp_path / "calc_test.go"
    path.write_text(SOURCE)
    listed = [(str(tmp_path), "example.com/calc", [str(path)])]
    assert [t["id"] for t in go.inventory(listed, None)] == [
        "example.com/calc.TestAdd",
        "example.com/calc.TestMul",
    ]
    assert [t["func"] for t in go.inventory(listed, re.compile("Mul"))] == ["TestMul"]


def test_a_verbatim_copy_is_the_whole_function_under_its_new_name():
    made = go.copy_source(SOURCE, "TestAdd", "TestAdd_qwerty", fail=False)
    assert made.startswith("\nfunc TestAdd_qwerty(t *testing.T) {\n\tif got := Add(2, 3)")
    assert made.rstrip().endswith("_ = '}'\n}")  # braces in strings and runes do not end it
    assert "TestMul" not in made


def test_a_falsified_copy_fails_first_with_the_tests_own_parameter():
    made = go.copy_source(SOURCE, "TestMul", "TestMul_asdfgh", fail=True)
    assert made.startswith('\nfunc TestMul_asdfgh(tt *testing.T) {\n\ttt.Errorf("traj2env')
    assert 'tt.Run("sub", func(t *testing.T) { t.Log("{") })' in made
    assert go.copy_source(SOURCE, "TestNone", "TestNone_x", fail=True) is None


def test_the_overlay_replaces_the_test_file_and_the_wrapper_removes_it_before_the_run(tmp_path):
    package = tmp_path / "calc"
    package.mkdir()
    (package / "calc_test.go").write_text(SOURCE)
    listed = [(str(package), "example.com/calc", [str(package / "calc_test.go")])]
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    plan = [
        {"of": "example.com/calc.TestAdd", "fail": False, "name": "TestAdd_a", "func": "TestAdd"},
        {"of": "example.com/calc.TestAdd", "fail": True, "name": "TestAdd_b", "func": "TestAdd"},
    ]
    for entry in plan:
        entry["file"] = str(package / "calc_test.go")
    overlay, wrapper, built = go.write_overlay(listed, plan, str(scratch))
    assert built == {
        "TestAdd_a": {"of": "example.com/calc.TestAdd", "fail": False},
        "TestAdd_b": {"of": "example.com/calc.TestAdd", "fail": True},
    }
    (replaced,) = json.loads(open(overlay).read())["Replace"].items()
    assert replaced[0] == str(package / "calc_test.go")
    text = open(replaced[1]).read()
    assert text.startswith(SOURCE) and "func TestAdd_a(" in text and "func TestAdd_b(" in text
    assert (package / "calc_test.go").read_text() == SOURCE  # the file on disk is untouched
    script = open(wrapper).read()
    assert f"{package}) rm -rf {scratch}/0 ;;" in script and script.endswith('exec "$@"\n')


def test_the_command_adds_json_overlay_and_exec_and_keeps_the_checks_own_selection():
    flags, packages, rest = go.split_args(["-failfast", "-run", "TestAdd", "-v", "./..."])
    words = go.rewritten(flags, packages, rest, "/k/o.json", "/k/exec.sh", {"TestAdd_q"})
    assert words[:3] == ["-json", "-overlay=/k/o.json", "-exec=/k/exec.sh"]
    assert "-failfast" not in words  # the copies made to fail would stop the run
    assert "-run=(?:TestAdd)|^(?:TestAdd_q)$" in words
    assert words[-2:] == ["-v", "./..."]
