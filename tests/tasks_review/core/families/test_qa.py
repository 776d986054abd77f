"""The qa family on hand-built sessions: a question over a CSV the agent answered, through the
real LLM client and a recorded-answer server on loopback."""

from __future__ import annotations

import json

import pytest

from groundwork.core.llm import LlmClient
from tasks_review.core.mining import DropReason
from tests.llm_server import Reply, recorded

from .helpers import QA_ANSWER, QA_MARKER, SALES_CSV, sales_question


def answering(answer=QA_ANSWER, marker=QA_MARKER):
    return recorded([("qa_question", marker, answer)])


def test_a_question_over_a_csv_that_the_agent_answered_becomes_a_qa_candidate(serve):
    server, client = serve(answering())
    found = sales_question().mine_families(("qa",), client)
    candidate = found.only
    assert candidate.family == "qa" and candidate.runner == "qa"
    assert candidate.task_command == "cat answer.txt"
    facts = candidate.family_facts
    assert facts["expected"] == {"type": "numeric", "value": "3", "tolerance": 0.0}
    assert facts["inputs"] == ["sales.csv"] and facts["answer_file"] == "answer.txt"
    assert facts["question"] == QA_ANSWER["question"]
    # The starting files are the project when the question came: the CSV, read in full before.
    start = {p: found.blobs.get(s).decode() for p, s in candidate.start_files.items()}
    assert start == {"sales.csv": SALES_CSV}
    assert found.blobs.get(candidate.ref_files["answer.txt"]) == b"3\n"
    assert candidate.added == ("answer.txt",) and not candidate.modified
    assert "How many orders in sales.csv have an amount over 100?" in candidate.instruction
    assert "/app/answer.txt" in candidate.instruction and "one number" in candidate.instruction
    assert "3" not in candidate.instruction.replace("/app", "")  # the answer is not given away
    # One call, its cost on the candidate; the prompt carries the command and its output.
    (sent,) = server.of("qa_question")
    prompt = sent["messages"][1]["content"]
    assert "sales.csv" in prompt and "csv.DictReader" in prompt and "There are 3 orders" in prompt
    assert candidate.llm["prompt_tokens"] == 1200 and candidate.llm["cost_usd"] > 0
    assert candidate.llm["cached"] is False
    assert candidate.summary()["family_facts"]["expected"]["value"] == "3"


def test_mining_again_is_answered_from_the_cache_and_calls_nothing(serve):
    server, client = serve(answering())
    first = sales_question().mine_families(("qa",), client).only
    again = sales_question().mine_families(("qa",), LlmClient(client.config)).only
    assert len(server.requests) == 1
    assert again.key == first.key and again.instruction == first.instruction
    assert again.llm["cached"] is True


def test_repair_alone_asks_nothing(serve):
    server, client = serve(answering())
    found = sales_question().mine_families(("repair",), client)
    assert found.candidates == [] and server.requests == []


def test_without_a_model_the_llm_families_are_skipped():
    found = sales_question().mine_families(("repair", "qa"), None)
    assert found.candidates == [] and found.drops == []


def test_a_request_that_is_no_question_costs_no_call(serve):
    server, client = serve(answering())
    session = sales_question(question="Add a total row to the report, please.")
    assert session.mine_families(("qa",), client).candidates == []
    assert server.requests == []


def test_an_input_fetched_from_the_network_drops_before_any_call(serve):
    server, client = serve(answering())
    session = sales_question(
        command="curl -s https://example.com/latest.csv | python3 -c 'import sys; print(3)'"
    )
    drop = session.mine_families(("qa",), client).dropped
    assert drop.reason is DropReason.QA_INPUT_FROM_NETWORK and "curl" in drop.detail
    assert (drop.family, drop.stage) == ("qa", "mine") and server.requests == []


def test_a_data_file_the_replay_saw_only_in_part_drops_before_any_call(serve):
    server, client = serve(answering())
    drop = _partial_session().mine_families(("qa",), client).dropped
    assert drop.reason is DropReason.QA_INPUT_UNKNOWN and "sales.csv" in drop.detail
    assert server.requests == []


def _partial_session():
    from .helpers import COUNT_COMMAND, FamilySession

    return (
        FamilySession()
        .user("Have a look at the sales export.")
        .read_part("sales.csv", SALES_CSV.splitlines()[:2])
        .user(QA_MARKER)
        .run(COUNT_COMMAND, output="3")
        .say("There are 3 orders over $100.")
    )


@pytest.mark.parametrize(
    "change, reason, fragment",
    [
        ({"answer": "4"}, DropReason.QA_ANSWER_NOT_IN_OUTPUT, "'4' is not in the agent's reply"),
        (
            {"is_data_question": False, "reason": "asks for an opinion"},
            DropReason.LLM_DECLINED,
            "asks for an opinion",
        ),
        ({"inputs": ["orders.csv"]}, DropReason.QA_INPUT_UNKNOWN, "orders.csv"),
        (
            {"question": "There are 3 such orders; how many orders are over 100?"},
            DropReason.INSTRUCTION_LEAKS_FIX,
            "states the answer",
        ),
        ({"answer": "three"}, DropReason.LLM_DECLINED, "not a number"),
    ],
)
def test_an_answer_the_transcript_does_not_bear_out_drops_with_its_reason(
    serve, change, reason, fragment
):
    _, client = serve(answering({**QA_ANSWER, **change}))
    drop = sales_question().mine_families(("qa",), client).dropped
    assert drop.reason is reason and fragment in drop.detail, drop.detail
    assert drop.llm["prompt_tokens"] == 1200  # the call was made and is paid for


def test_an_answer_computed_by_the_agent_but_not_reported_drops(serve):
    _, client = serve(answering())
    session = sales_question(reply="Done, I computed it.")
    drop = session.mine_families(("qa",), client).dropped
    assert drop.reason is DropReason.QA_ANSWER_NOT_IN_OUTPUT and "reply" in drop.detail


@pytest.mark.parametrize(
    "reply, reason",
    [
        (Reply(content="three"), DropReason.LLM_BAD_JSON),
        (Reply(content=json.dumps({"question": "x"})), DropReason.LLM_SCHEMA_MISMATCH),
        (Reply(refusal="no"), DropReason.LLM_REFUSED),
        (Reply(status=500, error="down"), DropReason.LLM_ERROR),
    ],
)
def test_a_model_that_fails_drops_the_candidate_with_its_own_reason(serve, reply, reason):
    _, client = serve(answering(reply))
    drop = sales_question().mine_families(("qa",), client).dropped
    assert drop.reason is reason and drop.family == "qa"


def test_a_failed_call_drops_one_candidate_and_the_next_goes_on(serve):
    second = "Which customer spent the most in sales.csv?"
    answers = [
        ("qa_question", QA_MARKER, Reply(content="not json")),
        (
            "qa_question",
            second,
            {
                **QA_ANSWER,
                "question": "Which customer has the largest total amount in sales.csv?",
                "answer_type": "exact",
                "answer": "Globex",
            },
        ),
    ]
    _, client = serve(recorded(answers))
    session = (
        sales_question()
        .user(second)
        .run("python3 totals.py sales.csv", output="Globex 391.25\nAcme 370.00\nInitech 45.25")
        .say("Globex spent the most: 391.25 in total.")
    )
    found = session.mine_families(("qa",), client)
    assert [d.reason for d in found.drops] == [DropReason.LLM_BAD_JSON]
    (candidate,) = found.candidates
    assert candidate.family_facts["expected"] == {
        "type": "exact",
        "value": "Globex",
        "tolerance": 0,
    }
    assert found.blobs.get(candidate.ref_files["answer.txt"]) == b"Globex\n"
    assert "the value alone on one line" in candidate.instruction


def test_a_set_answer_lists_its_items_and_a_rounded_number_gets_its_precision(serve):
    answers = [
        (
            "qa_question",
            "Which customers",
            {
                **QA_ANSWER,
                "question": "Which customers in sales.csv placed an order over 100?",
                "answer_type": "set",
                "answer": "",
                "items": ["Globex", "Acme", "Acme"],
            },
        ),
        (
            "qa_question",
            "average",
            {
                **QA_ANSWER,
                "question": "What is the average order amount in sales.csv?",
                "answer": "161.30",
                "tolerance": 5,
            },
        ),
    ]
    _, client = serve(recorded(answers))
    found = (
        sales_question(
            question="Which customers ordered more than 100?",
            command="python3 -c \"import csv; print(*sorted({r['customer'] for r in "
            "csv.DictReader(open('sales.csv')) if float(r['amount']) > 100}), sep='\\n')\"",
            output="Acme\nGlobex",
            reply="Acme and Globex.",
        )
        .user("What's the average amount?")
        .run(
            'python3 -c "import csv, statistics; print(statistics.mean('
            "float(r['amount']) for r in csv.DictReader(open('sales.csv'))))\"",
            output="161.3",
        )
        .say("The average order is 161.30.")
        .mine_families(("qa",), client)
    )
    assert not found.drops, [d.to_dict() for d in found.drops]
    assert len(found.candidates) == 2
    by_type = {c.family_facts["expected"]["type"]: c for c in found.candidates}
    assert by_type["set"].family_facts["expected"]["value"] == ["Acme", "Globex"]
    assert found.blobs.get(by_type["set"].ref_files["answer.txt"]) == b"Acme\nGlobex\n"
    # The model asked for ±5; the agent reported two decimals, so the grader allows ±0.005.
    assert by_type["numeric"].family_facts["expected"]["tolerance"] == pytest.approx(0.005)
