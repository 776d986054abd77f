"""Step 2 of grading (``grade.py``): the reference's guarded files, back and out of reach.

Every guarded file the reference has takes its exact bytes (``grading.json`` carries them
base64-encoded), owned by root in sticky folders, so the check cannot swap them while it runs;
afterwards, any that changed anyway is a tampering finding. Standard library only (Python 3.8+).
"""

import base64
import os
import shutil


def restore(project, reference):
    """Write every reference file, making way for it; the paths that differed."""
    restored = []
    for rel in sorted(reference):
        data = base64.b64decode(reference[rel])
        parts = rel.split("/")
        folder = project
        for part in parts[:-1]:
            folder = os.path.join(folder, part)
            if os.path.lexists(folder) and not (
                os.path.isdir(folder) and not os.path.islink(folder)
            ):
                os.unlink(folder)
            if not os.path.lexists(folder):
                os.mkdir(folder, 0o755)
        target = os.path.join(project, rel)
        if os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target)
        try:
            with open(target, "rb") as handle:
                same = handle.read() == data
        except OSError:
            same = False
        if not same:
            restored.append(rel)
        if os.path.lexists(target):
            os.unlink(target)
        # Not O_EXCL: fuse-overlayfs can refuse it on a name just unlinked over a lower layer.
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(target, 0o644)
    return restored


def protect(project, reference):
    """Reference files root-owned, in root-owned sticky folders anyone may add files to: the
    check cannot rewrite, rename or replace them (say, for a later runner in ``a && b``)."""
    folders = set()
    for rel in reference:
        target = os.path.join(project, rel)
        os.lchown(target, 0, 0)
        folder = os.path.dirname(rel)
        while True:
            folders.add(folder)
            if not folder:
                break
            folder = os.path.dirname(folder)
    for folder in folders:
        path = os.path.join(project, folder) if folder else project
        os.lchown(path, 0, 0)
        os.chmod(path, 0o1777)


def changed_during_check(project, reference):
    """Reference files that are not the reference's bytes any more (a tampering finding)."""
    changed = []
    for rel in sorted(reference):
        try:
            fd = os.open(os.path.join(project, rel), os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as handle:
                same = handle.read() == base64.b64decode(reference[rel])
        except OSError:
            same = False
        if not same:
            changed.append(f"{rel} was changed during the check")
    return changed
