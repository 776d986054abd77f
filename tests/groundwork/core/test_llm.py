"""The LLM seam: LiteLLM's real client over HTTP to a loopback server, the schema check and the
disk cache (groundwork.core.llm)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from groundwork.core.llm import FailureKind, LlmClient, LlmFailure, Question, cache_key
from tests.llm_server import LOCAL_MODEL, Reply, recorded

REPO = Path(__file__).resolve().parents[3]
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["answer", "count"],
    "additionalProperties": False,
}
QUESTION = Question("probe", SCHEMA, system="Answer in JSON.", prompt="How many rows? (probe)")
GOOD = [("probe", "(probe)", {"answer": "three", "count": 3})]


def test_an_answer_comes_through_litellm_over_http_validated_and_priced(serve):
    server, client = serve(recorded(GOOD))
    answer = client.ask(QUESTION)
    assert answer.value == {"answer": "three", "count": 3}
    usage = answer.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cached) == (1200, 150, False)
    # gpt-4o-mini is in LiteLLM's local price list: 1200 in, 150 out.
    assert usage.cost_known and usage.cost_usd == pytest.approx(1200 * 0.15e-6 + 150 * 0.6e-6)
    (sent,) = server.requests
    assert sent["model"] == "gpt-4o-mini"
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "probe", "schema": SCHEMA, "strict": True},
    }
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]


def test_the_second_run_is_answered_from_the_disk_cache_and_calls_nothing(serve):
    server, client = serve(recorded(GOOD))
    first = client.ask(QUESTION)
    again = LlmClient(client.config)  # a new process would start with a new client
    second = again.ask(QUESTION)
    assert len(server.requests) == 1 and again.calls == 0
    assert second.value == first.value
    assert second.usage.cached and second.usage.cost_usd == first.usage.cost_usd
    entry = client.config.cache_dir / first.usage.key[:2] / f"{first.usage.key}.json"
    assert json.loads(entry.read_text())["value"] == first.value


def test_the_cache_is_keyed_by_model_schema_and_prompt():
    other_schema = {**SCHEMA, "required": ["answer"]}
    keys = {
        cache_key("openai/a", QUESTION),
        cache_key("openai/b", QUESTION),
        cache_key("openai/a", dataclasses.replace(QUESTION, schema=other_schema)),
        cache_key("openai/a", dataclasses.replace(QUESTION, prompt="How many columns?")),
        cache_key("openai/a", dataclasses.replace(QUESTION, system="Be brief.")),
    }
    assert len(keys) == 5
    assert cache_key("openai/a", QUESTION) == cache_key("openai/a", dataclasses.replace(QUESTION))


@pytest.mark.parametrize(
    "reply, kind, fragment",
    [
        (Reply(content="The answer is three."), FailureKind.BAD_JSON, "The answer is three"),
        (Reply(content=""), FailureKind.BAD_JSON, "(empty)"),
        (Reply(content="[3]"), FailureKind.BAD_JSON, "not an object"),
        (Reply(content='{"answer": "three"}'), FailureKind.SCHEMA_MISMATCH, "'count'"),
        (Reply(content='{"answer": 3, "count": 3}'), FailureKind.SCHEMA_MISMATCH, "answer:"),
        (Reply(refusal="I can't help with that."), FailureKind.REFUSED, "can't help"),
        (Reply(status=429, error="slow down"), FailureKind.ERROR, "RateLimitError"),
        (Reply(status=401, error="bad key"), FailureKind.ERROR, "AuthenticationError"),
    ],
)
def test_an_unusable_answer_fails_with_its_own_kind_and_is_not_cached(serve, reply, kind, fragment):
    server, client = serve(recorded([("probe", "(probe)", reply)]))
    with pytest.raises(LlmFailure) as failed:
        client.ask(QUESTION)
    assert failed.value.kind is kind and fragment in failed.value.detail, failed.value.detail
    if kind in (FailureKind.BAD_JSON, FailureKind.SCHEMA_MISMATCH):
        assert failed.value.usage is not None and failed.value.usage.prompt_tokens == 1200
    with pytest.raises(LlmFailure):
        client.ask(QUESTION)
    assert len(server.requests) == 2  # asked again: failures are never cached


def test_a_model_slower_than_the_timeout_fails_with_llm_timeout(serve):
    slow = Reply(content=json.dumps({"answer": "three", "count": 3}), delay=3.0)
    server, client = serve(recorded([("probe", "(probe)", slow)]), timeout=1.0)
    with pytest.raises(LlmFailure) as failed:
        client.ask(QUESTION)
    assert failed.value.kind is FailureKind.TIMEOUT and len(server.requests) == 1


def test_an_answer_in_a_code_fence_is_read(serve):
    fenced = Reply(content='```json\n{"answer": "three", "count": 3}\n```')
    _, client = serve(recorded([("probe", "(probe)", fenced)]))
    assert client.ask(QUESTION).value["count"] == 3


def test_a_cache_entry_the_schema_rejects_is_a_miss(serve):
    server, client = serve(recorded(GOOD))
    key = client.ask(QUESTION).usage.key
    entry = client.config.cache_dir / key[:2] / f"{key}.json"
    data = json.loads(entry.read_text())
    data["value"] = {"answer": "tampered"}
    entry.write_text(json.dumps(data))
    assert client.ask(QUESTION).value["count"] == 3 and len(server.requests) == 2


def test_a_local_model_without_a_price_costs_nothing_known(serve):
    _, client = serve(recorded(GOOD), model=LOCAL_MODEL)
    usage = client.ask(QUESTION).usage
    assert (usage.cost_usd, usage.cost_known, usage.prompt_tokens) == (0.0, False, 1200)


def test_only_the_seam_imports_litellm():
    importers = []
    for package in ("groundwork", "trajectories", "tasks_review", "training", "project"):
        for path in (REPO / package).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if "import litellm" in text or "from litellm" in text:
                importers.append(path.relative_to(REPO).as_posix())
    assert importers == ["groundwork/core/llm.py"]


def test_litellm_loads_its_local_price_list_without_the_network():
    # What the seam sets before importing litellm: without it, the import tries GitHub 3 times.
    probe = (
        "import os, socket\n"
        "tried = []\n"
        "def refuse(*args, **kwargs):\n"
        "    tried.append(args)\n"
        "    raise OSError('no network here')\n"
        "socket.create_connection = refuse\n"
        "socket.socket.connect = lambda self, address: refuse(address)\n"
        "os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] = 'True'\n"
        "import litellm\n"
        "print(len(tried), 'gpt-4o-mini' in litellm.model_cost)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.split() == ["0", "True"]


def test_every_failure_kind_is_a_drop_reason_of_its_own():
    from tasks_review.core.mining import DropReason

    assert {str(kind) for kind in FailureKind} <= {str(reason) for reason in DropReason}
