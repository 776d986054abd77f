"""traj2env qa grader: ``tests/test.sh`` of a qa task runs it as root in the separate verifier.

Standard library only (Python 3.8+), started with ``python3 -I``. The submitted project is in
place; of it, only the answer file is read: opened without following a link, as a regular file,
size-limited. Nothing of the submission runs, so there is nothing to clean, restore or sandbox:
the answer's bytes are judged by ``answers.py`` (the rules the trial matrix applies again on the
host, to the bytes that crossed). ``grade.main`` writes the verdict (with the answer as read) to
``<verifier dir>/traj2env/verdict.json`` and the reward to ``reward.txt``, as for every task.

Usage: python3 -I answer_grade.py GRADING_JSON   (TRAJ2ENV_VERIFIER_DIR overrides /logs/verifier)
"""

import os
import stat
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # -I leaves the script's own folder off sys.path

import answers  # noqa: E402
import grade  # noqa: E402  (main: the verdict and the reward, written as for every task)


def read_answer(project, name):
    """The answer file's bytes, or None when there is no regular file of that name."""
    path = os.path.join(project, name)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None  # missing, or a symlink (ELOOP)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        return handle.read(answers.MAX_ANSWER_BYTES + 1)


def grade_answer(config, verifier, out):
    data = read_answer(config["project"], config["answer_file"])
    judged = answers.judge(data, config["expected"])
    return {
        "reward": judged.reward,
        "reasons": list(judged.reasons),
        "grading": "answer",
        "answer": judged.answer,
        "exit_code": 0,
        "timed_out": False,
        "seconds": 0.0,
    }


if __name__ == "__main__":
    sys.exit(grade.main(grade_answer))
