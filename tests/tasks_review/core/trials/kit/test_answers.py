"""A qa task's answer file judged (kit/answers.py) and graded in place (kit/answer_grade.py):
one answer, exactly; every plausible answer, a non-answer or a link scores 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .helpers import KIT, load

answers = load("answers")

NUMERIC = {"type": "numeric", "value": "3", "tolerance": 0}
ROUNDED = {"type": "numeric", "value": "161.30", "tolerance": 0.005}
EXACT = {"type": "exact", "value": "Globex Corp", "tolerance": 0}
SET = {"type": "set", "value": ["Acme", "Globex"], "tolerance": 0}


@pytest.mark.parametrize(
    "expected, data",
    [
        (NUMERIC, b"3\n"),
        (NUMERIC, b"  3.0 "),
        (NUMERIC, b"\xef\xbb\xbf3"),  # a byte-order mark
        (ROUNDED, b"161.3"),
        (ROUNDED, b"161.304"),
        ({"type": "numeric", "value": "1234567", "tolerance": 0}, b"1,234,567\n"),
        (EXACT, b"globex  corp.\n"),
        (EXACT, b'"Globex Corp"'),
        (SET, b"Globex\nAcme\n"),
        (SET, b"acme, globex"),
        (SET, b"Acme\nAcme\nGlobex"),
        ({"type": "set", "value": ["1", "2.50"], "tolerance": 0}, b"2.5\n1.0\n"),
    ],
)
def test_one_right_answer_scores_one(expected, data):
    judged = answers.judge(data, expected)
    assert (judged.reward, judged.reasons) == (1.0, ())


@pytest.mark.parametrize(
    "expected, data, why",
    [
        (NUMERIC, None, "no answer file"),
        (NUMERIC, b"", "empty"),
        (NUMERIC, b"\n \n", "empty"),
        (NUMERIC, b"I don't know", "not a single number"),
        (NUMERIC, b"4", "not within"),
        (NUMERIC, b"3 orders", "not a single number"),
        (NUMERIC, b"2\n3\n4\n", "not a single number"),  # every plausible answer
        (NUMERIC, b"0, 1, 2, 3, 4, 5", "not a single number"),
        (NUMERIC, b"3 or 4", "not a single number"),
        (NUMERIC, b"nan", "not a single number"),
        (NUMERIC, b"\xff\xfe3", "not UTF-8"),
        (NUMERIC, b"3" * (70 << 10), "more than any answer"),
        (ROUNDED, b"161.31", "not within"),
        (EXACT, b"Globex Corp\nAcme\nInitech", "not the expected"),
        (EXACT, b"Globex", "not the expected"),
        (EXACT, b"unknown", "not the expected"),
        (SET, b"Acme", "1 missing"),
        (SET, b"Acme\nGlobex\nInitech", "1 extra"),  # a superset
        (SET, b"Acme Globex", "items differ"),
    ],
)
def test_anything_but_one_right_answer_scores_zero(expected, data, why):
    judged = answers.judge(data, expected)
    assert judged.reward == 0.0 and any(why in r for r in judged.reasons), judged.reasons


def test_the_oracle_writes_the_canonical_answer_which_scores_one():
    for expected in (NUMERIC, ROUNDED, EXACT, SET):
        assert answers.judge(answers.canonical(expected).encode(), expected).reward == 1.0
    assert answers.canonical(SET) == "Acme\nGlobex\n"


def _grade(tmp_path, expected, place):
    project = tmp_path / "app"
    project.mkdir(parents=True)
    place(project)
    config = tmp_path / "grading.json"
    config.write_text(
        json.dumps({"project": str(project), "answer_file": "answer.txt", "expected": expected})
    )
    verifier = tmp_path / "verifier"
    verifier.mkdir()
    (verifier / "reward.json").write_text('{"reward": 1}')
    env = {**os.environ, "TRAJ2ENV_VERIFIER_DIR": str(verifier)}
    subprocess.run(
        [sys.executable, "-I", str(KIT / "answer_grade.py"), str(config)],
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )
    verdict = json.loads((verifier / "traj2env" / "verdict.json").read_text())
    text = (verifier / "reward.txt").read_text()
    # Harbor reads reward.json first: the planted one is gone, the grader's says the same.
    assert json.loads((verifier / "reward.json").read_text()) == {"reward": float(text)}
    return text, verdict


def test_the_grader_reads_the_answer_file_and_writes_the_reward(tmp_path):
    text, verdict = _grade(tmp_path, NUMERIC, lambda p: (p / "answer.txt").write_text("3\n"))
    assert text == "1\n" and verdict["reward"] == 1.0 and verdict["answer"] == "3"


def test_the_grader_follows_no_link_and_reads_no_folder(tmp_path):
    def link(project):
        (project / "data.txt").write_text("3\n")
        (project / "answer.txt").symlink_to(project / "data.txt")

    text, verdict = _grade(tmp_path / "a", NUMERIC, link)
    assert text == "0\n" and verdict["reasons"] == ["no answer file"]
    text, _ = _grade(tmp_path / "b", NUMERIC, lambda p: (p / "answer.txt").mkdir())
    assert text == "0\n"
