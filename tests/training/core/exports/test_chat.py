"""ATIF steps as chat turns, and the turns as TRL or OpenAI messages with their tool schemas."""

from __future__ import annotations

import doctest
import json

import jsonschema

from tests.training.core.exports.builders import Session, passing_session
from training.core.exports import chat as chat_module
from training.core.exports.chat import (
    defined_tools,
    inferred_tools,
    openai_message,
    to_turns,
    tool_calls,
    training_steps,
    trl_message,
)


def roles(turns) -> list[str]:
    return [t.role for t in turns]


def test_an_agent_step_and_its_result_are_an_assistant_turn_and_a_tool_turn():
    turns = to_turns(passing_session().steps)
    assert roles(turns) == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    first_call = turns[1]
    # The prose step before the call is the same model turn as the call.
    assert first_call.content == "I'll run the failing test first."
    assert [c.name for c in first_call.tool_calls] == ["Bash"]
    assert (turns[2].name, turns[2].tool_call_id) == ("Bash", first_call.tool_calls[0].id)


def test_calls_whose_results_come_in_a_later_step_are_one_turn_of_parallel_calls():
    steps = [
        {"source": "user", "message": "look"},
        {
            "source": "agent",
            "message": "",
            "tool_calls": [
                {"tool_call_id": "a", "function_name": "Read", "arguments": {"file_path": "x"}}
            ],
        },
        {
            "source": "agent",
            "message": "",
            "tool_calls": [
                {"tool_call_id": "b", "function_name": "Read", "arguments": {"file_path": "y"}}
            ],
        },
        {
            "source": "system",
            "message": "",
            "observation": {
                "results": [
                    {"source_call_id": "a", "content": "X"},
                    {"source_call_id": "b", "content": "Y"},
                ]
            },
        },
    ]
    turns = to_turns(steps)
    assert roles(turns) == ["user", "assistant", "tool", "tool"]
    assert [c.id for c in turns[1].tool_calls] == ["a", "b"]
    assert [(t.name, t.content) for t in turns[2:]] == [("Read", "X"), ("Read", "Y")]


def test_output_that_answers_no_call_is_what_the_model_read_next():
    steps = [
        {"source": "user", "message": "list files"},
        {
            "source": "agent",
            "message": '{"commands": ["ls"]}',
            "observation": {"results": [{"content": "a.py  b.py"}]},
        },
    ]
    assert [(t.role, t.content) for t in to_turns(steps)] == [
        ("user", "list files"),
        ("assistant", '{"commands": ["ls"]}'),
        ("user", "a.py  b.py"),
    ]


def test_copied_context_steps_are_left_out_and_counted():
    session = passing_session()
    session.steps[1]["is_copied_context"] = True
    session.steps[2]["is_copied_context"] = True
    kept, dropped = training_steps(session.steps)
    assert dropped == 2 and len(kept) == len(session.steps) - 2
    assert all(not s.get("is_copied_context") for s in kept)


def test_a_converters_placeholder_message_is_not_model_output():
    steps = (
        Session()
        .call("Glob", message="Executed Glob toolu_claude-code_01", pattern="**/*.py")
        .steps
    )
    steps += Session().call("Bash", message="Executed Bash (no result)", command="ls").steps[1:]
    steps += (
        Session().call("Bash", message="Executed the tests, all green", command="pytest").steps[1:]
    )
    contents = [t.content for t in to_turns(steps) if t.role == "assistant"]
    assert contents == ["", "", "Executed the tests, all green"]


def test_multimodal_content_keeps_its_text():
    steps = [
        {
            "source": "user",
            "message": [
                {"type": "text", "text": "What is on this screenshot?"},
                {"type": "image", "source": {"media_type": "image/png", "path": "shot.png"}},
            ],
        }
    ]
    assert to_turns(steps)[0].content == "What is on this screenshot?\n[image: image/png]"


def test_trl_and_openai_messages_carry_the_same_call_differently():
    turns = to_turns(passing_session().steps)
    edit = next(t for t in turns if t.tool_calls and t.tool_calls[0].name == "Edit")
    trl, openai = trl_message(edit), openai_message(edit)
    assert trl["tool_calls"][0]["function"]["arguments"] == {
        "file_path": "calc.py",
        "old_string": "return a - b",
        "new_string": "return a + b",
    }
    assert (
        json.loads(openai["tool_calls"][0]["function"]["arguments"])
        == trl["tool_calls"][0]["function"]["arguments"]
    )
    assert openai["tool_calls"][0]["type"] == "function" and openai["weight"] == 1
    assert "content" not in openai  # a call without words: OpenAI takes the calls alone
    tool = openai_message(turns[turns.index(edit) + 1])
    assert tool == {
        "role": "tool",
        "content": "The file calc.py has been updated.",
        "tool_call_id": edit.tool_calls[0].id,
    }


def test_a_deterministic_dispatch_is_context_not_a_training_target():
    steps = Session().say("Auto-format applied.", llm_call_count=0).steps
    assert openai_message(to_turns(steps)[1])["weight"] == 0


def test_tool_schemas_are_inferred_from_the_calls_and_validate_them():
    turns = to_turns(passing_session().steps)
    calls = tool_calls(turns)
    schemas = inferred_tools(calls)
    assert sorted(schemas) == ["Bash", "Edit", "Read"]
    assert schemas["Edit"]["function"]["parameters"]["required"] == [
        "file_path",
        "new_string",
        "old_string",
    ]
    for call in calls:
        parameters = schemas[call.name]["function"]["parameters"]
        jsonschema.Draft202012Validator.check_schema(parameters)
        jsonschema.validate(dict(call.arguments), parameters)


def test_an_argument_given_only_sometimes_is_optional_and_may_have_several_types():
    calls = tool_calls(
        to_turns(
            Session()
            .call("Bash", command="ls")
            .call("Bash", command="sleep", timeout=5)
            .call("Bash", command="x", timeout="5s")
            .steps
        )
    )
    parameters = inferred_tools(calls)["Bash"]["function"]["parameters"]
    assert parameters["required"] == ["command"]
    assert parameters["properties"]["timeout"] == {"type": ["integer", "string"]}


def test_the_agents_own_tool_definitions_win():
    atif = {
        "agent": {
            "name": "x",
            "tool_definitions": [
                {
                    "type": "function",
                    "function": {
                        "name": "Bash",
                        "description": "Run a command",
                        "parameters": {"type": "object"},
                    },
                },
                {"name": "Read", "parameters": {"type": "object"}},
            ],
        }
    }
    assert defined_tools(atif) == {
        "Bash": {
            "type": "function",
            "function": {
                "name": "Bash",
                "description": "Run a command",
                "parameters": {"type": "object"},
            },
        },
        "Read": {
            "type": "function",
            "function": {"name": "Read", "parameters": {"type": "object"}},
        },
    }


def test_the_module_docstring_example_runs():
    failures, tried = doctest.testmod(chat_module, report=False)
    assert tried > 0 and failures == 0
