"""Step 1 of grading (``grade.py``): what may not take part in it leaves the submission.

Symlinks, special files and installed-dependency folders go; so do guarded files (tests, test
and runner configuration, start-up hooks) and files a supported runner would discover as tests
that the reference lacks, anywhere in the project, its ``.git`` included. A project module
that would shadow a standard-library or runner module the reference does not have is a
tampering finding. Standard library only (Python 3.8+).
"""

import os
import re
import shutil
import sys

# Runner modules a project file could stand in for (the standard library comes from Python).
RUNNER_MODULES = frozenset({"pytest", "_pytest", "pluggy", "py", "iniconfig", "packaging"})
_MODULE_FILE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\.py|\.pyc|\.pyw|\..*\.so|\.so)$")
_SOURCELESS = re.compile(r"\.py[co]$")


class Rules:
    """``plan.is_guarded``, the runners' discovery and the project/dependency split, rebuilt
    from grading.json."""

    def __init__(self, data):
        self.test_dirs = frozenset(data["test_dirs"])
        self.test_file = re.compile(data["test_file"])
        self.config_names = frozenset(data["config_names"])
        self.config = re.compile(data["config"])
        self.config_dirs = frozenset(data.get("config_dirs") or ())
        self.hook = re.compile(data["hook"])
        self.vcs_dirs = frozenset(data["vcs_dirs"])
        self.dependency_dirs = frozenset(data["dependency_dirs"])
        self.discovered_names = [re.compile(p) for p in data.get("discovered", ())]

    def guarded(self, path):
        parts = path.split("/")
        name = parts[-1]
        return bool(
            self.test_file.match(name)
            or set(parts[:-1]) & self.test_dirs
            or name in self.config_names
            or set(parts[:-1]) & self.config_dirs
            or self.config.match(name)
            or self.hook.search(name)
        )

    def discovered(self, path):
        """A file some supported runner would pick up as a test file."""
        name = path.rsplit("/", 1)[-1]
        return any(p.match(name) for p in self.discovered_names)


def clean(project, rules, reference, keep=()):
    """Remove what may not take part in grading (see the module docstring); what was removed.

    ``keep``: every path the reference has (its own sourceless ``.pyc`` files stay).
    """
    removed = []
    keep = set(keep)

    def walk(folder, rel):
        with os.scandir(folder) as entries:
            listed = sorted(entries, key=lambda e: e.name)
        for entry in listed:
            path = rel + "/" + entry.name if rel else entry.name
            if entry.is_symlink():
                os.unlink(entry.path)
                removed.append(path)
            elif entry.is_dir(follow_symlinks=False):
                # The repository is walked too: `node --test` discovers test files in .git
                # (it skips only node_modules), and Harbor's upload carries the agent's.
                if entry.name in rules.dependency_dirs:
                    # Task images install dependencies outside the project; these came with
                    # the submission (a fake runner in node_modules/.bin, a stale .pyc).
                    shutil.rmtree(entry.path)
                    removed.append(path + "/")
                    continue
                walk(entry.path, path)
            elif not entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(path)
            elif (rules.guarded(path) or rules.discovered(path)) and path not in reference:
                os.unlink(entry.path)
                removed.append(path)
            elif _SOURCELESS.search(entry.name) and path not in reference and path not in keep:
                # Python writes bytecode only under __pycache__ (removed above): a .pyc
                # elsewhere is imported as the module itself, with no source to read.
                os.unlink(entry.path)
                removed.append(path)

    walk(project, "")
    return removed


def shadowing(project, folders, reference):
    """Project modules in ``folders`` (on the check's import path) named like a standard-library
    or runner module, which the reference does not have (``reference``: its paths): tampering
    findings."""
    names = set(getattr(sys, "stdlib_module_names", ())) | RUNNER_MODULES
    found = []
    for folder in sorted(folders):
        base = os.path.join(project, folder) if folder != "." else project
        try:
            entries = sorted(os.listdir(base))
        except OSError:
            continue
        for name in entries:
            rel = name if folder == "." else folder + "/" + name
            full = os.path.join(base, name)
            match = _MODULE_FILE.match(name)
            module = match.group(1) if match else None
            init = _package_init(full) if module is None else None
            if init is not None:  # __init__.py, or compiled only: __init__.pyc, a native one
                module, rel = name, rel + "/" + init
            if module in names and rel not in reference:
                found.append(f"{rel} shadows the {module!r} module the tests may import")
    return found


def _package_init(folder):
    """The file that makes ``folder`` a regular package (any loader's ``__init__``), or None:
    a folder without one is a namespace portion, which every module found later wins over."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    for name in names:
        match = _MODULE_FILE.match(name)
        if match and match.group(1) == "__init__":
            return name
    return None


def import_folders(config, reference):
    """Project folders on the check's import path: its root, the check's folder, the test
    files' folders (unittest discovery and pytest put those first)."""
    project = config["project"].rstrip("/")
    workdir = os.path.relpath(config["workdir"], project)
    folders = {".", "." if workdir == os.curdir else workdir}
    folders |= {os.path.dirname(rel) or "." for rel in reference if rel.endswith(".py")}
    return folders
