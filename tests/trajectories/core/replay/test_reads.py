"""Shell reads (`cat f`, `sed -n '1,Bp' f`, `nl -ba f`, `head -n N f`) establish content only
with certainty: one simple read, exit 0, output recorded verbatim and uncut, the whole file shown.
Everything less is partial knowledge, and a read never makes anything lost.
"""

from __future__ import annotations

from typing import Any

import pytest

from trajectories.core.blobs import MemoryBlobs
from trajectories.core.replay import ChangeKind, ReplayResult, replay
from trajectories.core.replay.reads import ShellRead, doubtful, interpret, parse_read
from trajectories.core.replay.synthetic import AtifBuilder

from .helpers import LOST, PARTIAL, ROOT, bash, numbered, render

SOURCE = "export const a = 1;\n\nexport function f() {\n  return a;\n}\n"


def codex() -> AtifBuilder:
    return AtifBuilder("codex", root=ROOT)


def envelope(output: str, *, code: int = 0, tokens: int | None = None) -> str:
    """A Codex exec_command result as the model saw it (the envelope, then the output)."""
    count = tokens if tokens is not None else (len(output.encode()) + 3) // 4
    return (
        f"Chunk ID: 4f2a1c\nWall time: 0.0102 seconds\nProcess exited with code {code}\n"
        f"Original token count: {count}\nOutput:\n{output}"
    )


def run(
    b: AtifBuilder,
    command: str,
    output: str,
    *,
    code: int = 0,
    tokens: int | None = None,
    side_output: str | None = None,
    **arguments: Any,
) -> str:
    """A Codex exec_command; ``side_output`` is the end event's aggregated_output (ingest)."""
    args = {"cmd": command, "workdir": ROOT, "max_output_tokens": 10000, **arguments}
    call_id = b.call("exec_command", args, envelope(output, code=code, tokens=tokens))
    if side_output is not None:
        commands = b.extra_side.setdefault("commands", {})
        commands[call_id] = {"command": command, "cwd": ROOT, "exit_code": code}
        commands[call_id]["output"] = side_output
    return call_id


def replayed(b: AtifBuilder) -> tuple[ReplayResult, MemoryBlobs]:
    atif, side = b.build()
    blobs = MemoryBlobs()
    return replay(atif, side, root=ROOT, blobs=blobs), blobs


def files_of(b: AtifBuilder) -> dict[str, str]:
    result, blobs = replayed(b)
    return render(result, blobs)


def lines(n: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, n + 1))


def nl(text: str) -> str:
    """What `nl -ba` prints for ``text`` (GNU: every printed line ends with a newline)."""
    if text == "":
        return ""
    body = text[:-1] if text.endswith("\n") else text
    return "".join(f"{i:>6}\t{line}\n" for i, line in enumerate(body.split("\n"), start=1))


# -- which command lines are reads ---------------------------------------------------------------


@pytest.mark.parametrize(
    "script, expected",
    [
        ("cat src/a.ts", ShellRead("cat", "src/a.ts")),
        ("cat -- -odd.ts", ShellRead("cat", "-odd.ts")),
        ("/bin/cat 'my file.ts'", ShellRead("cat", "my file.ts")),
        ("cd src && cat a.ts", ShellRead("cat", "a.ts", ("src",))),
        ("cd /repo && cd src && cat a.ts\n", ShellRead("cat", "a.ts", ("/repo", "src"))),
        ("sed -n '1,200p' a.ts", ShellRead("sed", "a.ts", first=1, limit=200)),
        ("sed -n 1,200p a.ts 2>/dev/null", ShellRead("sed", "a.ts", first=1, limit=200)),
        ("sed -n -e '1,$p' a.ts", ShellRead("sed", "a.ts", first=1)),
        ("sed --quiet '40,80p' a.ts", ShellRead("sed", "a.ts", first=40, limit=80)),
        ("sed -n '7p' a.ts", ShellRead("sed", "a.ts", first=7, limit=7)),
        ("nl -ba a.ts", ShellRead("nl", "a.ts", numbered=True)),
        ("nl -b a a.ts", ShellRead("nl", "a.ts", numbered=True)),
        ("head a.ts", ShellRead("head", "a.ts", limit=10)),
        ("head -n 80 a.ts", ShellRead("head", "a.ts", limit=80)),
        ("head -n80 a.ts", ShellRead("head", "a.ts", limit=80)),
        ("head -80 a.ts", ShellRead("head", "a.ts", limit=80)),
        ("head --lines=80 a.ts", ShellRead("head", "a.ts", limit=80)),
    ],
)
def test_simple_reads_are_recognised(script, expected):
    assert parse_read(script) == expected


@pytest.mark.parametrize(
    "script",
    [
        "cat a.ts b.ts",  # two files
        "cat *.ts",  # a glob
        'cat "$FILE"',  # an expansion
        "cat ~/a.ts",  # a home directory
        "cat -n a.ts",  # numbered output
        "cat",  # standard input
        "cat -",
        "cat a.ts | head -n 5",  # a pipe
        "nl -ba a.ts | sed -n '90,108p'",
        "cat a.ts; cat b.ts",  # a list
        "cat a.ts || true",
        "cat a.ts && echo done",
        "(cat a.ts)",  # a subshell
        "cat a.ts > b.ts",  # a write
        "cat a.ts 2>&1",
        "cat < a.ts",
        "LC_ALL=C cat a.ts",  # an assignment
        "sudo cat a.ts",  # a wrapper
        "cd $DIR && cat a.ts",
        "cd && cat a.ts",
        "cd - && cat a.ts",
        "sed '1,200p' a.ts",  # no -n: every line once more
        "sed -n '1,200p;300,400p' a.ts",
        "sed -n '/x/p' a.ts",
        "sed -n '0,10p' a.ts",
        "sed -i -n '1,20p' a.ts",
        "sed -n 1,$p a.ts",  # `$p` unquoted is an expansion
        "nl a.ts",  # blank lines are not numbered
        "nl -ba -w3 a.ts",
        "head -c 100 a.ts",
        "head -n -5 a.ts",
        "head -n 5 a.ts b.ts",
        "tail -n 20 a.ts",
        "less a.ts",
    ],
)
def test_anything_else_is_not_a_read(script):
    assert parse_read(script) is None


# -- what the output proves --------------------------------------------------------------------


def test_sed_and_head_prove_the_whole_file_only_when_it_ended_before_the_limit():
    sed = ShellRead("sed", "a.ts", first=1, limit=5)
    assert interpret(sed, lines(4)) == lines(4)
    assert interpret(sed, lines(5)) is None  # the file may go on
    assert interpret(sed, "line 1\nline 2") == "line 1\nline 2"  # no final newline
    assert interpret(ShellRead("sed", "a.ts", first=2, limit=5), lines(1)) is None
    assert interpret(ShellRead("sed", "a.ts", first=1), lines(500)) == lines(500)
    head = ShellRead("head", "a.ts", limit=3)
    assert interpret(head, "") == ""
    assert interpret(head, lines(2)) == lines(2)
    assert interpret(head, lines(3)) is None


def test_nl_numbers_are_stripped_and_the_final_newline_must_be_proven():
    read = ShellRead("nl", "a.ts", numbered=True)
    assert interpret(read, nl("a\n\nb\n\n")) == "a\n\nb\n\n"  # the last line is empty
    assert interpret(read, "") == ""
    # GNU nl ends "a\nb" and "a\nb\n" alike with a newline: which one the file was is unknown.
    assert nl("a\nb") == nl("a\nb\n")
    assert interpret(read, nl("a\nb\n")) is None
    assert interpret(read, "     1\ta\n     3\tb\n\n") is None  # numbering broken
    assert interpret(read, "     1\ta\n\n     2\t\n") is None  # a section delimiter line
    assert interpret(read, "1\ta\n2\t\n") is None  # not nl's default width


@pytest.mark.parametrize(
    "output",
    [
        "line 1\n…331 chars truncated…\nline 9\n",
        "line 1 …12 tokens truncated… line 9\n",
        "Total output lines: 400\n\nline 1\n",
        "line 1\n[... omitted 10 of 400 lines ...]\nline 400\n",
        "line 1\n[... 12 lines truncated ...]\n",
        "line 1\n\n[Showing lines 1-50 of 900. Full output: /tmp/pi-bash-1.log]",
        "line 1\n\n[Output truncated. Full output: /tmp/x]",
        "line 1\n…\nline 9\n",
        "caf\ufffd\n",  # bytes that were not UTF-8
    ],
)
def test_signs_of_cutting_make_an_output_doubtful(output):
    assert doubtful(output)


def test_plain_text_with_ellipses_and_the_word_truncated_is_not_doubtful():
    assert not doubtful("const more = '…';\n// Values are truncated to 10 chars.\n    ...\n")
    assert not doubtful(envelope(SOURCE), 100)


def test_an_original_token_count_above_the_calls_limit_says_the_output_was_cut():
    assert doubtful(envelope(SOURCE, tokens=2001), 2000)
    assert not doubtful(envelope(SOURCE, tokens=2000), 2000)


# -- Codex shell reads in the replay -------------------------------------------------------------


def test_cat_establishes_the_content_without_codex_envelope():
    b = codex()
    run(b, "cat src/a.ts", SOURCE)
    result, blobs = replayed(b)
    assert render(result, blobs) == {"src/a.ts": SOURCE}
    change = result.events[0].changes["src/a.ts"]
    assert (change.kind, change.observed, change.reason) == (
        ChangeKind.WRITTEN,
        True,
        "read in full by cat",
    )


def test_output_without_a_final_newline_means_the_file_has_none():
    b = codex()
    run(b, "cat a.ts", "no newline")
    run(b, "sed -n '1,50p' b.ts", "x\ny")
    assert files_of(b) == {"a.ts": "no newline", "b.ts": "x\ny"}


def test_cd_before_the_read_and_workdir_place_the_file():
    b = codex()
    run(b, "cd src && cat a.ts", SOURCE)
    run(b, "cat b.ts", "b\n", workdir=f"{ROOT}/lib")
    assert files_of(b) == {"src/a.ts": SOURCE, "lib/b.ts": "b\n"}


@pytest.mark.parametrize(
    "command, output, expected",
    [
        ("sed -n '1,200p' a.ts", SOURCE, SOURCE),  # 5 lines of at most 200: the whole file
        ("sed -n '1,5p' a.ts", SOURCE, PARTIAL),  # 5 of 5: the file may go on
        ("sed -n '40,80p' a.ts", SOURCE, PARTIAL),  # a range from the middle
        ("sed -n '1,$p' a.ts", SOURCE, SOURCE),
        ("head -n 20 a.ts", SOURCE, SOURCE),
        ("head -n 5 a.ts", SOURCE, PARTIAL),
        ("head -5 a.ts", lines(5), PARTIAL),
        ("head a.ts", lines(9), lines(9)),
        ("nl -ba a.ts", nl(SOURCE + "\n"), SOURCE + "\n"),  # ends in an empty line
        ("nl -ba a.ts", nl(SOURCE), PARTIAL),  # the final newline is not proven
        ("cat a.ts", "", ""),  # an empty file
    ],
)
def test_read_forms_give_full_or_partial_knowledge(command, output, expected):
    b = codex()
    run(b, command, output)
    assert files_of(b) == {"a.ts": expected}


@pytest.mark.parametrize(
    "output, tokens",
    [
        ("export const a = 1;\n…40 tokens truncated…\n}\n", None),
        ("Total output lines: 900\n\nexport const a = 1;\n", None),
        (SOURCE, 10001),  # more tokens than the call's max_output_tokens allowed
    ],
)
def test_truncated_output_is_partial(output, tokens):
    b = codex()
    run(b, "cat a.ts", output, tokens=tokens)
    assert files_of(b) == {"a.ts": PARTIAL}


def test_the_uncut_recording_wins_when_the_other_was_cut():
    # Codex's aggregated_output was cut where the model's view was complete (and vice versa).
    cut = "export const a = 1;\n…30 chars truncated…}\n"
    b = codex()
    run(b, "cat a.ts", SOURCE, side_output=cut)
    run(b, "cat b.ts", cut, side_output=SOURCE)
    assert files_of(b) == {"a.ts": SOURCE, "b.ts": SOURCE}


def test_recordings_that_disagree_are_partial():
    b = codex()
    run(b, "cat a.ts", SOURCE, side_output=SOURCE.replace("1", "2"))
    assert files_of(b) == {"a.ts": PARTIAL}


def test_output_spread_over_write_stdin_polls_is_joined():
    b = codex()
    first = b.call(
        "exec_command",
        {"cmd": "cat a.ts", "workdir": ROOT},
        "Chunk ID: 1\nWall time: 1.0 seconds\nProcess running with session ID 7\n"
        "Original token count: 0\nOutput:\n",
    )
    b.call(
        "write_stdin", {"session_id": 7, "chars": "", "max_output_tokens": 10000}, envelope(SOURCE)
    )
    result, blobs = replayed(b)
    assert render(result, blobs) == {"a.ts": SOURCE}
    assert result.commands[0].tool_call_id == first and result.commands[0].exit_code == 0


def test_a_poll_whose_own_limit_was_exceeded_makes_the_read_partial():
    b = codex()
    b.call(
        "exec_command",
        {"cmd": "cat a.ts", "workdir": ROOT},
        "Chunk ID: 1\nWall time: 1.0 seconds\nProcess running with session ID 7\n"
        "Original token count: 0\nOutput:\n",
    )
    b.call("write_stdin", {"session_id": 7, "max_output_tokens": 5}, envelope(SOURCE, tokens=14))
    assert files_of(b) == {"a.ts": PARTIAL}


def test_a_failed_or_unfinished_read_says_nothing():
    b = codex()
    run(b, "cat a.ts", "cat: a.ts: No such file or directory\n", code=1)
    b.call(
        "exec_command",
        {"cmd": "cat b.ts", "workdir": ROOT},
        "Chunk ID: 1\nWall time: 10.0 seconds\nProcess running with session ID 9\n"
        "Original token count: 2\nOutput:\nb\n",
    )
    assert files_of(b) == {}


def test_pty_output_is_not_verbatim():
    b = codex()
    run(b, "cat a.ts", SOURCE.replace("\n", "\r\n"), tty=True)
    assert files_of(b) == {"a.ts": PARTIAL}


def test_reads_outside_the_project_record_nothing():
    b = codex()
    run(b, "cat /etc/hosts", "127.0.0.1 localhost\n")
    run(b, "cat ../other/a.ts", SOURCE)
    result, _ = replayed(b)
    assert result.final_state == {}
    assert all(not e.changes for e in result.events)


def test_a_full_read_makes_an_apply_patch_update_apply():
    # The Codex habit: read with sed, then patch. The update now applies to known content.
    b = codex()
    run(b, "sed -n '1,200p' src/a.ts", SOURCE)
    b.call(
        "apply_patch",
        {
            "input": "*** Begin Patch\n*** Update File: src/a.ts\n@@\n export function f() {\n"
            "-  return a;\n+  return a + 1;\n }\n*** End Patch\n"
        },
        '{"output":"Success.","metadata":{"exit_code":0}}',
    )
    assert files_of(b) == {"src/a.ts": SOURCE.replace("return a;", "return a + 1;")}


def test_a_partial_read_leaves_an_apply_patch_update_lost():
    b = codex()
    run(b, "sed -n '3,5p' src/a.ts", "export function f() {\n  return a;\n}\n")
    b.call(
        "apply_patch",
        {
            "input": "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-  return a;\n"
            "+  return a + 1;\n*** End Patch\n"
        },
        '{"output":"Success.","metadata":{"exit_code":0}}',
    )
    assert files_of(b) == {"src/a.ts": LOST}


# -- a read contradicts nothing and never loses anything -----------------------------------------


def test_rereading_known_content_records_nothing():
    b = codex()
    run(b, "cat a.ts", SOURCE)
    run(b, "cat a.ts", SOURCE)  # the same content again
    run(b, "nl -ba a.ts", nl(SOURCE))  # all but the final newline, which nl cannot prove
    run(b, "sed -n '2,3p' a.ts", "\nexport function f() {\n")  # a part of it
    run(b, "head -n 1 a.ts", "export const a = 1;\n")
    result, blobs = replayed(b)
    assert render(result, blobs) == {"a.ts": SOURCE}
    assert [list(e.changes) for e in result.events] == [["a.ts"], [], [], [], []]


def test_a_full_read_of_other_content_than_the_replay_had_wins():
    # What the file holds on disk is what a full read shows, as with a Read tool.
    b = codex()
    run(b, "echo old > a.ts", "")
    run(b, "nl -ba a.ts", nl("new\n\n"))
    assert files_of(b) == {"a.ts": "new\n\n"}


def test_reads_of_a_lost_file_never_keep_it_lost_or_make_anything_lost():
    b = codex()
    run(b, "cat a.ts", SOURCE)
    run(b, "sed -i 's/1/2/' a.ts b.ts", "")
    run(b, "sed -n '1,2p' a.ts", "export const a = 2;\n\n")  # seen again, in part
    run(b, "head -n 50 b.ts", "b\n")  # seen again, in full
    result, blobs = replayed(b)
    assert render(result, blobs) == {"a.ts": PARTIAL, "b.ts": "b\n"}
    read_changes = [c for e in result.events[2:] for c in e.changes.values()]
    assert [(c.kind, c.observed) for c in read_changes] == [
        (ChangeKind.PARTIAL, True),
        (ChangeKind.WRITTEN, True),
    ]


def test_writes_are_not_observations():
    b = codex()
    run(b, "echo x > a.ts", "")
    result, _ = replayed(b)
    assert result.events[0].changes["a.ts"].observed is False


# -- harnesses that rewrite output give partial knowledge only ---------------------------------


def test_claude_code_trims_trailing_newlines_so_its_shell_reads_are_partial():
    b = AtifBuilder("claude-code", root=ROOT)
    bash(b, "cat a.ts", SOURCE.rstrip("\n"))
    bash(b, "head -n 100 b.ts", "b")
    b.call("Read", {"file_path": f"{ROOT}/c.ts"}, numbered("c\n"))
    bash(b, "cat c.ts", "other")  # a known file seen in part stays as it was
    result, blobs = replayed(b)
    assert render(result, blobs) == {"a.ts": PARTIAL, "b.ts": PARTIAL, "c.ts": "c\n"}
    assert not result.events[3].changes


def test_pi_drops_carriage_returns_so_its_shell_reads_are_partial():
    b = AtifBuilder("pi", root=ROOT)
    b.call("bash", {"command": "cat a.ts"}, SOURCE, error=False)
    assert files_of(b) == {"a.ts": PARTIAL}


def test_tool_reads_are_observations_too():
    b = AtifBuilder("claude-code", root=ROOT)
    b.call("Read", {"file_path": f"{ROOT}/a.ts"}, numbered("a"))
    b.call("Read", {"file_path": f"{ROOT}/b.ts", "offset": 5, "limit": 2}, numbered("x", 5))
    result, _ = replayed(b)
    full, part = (result.events[0].changes["a.ts"], result.events[1].changes["b.ts"])
    assert (full.kind, full.observed, full.reason) == (ChangeKind.WRITTEN, True, "read in full")
    assert (part.kind, part.observed, part.reason) == (ChangeKind.PARTIAL, True, "read in part")
