"""Which real tests each instrumented runner copies as controls (asked over ``reports``).

Standard library only (Python 3.8+); imports its kit siblings from its own folder.
"""

import ast
import base64
import os
import random

import copies
import judging

NODE_BASELINE_NAMES = 300
_RANDOM = random.SystemRandom()


class Planner:
    """Which real tests each runner copies as controls, from the reference's facts.

    In the check in the image (no reference facts yet: ``baseline``) every test is copied both
    ways, to learn which copies behave (``judging.baseline_controls``). When grading, a few: a
    verbatim copy of tests that fail on the starting files (so sparing unknown names leaves a
    failure) and falsified copies (so neutering everything shows), each under a random name.
    """

    PASS_COPIES = 3
    FAIL_COPIES = 2

    def __init__(self, config):
        self.project = config["project"].rstrip("/")
        reference = config.get("reference") or {}
        self.sources = {}  # reference test file -> parsed module
        for rel, data in reference.items():
            if rel.endswith(".py"):
                try:
                    self.sources[rel] = ast.parse(base64.b64decode(data))
                except (SyntaxError, ValueError):
                    continue
        controls = config.get("reference_controls")
        self.baseline = controls is None
        controls = controls or {}
        self.copyable = set(controls.get("copyable") or ())
        self.mutable = set(controls.get("mutable") or ())
        self.start_failed = set(config.get("start_failed") or ())

    def name(self):
        return "test_" + "".join(_RANDOM.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(14))

    def _choose(self, ids):
        """(verbatim, falsified) test ids for one session, from the reference's facts."""
        ids = list(dict.fromkeys(ids))
        failing = [i for i in ids if i in self.start_failed]
        verbatim = [i for i in failing if i in self.copyable]
        _RANDOM.shuffle(verbatim)
        verbatim = verbatim[: self.PASS_COPIES - 1]
        rest = [i for i in ids if i in self.copyable and i not in verbatim]
        verbatim += _RANDOM.sample(rest, min(len(rest), self.PASS_COPIES - len(verbatim)))
        falsified = [i for i in failing if i in self.mutable]
        _RANDOM.shuffle(falsified)
        falsified = falsified[: self.FAIL_COPIES]
        rest = [i for i in ids if i in self.mutable and i not in falsified]
        falsified += _RANDOM.sample(rest, min(len(rest), self.FAIL_COPIES - len(falsified)))
        return verbatim, falsified

    def python(self, tests):
        """The plan for a unittest or pytest session, and problems with its inventory."""
        problems = []
        known = {}
        for test in tests[: judging.MAX_CASES]:
            try:
                test_id, path, qualname = str(test["id"]), str(test["file"]), str(test["qualname"])
            except (KeyError, TypeError):
                continue
            rel = os.path.relpath(os.path.realpath(path), os.path.realpath(self.project))
            tree = self.sources.get(rel)
            function = copies.find(tree, qualname) if tree is not None else None
            if function is None:
                if test_id in self.mutable:
                    problems.append(f"{test_id} is not the reference's test (substituted?)")
                continue
            known[test_id] = (os.path.join(self.project, rel), qualname, function)
        plan = []
        if self.baseline:
            for test_id, (_, _, function) in known.items():
                spots = len(copies.assertions(function))
                plan.append({"of": test_id, "fail": False})
                if spots:
                    plan.append({"of": test_id, "fail": True, "at": _RANDOM.randrange(spots)})
        else:
            verbatim, falsified = self._choose(known)
            plan += [{"of": i, "fail": False} for i in verbatim]
            for test_id in falsified:
                spots = len(copies.assertions(known[test_id][2]))
                if spots:
                    plan.append({"of": test_id, "fail": True, "at": _RANDOM.randrange(spots)})
        for entry in plan:
            path, qualname, _ = known[entry["of"]]
            entry.update(name=self.name(), file=path, qualname=qualname)
        _RANDOM.shuffle(plan)
        return plan, problems

    def go(self, tests):
        """The plan for a ``go test`` session: copies of top-level test functions, named after
        the test they copy with a random suffix (so a ``-run`` pattern that selects the test
        selects its copies too); the harness writes them into the test's own file."""
        known = {}
        for test in tests[: judging.MAX_CASES]:
            try:
                known[str(test["id"])] = str(test["func"])
            except (KeyError, TypeError):
                continue
        if self.baseline:
            plan = [{"of": i, "fail": fail} for i in known for fail in (False, True)]
        else:
            verbatim, falsified = self._choose(known)
            plan = [{"of": i, "fail": False} for i in verbatim]
            plan += [{"of": i, "fail": True} for i in falsified]
        for entry in plan:
            suffix = "".join(_RANDOM.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(12))
            entry["name"] = f"{known[entry['of']]}_{suffix}"
        _RANDOM.shuffle(plan)
        return plan, []

    def node_file(self, path):
        """The plan for one node test file's process."""
        if self.baseline:
            return {
                "all": True,
                "pass_names": [self.name() for _ in range(NODE_BASELINE_NAMES)],
                "fail_names": [self.name() for _ in range(NODE_BASELINE_NAMES)],
            }
        # Ids start with the test file's path as node gives it to the test's process.
        ids = [i for i in sorted(self.copyable | self.mutable) if i.startswith(path + " > ")]
        verbatim, falsified = self._choose(ids)
        plan = [{"of": i, "fail": False, "name": self.name()} for i in verbatim]
        plan += [{"of": i, "fail": True, "at": 0, "name": self.name()} for i in falsified]
        _RANDOM.shuffle(plan)
        return {"copies": plan}
