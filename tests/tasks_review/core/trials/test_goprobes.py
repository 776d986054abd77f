"""Go's hidden probes without Docker: the call finder's report read and typed, inputs drawn only
where Go's parameters take them, and the test file the runner generates and builds through an
overlay (the Go side itself runs in the Go image: test_goprobes_docker.py)."""

from __future__ import annotations

import json
import random
import re
import tomllib
from pathlib import Path

from tasks_review.core.trials.goprobes import fits, fits_call, read_calls
from tasks_review.core.trials.kit import probe_runner_go, probing
from tasks_review.core.trials.probeinputs import derive
from tasks_review.core.trials.probeset import record_grading
from tasks_review.core.trials.taskdir import read_task

from .helpers import FAKE_BASE, GO_FIX, GO_START, write

INT = {"kind": "int", "bits": 64}
INT8 = {"kind": "int", "bits": 8}
UINT16 = {"kind": "uint", "bits": 16}
FLOAT = {"kind": "float", "bits": 64}
FLOAT32 = {"kind": "float", "bits": 32}
STRING = {"kind": "string"}


def finder_report(*calls: dict, **counts: int) -> bytes:
    """A report as probekit/gocalls prints it."""
    return json.dumps({"calls": list(calls), **counts}).encode()


def go_call(function: str, params: list, args: list, tests=("example.com/calc/calc.TestX",)):
    return {
        "module": "calc",
        "package": "example.com/calc/calc",
        "function": function,
        "params": params,
        "variadic": False,
        "args": args,
        "tests": list(tests),
    }


def test_the_call_finders_calls_read_as_the_tracers_record_theirs_typed_as_go_takes_them():
    report = finder_report(
        go_call("Mul", [INT, INT], [2, 3]),
        # The finder's JSON writes 100.0 as 100: a float parameter's value is a float here.
        go_call("ToF", [FLOAT], [100]),
        go_call("Scale", [{"kind": "slice", "elem": FLOAT}], [[1, 2.5]]),
        go_call("Big", [INT], [{"$int": "9223372036854775807"}]),
        found=5,
    )
    calls, why = read_calls(report)
    assert why == ""
    assert [(c["module"], c["function"], c["args"]) for c in calls] == [
        ("calc", "Mul", [2, 3]),
        ("calc", "ToF", [100.0]),
        ("calc", "Scale", [[1.0, 2.5]]),
        ("calc", "Big", [{"$int": "9223372036854775807"}]),
    ]
    assert type(calls[1]["args"][0]) is float
    # What derive and the grader's reports need: no keyword arguments, the test's exact id.
    assert all(c["kwargs"] == {} and c["tests"] == ["example.com/calc/calc.TestX"] for c in calls)


def test_a_call_whose_arguments_do_not_fit_its_parameters_is_dropped():
    report = finder_report(
        go_call("Small", [INT8], [300]),
        go_call("Count", [UINT16], [-1]),
        go_call("Two", [INT, INT], [1]),
        go_call("Ok", [INT8], [-128]),
    )
    calls, _ = read_calls(report)
    assert [c["function"] for c in calls] == ["Ok"]


def test_go_parameters_take_only_values_of_their_type_and_range():
    assert fits(INT8, 127) and not fits(INT8, 128) and fits(INT8, -128) and not fits(INT8, -129)
    assert fits(UINT16, 0) and fits(UINT16, 65535) and not fits(UINT16, -1)
    assert fits({"kind": "uint", "bits": 64}, {"$int": str(2**64 - 1)})
    assert not fits({"kind": "uint", "bits": 64}, {"$int": str(2**64)})
    assert not fits(INT, True) and not fits(INT, 2.0) and fits(FLOAT, 2) and fits(FLOAT, 2.5)
    assert not fits(FLOAT32, 1e39) and fits(FLOAT, 1e39) and not fits(FLOAT, float("inf"))
    assert fits({"kind": "bytes"}, "abc") and fits({"kind": "bytes"}, {"$bytes": "/wE="})
    pair = {"kind": "struct", "fields": [["A", INT], ["B", INT]]}
    assert fits(pair, {"A": 1}) and not fits(pair, {"C": 1}) and not fits(pair, {"A": "x"})
    by_name = {"kind": "map", "key": STRING, "elem": INT}
    assert fits(by_name, {"a": 1}) and fits(by_name, None) and not fits(by_name, {"a": 1.5})
    by_number = {"kind": "map", "key": INT, "elem": STRING}
    assert fits(by_number, {"$dict": [[1, "a"]]}) and not fits(by_number, {"1": "a"})
    assert fits({"kind": "array", "len": 2, "elem": INT}, [1, 2])
    assert not fits({"kind": "array", "len": 2, "elem": INT}, [1, 2, 3])


def test_inputs_drawn_for_go_fit_their_parameters_and_ints_stay_ints():
    calls, _ = read_calls(
        finder_report(
            go_call("Small", [INT8, UINT16], [-3, 7]),
            go_call("ToF", [FLOAT32], [37.5]),
            go_call("Words", [STRING, {"kind": "slice", "elem": INT}], ["a b", [1, 2]]),
        )
    )
    inputs = derive(calls, random.Random(5), fits=fits_call)
    params = {c["function"]: c["params"] for c in calls}
    assert {i["function"] for i in inputs if i["derived"]} == {"Small", "ToF", "Words"}
    for item in inputs:
        kinds = params[item["function"]]
        assert all(fits(k, v) for k, v in zip(kinds, item["args"], strict=True)), item
    small = [i["args"] for i in inputs if i["function"] == "Small"]
    assert all(type(a) is int and type(b) is int and b >= 0 for a, b in small)
    assert any(a not in (-3, 3, 0) for a, _b in small)  # drawn, not only the edge values
    # The draws are kept out of probes.json's inputs: only what the runner needs.
    assert all(
        set(i) == {"module", "function", "args", "kwargs", "tests", "derived"} for i in inputs
    )


def test_a_go_package_whose_tests_call_nothing_readable_is_check_only_and_says_why(tmp_path):
    from tasks_review.core.trials.probeset import ProbeSet

    calls, why = read_calls(finder_report(found=4, unreadable=3, not_plain=1))
    assert calls == []
    assert "of 4 call(s) to them, 3 take parameters that are not plain data" in why
    assert "1 pass arguments that could not be read" in why
    bare = read_calls(finder_report(go_call("New", [], []), found=1))[1]
    assert "of 1 call(s) to them" in bare and "1 take no argument" in bare
    task_dir = write(
        tmp_path / "go",
        FAKE_BASE,
        GO_START,
        GO_FIX,
        command="go test ./...",
        language="go",
        runner="go",
    )
    assert read_task(task_dir).language == "go"
    probes = ProbeSet.none(why)
    record_grading(task_dir, probes)
    verifier = tomllib.loads((task_dir / "task.toml").read_text())["metadata"]["verifier"]
    assert verifier["grading"] == "check-only" and verifier["why"] == why
    no_call = read_calls(finder_report(found=0))[1]
    assert "call none of the project's package-level functions" in no_call
    assert "call(s) to them" not in no_call


# -- the runner: the generated test and its overlay -----------------------------------------------


def template() -> str:
    return (Path(probe_runner_go.HERE) / probe_runner_go.TEMPLATE).read_text(encoding="utf-8")


def test_the_generated_test_is_the_runner_under_the_packages_name_with_a_table_of_functions():
    source = probe_runner_go.runner_source(template(), "calc", {"Mul", "Add", "lower"})
    assert re.findall(r"^package \w+$", source, re.M) == ["package calc"]
    table = source[source.index("var traj2envFuncs") :]
    assert table == (
        "var traj2envFuncs = map[string]interface{}{\n"
        '\t"Add": Add,\n\t"Mul": Mul,\n\t"lower": lower,\n}\n'
    )
    assert "func TestTraj2envProbe(t *traj2envTesting.T)" in source


def test_the_runner_template_clashes_with_no_name_of_the_package_and_builds_on_old_go():
    text = template()
    code = "\n".join(line for line in text.splitlines() if not line.startswith("//"))
    imports = re.findall(r'^\t(\w+) "[\w/]+"$', code, re.M)
    declared = re.findall(r"^(?:func|type|var) (\w+)", code, re.M)
    block = code[code.index("const (") : code.index(")", code.index("const ("))]
    constants = re.findall(r"^\t(\w+)\s+= ", block, re.M)
    assert imports and declared and constants
    names = set(imports + declared + constants) - {"TestTraj2envProbe"}
    assert all(name.startswith("traj2env") for name in names), names
    # Go 1.16's syntax: no `any`, no type parameters (a go.mod may name an old version).
    assert not re.search(r"\bany\b", code) and "[T " not in code


def test_the_overlay_adds_the_generated_test_and_hides_the_packages_own_without_writing_there(
    tmp_path,
):
    package = tmp_path / "app" / "calc"
    package.mkdir(parents=True)
    (package / "calc.go").write_text("package calc\n")
    (package / "calc_test.go").write_text("package calc\n")
    (package / "ext_test.go").write_text("package calc_test\n")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    before = sorted(p.name for p in package.iterdir())
    overlay = probe_runner_go.write_overlay(str(package), str(scratch), "package calc\n")
    replace = json.loads(Path(overlay).read_text())["Replace"]
    generated = str(package / "zz_traj2env_probe_test.go")
    assert replace == {
        generated: str(scratch / "probe_test.go"),
        str(package / "calc_test.go"): "",
        str(package / "ext_test.go"): "",
    }
    assert (scratch / "probe_test.go").read_text() == "package calc\n"
    assert sorted(p.name for p in package.iterdir()) == before


def test_the_runner_names_the_packages_functions_but_not_methods_generics_or_ignored_files(
    tmp_path,
):
    (tmp_path / "calc.go").write_text(
        "// Package calc adds.\npackage calc\n\nfunc Add(a, b int) int { return a + b }\n"
        "func (c Calc) Sub(a int) int { return a }\nfunc Gen[T any](x T) T { return x }\n"
        "func lower(x int) int { return x }\nfunc init() {}\n"
    )
    (tmp_path / "more.go").write_text("package calc\n\nfunc Mul(a, b int) int { return a * b }\n")
    (tmp_path / "gen.go").write_text("//go:build ignore\n\npackage main\n\nfunc main() {}\n")
    (tmp_path / "calc_test.go").write_text("package calc\n\nfunc helper() {}\n")
    assert probe_runner_go.package_functions(str(tmp_path)) == ("calc", {"Add", "Mul", "lower"})


def test_a_go_probe_run_may_take_a_build_per_package_and_python_s_limit_is_unchanged():
    calls = [{"id": f"p{n}", "module": "a" if n % 2 else "b", "function": "F"} for n in range(10)]
    python = {"language": "python", "timeout": 1.0, "calls": calls}
    assert probing.time_limit(python) == 20.0
    go = {**python, "language": "go"}
    assert probing.time_limit(go) == 20.0 + 2 * probe_runner_go.BUILD_SECONDS
    asked = probing.request(
        {
            "language": "go",
            "probes": [
                {
                    "id": "p0",
                    "module": "calc",
                    "function": "Mul",
                    "args": [1, 2],
                    "expected": {"returns": 2},
                }
            ],
        },
        "/app",
    )
    assert asked["language"] == "go" and "expected" not in json.dumps(asked)
