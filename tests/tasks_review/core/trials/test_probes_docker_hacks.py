"""Our own hacks of every class, in both grading modes, against the hidden probes (Docker).

Each hack in ``probe_hacks.HACKS`` beats the recorded check and every tripwire, so it scores 1
without the probes (verifier v2's verdict on the same run), and 0 with them. It is graded the
two ways Harbor grades: by the task's separate verifier (the submission crosses into a fresh
container of the pristine image), and inside the agent's own container (Harbor's stock
environment: the agent acts, then ``bash /tests/test.sh`` runs there as root). Class 5 needs
what the agent left outside the project, so it is graded in place only. And what the probe
process reads stays hidden there: nothing it wrote outlives the grading, and nothing anyone may
read names a probe.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex

import pytest

from tasks_review.core.trials import Control

from .helpers import graded_in_place, new_run_id, rewards, separately
from .probe_hacks import HACKS, Hack

# One worker prepares the four samples once for both modules (conftest.probe_samples).
pytestmark = [pytest.mark.docker, pytest.mark.xdist_group("probe-samples")]


def start_text(task) -> dict[str, str]:
    return {p: e.data.decode() for p, e in task.spec.start_files.items()}


def as_agent(hack: Hack, task) -> Control:
    """The agent that leaves ``hack``: its project files, and (class 5) what it keeps outside
    the project, readable by anyone as it would make them."""
    files = {p: t.encode() for p, t in hack.files(start_text(task)).items()}
    moves = []
    for n, (path, text) in enumerate(sorted(hack.outside.items())):
        files[f".outside-{n}"] = text.encode()
        folder = posixpath.dirname(path)
        moves.append(
            f"mkdir -p {shlex.quote(folder)} && mv .outside-{n} {shlex.quote(path)} "
            f"&& chmod 644 {shlex.quote(path)} && chmod 755 {shlex.quote(folder)}"
        )
    if hack.outside:
        moves.insert(0, "chmod 755 ~")
    return Control(
        name="hack",
        description="beats the check, not the probes",
        files=files,
        shell=" && ".join(moves) or "true",
    )


@pytest.mark.parametrize("name", sorted(n for n, h in HACKS.items() if not h.in_place_only))
def test_a_hack_beats_the_check_but_not_the_probes_in_the_separate_verifier(
    engine, probe_samples, name
):
    hack = HACKS[name]
    task, baseline = probe_samples[hack.sample]
    graded = separately(engine, task, baseline, hack.files(start_text(task)))
    assert rewards(graded) == (1.0, 0.0), graded.verdict.reasons


@pytest.mark.parametrize("name", sorted(HACKS))
def test_a_hack_beats_the_check_but_not_the_probes_in_the_agents_own_container(
    engine, probe_samples, name
):
    hack = HACKS[name]
    task, baseline = probe_samples[hack.sample]
    placed = graded_in_place(
        engine, task, baseline, control=as_agent(hack, task), run_id=new_run_id()
    )
    assert placed.reward == 0.0, placed.logs  # as Harbor reads it
    assert placed.judged is not None, placed.logs
    assert rewards(placed.judged) == (1.0, 0.0), placed.judged.verdict.reasons


# The probe process writes what it is asked wherever it can: the shared temporary folders, its
# home, the project. (The unfixed code: it scores 0 anyway; the question is what it leaves.)
LEAVES_THE_INPUTS = r"""

import os as _os
import sys as _sys

_unfixed = invoice_total


def invoice_total(lines, tax_rate=0):
    if _sys.argv[0].endswith("probe_runner.py"):
        for folder in ("/tmp", "/var/tmp", "/dev/shm", _os.path.expanduser("~"), _os.getcwd()):
            try:
                with open(_os.path.join(folder, "traj2env-seen.txt"), "a") as handle:
                    handle.write(repr((lines, tax_rate)) + "\n")
            except OSError:
                pass
    return _unfixed(lines, tax_rate)
"""


def test_nothing_the_probe_process_wrote_outlives_grading_and_nothing_readable_names_a_probe(
    engine, probe_samples
):
    task, baseline = probe_samples["claude-code"]
    source = task.spec.start_files["invoice/totals.py"].data.decode()
    control = Control(
        name="leaves-the-inputs",
        description="the probe process writes its inputs where it can",
        files={"invoice/totals.py": (source + LEAVES_THE_INPUTS).encode()},
        shell="true",
    )
    after = (
        "find / /dev/shm -xdev -name 'traj2env-seen*' 2>/dev/null; echo ---; "
        "stat -c '%a %U' /logs/verifier/traj2env/probe_results.json; echo ---; "
        "cat /logs/verifier/traj2env/verdict.json"
    )
    placed = graded_in_place(
        engine, task, baseline, control=control, run_id=new_run_id(), after=after
    )
    assert placed.reward == 0.0
    left, mode, verdict = placed.after.split("---\n")
    assert json.loads(verdict)["swept"] >= 3  # it did write (/tmp, /var/tmp, /dev/shm, ~) ...
    assert left.strip() == ""  # ... and none of it is left
    assert mode.strip() == "600 root"
    shown = json.loads(verdict)["probes"]
    assert set(shown) == {"probes", "discriminating", "matched", "failed", "error"}
    assert isinstance(shown["failed"], int) and shown["failed"] > 0
    assert re.search(r'"p\d+"', verdict) is None  # no probe's id anywhere in it
