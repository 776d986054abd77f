"""The build and extend families on hand-built sessions: shapes.py written from an empty folder,
then a triangle added after the tests passed, through the real LLM client and a recorded-answer
server."""

from __future__ import annotations

import pytest

from tasks_review.core.families.window import interface
from tasks_review.core.mining import DropReason
from tests.llm_server import Reply, recorded

from .helpers import (
    BUILD_ANSWER,
    BUILD_REQUEST,
    EXTEND_ANSWER,
    EXTEND_REQUEST,
    SHAPES,
    TEST_SHAPES,
    TEST_TRIANGLE,
    UNITTEST,
    FamilySession,
    shapes_session,
)


def answering(build=BUILD_ANSWER, extend=EXTEND_ANSWER):
    return recorded(
        [
            ("build_instruction", BUILD_REQUEST, build),
            ("extend_instruction", EXTEND_REQUEST, extend),
        ]
    )


def texts(files, blobs):
    return {p: blobs.get(s).decode() for p, s in files.items()}


def test_a_project_written_from_an_empty_folder_becomes_a_build_candidate(serve):
    server, client = serve(answering())
    found = shapes_session(extend=False).mine_families(("build",), client)
    candidate = found.only
    assert candidate.family == "build" and candidate.task_command == UNITTEST
    assert candidate.start_files == {}  # the agent began with an empty folder
    assert texts(candidate.ref_files, found.blobs) == {
        "shapes.py": SHAPES,
        "tests/test_shapes.py": TEST_SHAPES,
    }
    facts = candidate.family_facts
    assert facts["hidden_tests"] == ["tests/test_shapes.py"] and facts["reward"] == "fraction"
    assert facts["interface"] == ["shapes.py: circle_area, rectangle_area"]
    assert candidate.test_paths == ("tests/test_shapes.py",)
    text = candidate.instruction
    assert text.startswith("# Area functions for shapes\n") and "It is empty" in text
    assert "`circle_area(radius)`" in text and UNITTEST in text
    assert "share of those tests that pass" in text
    assert "assertAlmostEqual" not in text  # no test code
    (sent,) = server.of("build_instruction")
    prompt = sent["messages"][1]["content"]
    assert BUILD_REQUEST in prompt and "def test_unit_circle" in prompt  # the model reads them
    assert "/repo" not in prompt and "shapes.py: circle_area, rectangle_area" in prompt
    assert candidate.llm["prompt_tokens"] == 1200


def test_the_next_request_after_passing_tests_becomes_an_extend_candidate(serve):
    server, client = serve(answering())
    found = shapes_session().mine_families(("extend",), client)
    candidate = found.only
    assert candidate.family == "extend"
    # The start is the working state when the request came; the new test file is hidden.
    assert texts(candidate.start_files, found.blobs) == {
        "shapes.py": SHAPES,
        "tests/test_shapes.py": TEST_SHAPES,
    }
    assert texts(candidate.ref_files, found.blobs)["tests/test_triangle.py"] == TEST_TRIANGLE
    assert candidate.family_facts["hidden_tests"] == ["tests/test_triangle.py"]
    assert candidate.family_facts["working_check"] == UNITTEST
    assert candidate.modified == ("shapes.py",) and candidate.added == ("tests/test_triangle.py",)
    assert "triangle_area(base, height)" in candidate.instruction
    assert "0 if any test that passes now stops passing" in candidate.instruction
    assert len(server.of("extend_instruction")) == 1 and not server.of("build_instruction")


def test_both_families_on_one_session_ask_one_question_each_and_reruns_ask_none(serve):
    from groundwork.core.llm import LlmClient

    server, client = serve(answering())
    first = shapes_session().mine_families(("build", "extend"), client)
    assert [c.family for c in first.candidates] == ["build", "extend"] and not first.drops
    again = shapes_session().mine_families(("build", "extend"), LlmClient(client.config))
    assert len(server.requests) == 2
    assert [c.key for c in again.candidates] == [c.key for c in first.candidates]
    assert all(c.llm["cached"] for c in again.candidates)


def test_a_session_whose_tests_do_not_pass_at_the_end_has_no_build(serve):
    server, client = serve(answering())
    session = shapes_session(extend=False).run(UNITTEST, fail=True, output="FAILED (errors=1)")
    assert session.mine_families(("build", "extend"), client).candidates == []
    assert server.requests == []


def test_a_follow_up_without_passing_tests_before_it_is_no_extend(serve):
    server, client = serve(answering())
    session = (
        FamilySession()
        .user(BUILD_REQUEST)
        .write("shapes.py", SHAPES)
        .write("tests/test_shapes.py", TEST_SHAPES)
        .user(EXTEND_REQUEST)
        .write("tests/test_triangle.py", TEST_TRIANGLE)
        .run(UNITTEST, output="OK")
    )
    assert session.mine_families(("extend",), client).candidates == []
    assert server.requests == []


def test_a_feature_without_new_tests_drops_with_no_new_tests(serve):
    server, client = serve(answering())
    session = (
        shapes_session(extend=False)
        .user(EXTEND_REQUEST)
        .edit("shapes.py", "    return width * height\n", "    return height * width\n")
        .run(UNITTEST, output="OK")
    )
    drop = session.mine_families(("extend",), client).dropped
    assert drop.reason is DropReason.NO_NEW_TESTS and "shapes.py" in drop.detail
    assert (drop.family, drop.stage) == ("extend", "mine") and server.requests == []


def test_a_check_that_reports_no_single_tests_drops_before_any_call(serve):
    server, client = serve(answering())
    session = (
        FamilySession()
        .user(BUILD_REQUEST)
        .write("shapes.py", SHAPES)
        .write("tests/test_shapes.py", TEST_SHAPES)
        .run("python3 tests/test_shapes.py", output="OK")
    )
    found = session.mine_families(("build",), client)
    if found.drops:  # the replay may not call a script run a test check at all
        assert found.dropped.reason is DropReason.CHECK_NOT_STRUCTURED
    assert found.candidates == [] and server.requests == []


@pytest.mark.parametrize(
    "change, reason, fragment",
    [
        (
            {"usable": False, "reason": "the requests say nothing"},
            DropReason.LLM_DECLINED,
            "nothing",
        ),
        (
            {"instruction": "In `shapes.py`: self.assertEqual(rectangle_area(3, 4), 12)"},
            DropReason.INSTRUCTION_LEAKS_FIX,
            "assertEqual(rectangle_area(3, 4), 12)",
        ),
        (
            {"instruction": "Write the geometry helpers the user wants."},
            DropReason.INSTRUCTION_MISSES_INTERFACE,
            "circle_area",
        ),
    ],
)
def test_an_instruction_that_is_declined_leaks_or_misses_the_interface_drops(
    serve, change, reason, fragment
):
    _, client = serve(answering(build={**BUILD_ANSWER, **change}))
    drop = shapes_session(extend=False).mine_families(("build",), client).dropped
    assert drop.reason is reason and fragment in drop.detail, drop.detail
    assert drop.llm["prompt_tokens"] == 1200


def test_a_model_that_times_out_drops_that_candidate_and_the_next_goes_on(serve):
    slow = Reply(content="{}", delay=3.0)
    _, client = serve(answering(build=slow), timeout=1.0)
    found = shapes_session().mine_families(("build", "extend"), client)
    assert [d.reason for d in found.drops] == [DropReason.LLM_TIMEOUT]
    assert [c.family for c in found.candidates] == ["extend"]


def test_the_interface_is_what_the_tests_import_from_the_project():
    py = {"tests/test_x.py": b"import calc\nfrom pkg.ops import add, mul\nfrom os import path\n"}
    assert interface(py, ["calc.py", "pkg/ops.py", "pkg/__init__.py"]) == [
        "calc.py",
        "pkg/ops.py: add, mul",
    ]
    js = {
        "test/units.test.js": b"const { toKiB, toMiB } = require('../src/units');\n"
        b"import fmt from '../src/fmt.js';\n"
    }
    assert interface(js, ["src/units.js", "src/fmt.js"]) == [
        "src/fmt.js: fmt",
        "src/units.js: toKiB, toMiB",
    ]


def test_naming_the_interface_is_no_leak_even_where_a_test_lists_the_names_line_by_line(serve):
    listed = TEST_SHAPES.replace(
        "from shapes import circle_area, rectangle_area",
        "from shapes import (\n    circle_area,\n    rectangle_area,\n)",
    )
    names = {**BUILD_ANSWER, "instruction": "Write `shapes.py` with circle_area, rectangle_area."}
    _, client = serve(answering(build=names))
    session = (
        FamilySession()
        .user(BUILD_REQUEST)
        .write("shapes.py", SHAPES)
        .write("tests/test_shapes.py", listed)
        .run(UNITTEST, output="OK")
    )
    candidate = session.mine_families(("build",), client).only
    assert "circle_area, rectangle_area." in candidate.instruction
