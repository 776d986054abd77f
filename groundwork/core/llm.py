"""The one seam to a language model: a structured-output call through LiteLLM, cached on disk.

    client = LlmClient(LlmConfig(model="openai/gpt-4o-mini", cache_dir=Path("var/cache/llm")))
    answer = client.ask(Question("qa_answer", SCHEMA, system="...", prompt="..."))
    answer.value          # the JSON object, validated against SCHEMA
    answer.usage          # Usage(model, prompt_tokens, completion_tokens, cost_usd, cached)

This is the only module that imports ``litellm`` (lazily, on the first call that misses the
cache: the import takes seconds and most runs never ask). ``model`` is any LiteLLM model string;
``api_base`` points it at another server (a local OpenAI-compatible one is ``openai/NAME`` with
``api_base="http://127.0.0.1:8080/v1"``). Every question goes with its JSON Schema as OpenAI's
``response_format: json_schema`` (strict), and the answer is validated again here with
jsonschema, whatever the server claims.

The cache is keyed by the model, the schema and the prompt (system and user text): the same
question to the same model is asked once, ever, so reruns and tests are offline and free. Only
valid answers are cached; a failure is asked again next time. Entries are JSON files written
atomically, so concurrent runs sharing the folder see whole entries or none.

A call that fails raises ``LlmFailure`` with a ``FailureKind`` (timeout, bad JSON, schema
mismatch, refusal, any other error), which the families turn into a drop with that reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import jsonschema

from groundwork.core.failures import said

CACHE_FORMAT = 1
MAX_ANSWER_CHARS = 200_000
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$", re.DOTALL)


class FailureKind(StrEnum):
    """Why a call gave no usable answer; the values are the families' drop reason codes."""

    TIMEOUT = "llm_timeout"  # no answer within the configured time
    BAD_JSON = "llm_bad_json"  # the answer is not one JSON object (or is empty)
    SCHEMA_MISMATCH = "llm_schema_mismatch"  # valid JSON that the schema rejects
    REFUSED = "llm_refused"  # the model refused (a refusal, a content filter)
    ERROR = "llm_error"  # anything else: connection, authentication, rate limit, bad request


@dataclass(frozen=True, slots=True)
class LlmConfig:
    model: str
    cache_dir: Path
    api_base: str | None = None
    api_key: str | None = None  # None: LiteLLM reads the provider's own variable
    timeout: float = 120.0
    retries: int = 1  # LiteLLM's own retries of a failed request (rate limits, 5xx)
    max_tokens: int = 4096


@dataclass(frozen=True, slots=True)
class Question:
    """One structured question: ``name`` names the schema (OpenAI requires a name)."""

    name: str
    schema: Mapping[str, Any]
    system: str
    prompt: str


@dataclass(frozen=True, slots=True)
class Usage:
    """What one call cost. A cache hit keeps the numbers of the call that filled the entry and
    says ``cached``: it cost nothing this time."""

    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cost_known: bool = False  # LiteLLM's price list has the model (a local one has none)
    cached: bool = False
    seconds: float = 0.0
    key: str = ""  # the cache key

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Answer:
    value: Mapping[str, Any]
    usage: Usage


class LlmFailure(Exception):
    """The model gave no usable answer; ``usage`` is what the failed call cost, when known."""

    def __init__(self, kind: FailureKind, detail: str, usage: Usage | None = None) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.usage = usage


def cache_key(model: str, question: Question) -> str:
    identity = {
        "format": CACHE_FORMAT,
        "model": model,
        "schema": question.schema,
        "name": question.name,
        "system": question.system,
        "prompt": question.prompt,
    }
    encoded = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(encoded.encode("utf-8", "surrogatepass")).hexdigest()


def schema_problems(value: Any, schema: Mapping[str, Any]) -> list[str]:
    """Why ``value`` does not satisfy ``schema`` (empty: it does), path first."""
    validator = jsonschema.Draft202012Validator(schema)
    problems = []
    for error in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        problems.append(f"{where}: {error.message[:200]}")
    return problems


class LlmClient:
    """Structured questions to one model, through LiteLLM, with the disk cache in front."""

    def __init__(self, config: LlmConfig) -> None:
        self.config = config
        self.calls = 0  # requests actually sent by this client (cache misses)

    # -- the cache ---------------------------------------------------------------------------

    def _path(self, key: str) -> Path:
        return Path(self.config.cache_dir) / key[:2] / f"{key}.json"

    def cached(self, question: Question) -> Answer | None:
        key = cache_key(self.config.model, question)
        try:
            entry = json.loads(self._path(key).read_text(encoding="utf-8"))
            value, usage = entry["value"], entry["usage"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        # A hand-edited or truncated entry is a miss, never an unchecked answer.
        if not isinstance(value, dict) or schema_problems(value, question.schema):
            return None
        return Answer(value, Usage(**{**usage, "cached": True, "key": key}))

    def _store(self, question: Question, answer: Answer) -> None:
        path = self._path(answer.usage.key)
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {
            "format": CACHE_FORMAT,
            "model": self.config.model,
            "name": question.name,
            "value": answer.value,
            "usage": {k: v for k, v in answer.usage.to_dict().items() if k != "cached"},
        }
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".entry-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(entry, handle, sort_keys=True, ensure_ascii=False)
        os.replace(tmp, path)

    # -- asking ------------------------------------------------------------------------------

    def ask(self, question: Question) -> Answer:
        """The validated answer, from the cache or one call. LlmFailure when there is none."""
        hit = self.cached(question)
        if hit is not None:
            return hit
        answer = self._call(question)
        self._store(question, answer)
        return answer

    def _call(self, question: Question) -> Answer:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price-list fetch
        import litellm

        litellm.suppress_debug_info = True
        config = self.config
        key = cache_key(config.model, question)
        options: dict[str, Any] = {}
        if config.api_base:
            options["api_base"] = config.api_base
        if config.api_key:
            options["api_key"] = config.api_key
        started = time.monotonic()
        self.calls += 1
        try:
            response = litellm.completion(
                model=config.model,
                messages=[
                    {"role": "system", "content": question.system},
                    {"role": "user", "content": question.prompt},
                ],
                response_format={
                    "type": "json_schema",
                    "json_schema": {
                        "name": question.name,
                        "schema": dict(question.schema),
                        "strict": True,
                    },
                },
                temperature=0,
                max_tokens=config.max_tokens,
                timeout=config.timeout,
                num_retries=config.retries,
                **options,
            )
        except litellm.Timeout as exc:
            raise LlmFailure(FailureKind.TIMEOUT, f"no answer within {config.timeout:g} s") from exc
        except litellm.ContentPolicyViolationError as exc:
            raise LlmFailure(FailureKind.REFUSED, _short(exc)) from exc
        except Exception as exc:  # LiteLLM maps every provider's errors onto its own classes
            raise LlmFailure(FailureKind.ERROR, " ".join(said(exc).split())[:300]) from exc
        usage = _usage(response, config.model, key, time.monotonic() - started)
        return Answer(_value(response, question, usage), usage)


def _value(response: Any, question: Question, usage: Usage) -> Mapping[str, Any]:
    choice = response.choices[0]
    message = choice.message
    refusal = getattr(message, "refusal", None)
    if refusal or getattr(choice, "finish_reason", None) == "content_filter":
        raise LlmFailure(FailureKind.REFUSED, str(refusal or "content filter")[:300], usage)
    content = message.content or ""
    if len(content) > MAX_ANSWER_CHARS:
        raise LlmFailure(FailureKind.BAD_JSON, f"an answer of {len(content)} characters", usage)
    fenced = _FENCE.match(content)  # some models wrap JSON in a code fence despite the format
    text = fenced.group(1) if fenced else content
    try:
        value = json.loads(text)
    except ValueError as exc:
        shown = content.strip()[:120] or "(empty)"
        raise LlmFailure(FailureKind.BAD_JSON, f"{exc}: {shown!r}", usage) from None
    if not isinstance(value, dict):
        raise LlmFailure(
            FailureKind.BAD_JSON, f"a JSON {type(value).__name__}, not an object", usage
        )
    problems = schema_problems(value, question.schema)
    if problems:
        raise LlmFailure(FailureKind.SCHEMA_MISMATCH, "; ".join(problems[:3]), usage)
    return value


def _usage(response: Any, model: str, key: str, seconds: float) -> Usage:
    counted = getattr(response, "usage", None)
    cost = None
    hidden = getattr(response, "_hidden_params", None) or {}
    if isinstance(hidden, Mapping):
        cost = hidden.get("response_cost")
    return Usage(
        model=model,
        prompt_tokens=int(getattr(counted, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(counted, "completion_tokens", 0) or 0),
        cost_usd=float(cost or 0.0),
        cost_known=cost is not None,
        seconds=round(seconds, 3),
        key=key,
    )


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]
