"""A small OpenAI-compatible server on loopback for the LLM families' tests (standard library).

    with ModelServer(recorded(ANSWERS)) as server:
        config = LlmConfig(model="openai/gpt-4o-mini", api_base=server.url, api_key="unused", ...)
        ...
        server.requests            # every chat completion request it answered, as sent

It answers ``POST /v1/chat/completions`` the way OpenAI does, from a *responder*: a function of
the request body that returns a ``Reply`` (the message content, or a refusal, an HTTP error, a
delay). LiteLLM's real client talks to it over HTTP, so the call, the schema check and the cache
in ``groundwork.core.llm`` are all the real code. The model string ``openai/gpt-4o-mini`` is in
LiteLLM's own price list, so costs are computed as for the real model.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "openai/gpt-4o-mini"
LOCAL_MODEL = "openai/traj2env-local"  # not in LiteLLM's price list: its cost is unknown


@dataclass(frozen=True)
class Reply:
    content: str | None = None
    refusal: str | None = None
    status: int = 200
    error: str = ""
    delay: float = 0.0
    prompt_tokens: int = 1200
    completion_tokens: int = 150


Responder = Callable[[Mapping[str, Any]], Reply]


def schema_name(body: Mapping[str, Any]) -> str:
    return str(((body.get("response_format") or {}).get("json_schema") or {}).get("name") or "")


def prompt_of(body: Mapping[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in body.get("messages") or ())


def recorded(answers: Sequence[tuple[str, str, Any]]) -> Responder:
    """Answers recorded by hand: (schema name, a text the prompt contains, the answer). The
    first that matches answers; a ``Reply`` answers as it is, anything else as JSON."""

    def respond(body: Mapping[str, Any]) -> Reply:
        name, prompt = schema_name(body), prompt_of(body)
        for want, marker, answer in answers:
            if want == name and marker in prompt:
                if isinstance(answer, Reply):
                    return answer
                return Reply(content=json.dumps(answer))
        return Reply(status=400, error=f"no recorded answer for {name!r}")

    return respond


class ModelServer:
    def __init__(self, responder: Responder) -> None:
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                with server._lock:
                    server.requests.append(body)
                reply = server.responder(body)
                if reply.delay:
                    time.sleep(reply.delay)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    reply = Reply(status=404, error=f"no such endpoint {self.path}")
                if reply.status != 200:
                    data = {"error": {"message": reply.error, "type": "invalid_request_error"}}
                else:
                    data = _completion(body, reply)
                self._send(reply.status, data)

            def _send(self, status: int, data: Mapping[str, Any]) -> None:
                payload = json.dumps(data).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    def of(self, name: str) -> list[dict[str, Any]]:
        """The requests that asked the schema ``name``."""
        return [body for body in self.requests if schema_name(body) == name]

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _completion(body: Mapping[str, Any], reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.refusal is not None:
        message = {"role": "assistant", "content": None, "refusal": reply.refusal}
    return {
        "id": "chatcmpl-traj2env-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": body.get("model"),
        "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
    }


# -- answers derived from the prompt -------------------------------------------------------------


def _section(prompt: str, title: str) -> str:
    """The text under ``## title`` up to the next ``## `` heading."""
    start = prompt.find(f"## {title}")
    if start < 0:
        return ""
    body = prompt[prompt.index("\n", start) + 1 :]
    end = body.find("\n## ")
    return (body if end < 0 else body[:end]).strip()


_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_DATA_FILE = re.compile(r"^- (\S+) \(\d+ bytes\)$", re.MULTILINE)


def derived() -> Responder:
    """Schema-valid answers computed from the prompt alone, the same every time: what the
    corpus test asks for, since nobody hand-writes answers for third-party sessions whose
    candidates change with every mining rule. It exercises everything around the model (the
    call, the schema, the cache, every check of the answer, task writing); it is no judge of
    what a real model would write.

    - build/extend: the user's requests as the instruction, plus the interface lines the prompt
      lists (what the hidden tests import), so the interface check can pass.
    - qa: the first number the agent reported that also appears in its commands' output, as a
      numeric answer from the data files listed; no such number: not a data question.
    """

    def respond(body: Mapping[str, Any]) -> Reply:
        name, prompt = schema_name(body), prompt_of(body)
        if name in ("build_instruction", "extend_instruction"):
            asked = _section(prompt, "The user's requests, in order")
            text = "\n".join(
                line.removeprefix("> ").removeprefix(">") for line in asked.split("\n")
            )
            lines = [
                line.removeprefix("- ")
                for line in _section(prompt, "What the hidden tests import from the project").split(
                    "\n"
                )
                if line.startswith("- ")
            ]
            instruction = text.strip() or "Do what the user asked."
            if lines:
                instruction += "\n\nProvide: " + "; ".join(f"`{line}`" for line in lines) + "."
            title = " ".join(text.split())[:60] or "The requested change"
            answer = {
                "usable": True,
                "reason": "",
                "title": title,
                "instruction": instruction,
                "interface": lines,
            }
            return Reply(content=json.dumps(answer))
        if name == "qa_question":
            said = _section(prompt, "What the agent reported")
            ran = _section(prompt, "What the agent ran, with output")
            inputs = _DATA_FILE.findall(_section(prompt, "Data files of the project it touched"))
            shown = set(_NUMBER.findall(ran))
            number = next((n for n in _NUMBER.findall(said) if n in shown), None)
            request = _section(prompt, "The user's request")
            answer = {
                "is_data_question": number is not None,
                "question": " ".join(request.split())[:500],
                "answer_type": "numeric",
                "answer": number or "",
                "items": [],
                "tolerance": 0,
                "inputs": inputs,
                "reason": "" if number else "no number both reported and computed",
            }
            return Reply(content=json.dumps(answer))
        return Reply(status=400, error=f"no derivation for {name!r}")

    return respond
