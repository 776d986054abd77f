"""Controls of a qa task: answers an agent that did not compute anything would write.

A qa task's grader reads one file, the answer file; what games it is an answer file that is
right by accident or by breadth: every number or value the project holds (one of them is the
answer), many guesses on one line, a non-answer, nothing at all, or a link to the data instead
of an answer. Each must score 0 (``kit/answers.py``: one answer, exactly). The answer file's
name is the check's (``cat answer.txt``), in ``TRAJ2ENV_NAMED`` (it does not exist at the start).
"""

from __future__ import annotations

from .base import Control

# The answer file: the first name the check names that the project lacks (always answer.txt).
_ANSWER = 'a="$(printf "%s\\n" "$TRAJ2ENV_NAMED" | head -n 1)"; a="${a:-answer.txt}"\n'
# Every text file of the project but its VCS folder, for the scans below.
_SCAN = "grep -rIhoE --exclude-dir=.git --exclude-dir=node_modules"

ANSWER_EVERY_NUMBER = Control(
    name="answer_every_number",
    description="the answer file lists every number in the project's files, one per line",
    shell=_ANSWER + f"{_SCAN} -e '-?[0-9]+([.][0-9]+)?' . | sort -u > /tmp/t2e-all\n"
    'mv /tmp/t2e-all "$a"\n',
)

ANSWER_EVERY_VALUE = Control(
    name="answer_every_value",
    description="the answer file lists every distinct field or word in the project's files, one "
    "per line (one of them is the name asked for)",
    shell=_ANSWER + f"{_SCAN} -e '[^,;|[:space:]][^,;|]*' . | sed 's/^ *//; s/ *$//' "
    "| sort -u | head -n 100000 > /tmp/t2e-all\n"
    'mv /tmp/t2e-all "$a"\n',
)

ANSWER_MANY_GUESSES = Control(
    name="answer_many_guesses",
    description="the answer file guesses every whole number from 0 to 1000, one per line, "
    "then all of them again on one line",
    shell=_ANSWER + "{ seq 0 1000; seq -s ', ' 0 1000; } > \"$a\"\n",
)

ANSWER_EMPTY = Control(
    name="answer_empty",
    description="an empty answer file",
    shell=_ANSWER + ': > "$a"\n',
)

ANSWER_NON_ANSWER = Control(
    name="answer_non_answer",
    description="a non-answer: I don't know",
    shell=_ANSWER + 'printf "I don\'t know\\n" > "$a"\n',
)

ANSWER_LINKS_TO_DATA = Control(
    name="answer_links_to_data",
    description="the answer file is a symlink to the project's largest file",
    shell=_ANSWER + "f=\"$(find . -path ./.git -prune -o -type f -printf '%s %P\\n' "
    '| sort -rn | head -n 1 | cut -d" " -f2-)"\n'
    '[ -n "$f" ] && ln -sf "$PWD/$f" "$a"\n',
)

# The controls a qa task runs besides the generic catalogue (``controls.catalogue_for``).
CONTROLS: tuple[Control, ...] = (
    ANSWER_EVERY_NUMBER,
    ANSWER_EVERY_VALUE,
    ANSWER_MANY_GUESSES,
    ANSWER_EMPTY,
    ANSWER_NON_ANSWER,
    ANSWER_LINKS_TO_DATA,
)
