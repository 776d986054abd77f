"""Restoring the reference's guarded files (kit/restoring.py), and noticing changes to them."""

from __future__ import annotations

import base64

from .helpers import load, write

restoring = load("restoring")


def test_restoring_writes_the_references_exact_bytes_making_way_for_them(tmp_path):
    project = tmp_path / "app"
    write(project, "tests/test_ops.py", b"gutted")
    write(project, "package.json", b'{"scripts": {"test": "exit 0"}}')
    write(project, "spec", b"a file where the reference has a folder")
    (project / "tests/data.json").mkdir(parents=True)  # a folder where it has a file
    odd = "tests/odd name\n\udcff.py"
    reference = {
        "tests/test_ops.py": b"real tests",
        "package.json": b'{"scripts": {"test": "node --test"}}',
        "spec/a.spec.js": b"spec",
        "tests/data.json": b"{}",
        "tests/unchanged.py": b"same",
    }
    write(project, "tests/unchanged.py", b"same")
    encoded = {k: base64.b64encode(v).decode() for k, v in reference.items()}
    encoded[odd] = base64.b64encode(b"\x00\xff").decode()

    restored = restoring.restore(str(project), encoded)

    for rel, data in reference.items():
        assert (project / rel).read_bytes() == data, rel
        assert (project / rel).stat().st_mode & 0o777 == 0o644
    assert (project / odd).read_bytes() == b"\x00\xff"
    assert "tests/unchanged.py" not in restored
    assert {"tests/test_ops.py", "package.json", "spec/a.spec.js", "tests/data.json"} <= set(
        restored
    )


def test_protected_reference_files_can_be_added_beside_but_not_replaced(tmp_path):
    project = tmp_path / "app"
    write(project, "tests/test_a.py", b"real")
    reference = {"tests/test_a.py": base64.b64encode(b"real").decode()}
    assert restoring.changed_during_check(str(project), reference) == []
    (project / "tests/test_a.py").write_bytes(b"stubbed")
    assert restoring.changed_during_check(str(project), reference) == [
        "tests/test_a.py was changed during the check"
    ]
