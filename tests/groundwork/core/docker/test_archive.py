"""Copy-in and copy-out tars: what may cross into the verifier and what is refused."""

from __future__ import annotations

import io
import tarfile

import pytest

from groundwork.core.docker.archive import (
    ArchiveTooLarge,
    FileEntry,
    UnsafePath,
    extract_regular_files,
    pack,
    safe_relative,
)


def docker_cp_tar(*members: tuple[str, str, bytes | str]) -> bytes:
    """A tar shaped like ``GET /containers/ID/archive?path=/workspace``: the folder first.

    Each member is (name, kind, payload) with kind file, exe, dir, symlink, hardlink or fifo.
    """
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, kind, payload in members:
            info = tarfile.TarInfo(name)
            data = b""
            if kind in ("file", "exe"):
                data = payload if isinstance(payload, bytes) else payload.encode()
                info.size = len(data)
                info.mode = 0o755 if kind == "exe" else 0o644
            elif kind == "dir":
                info.type = tarfile.DIRTYPE
            elif kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, str(payload)
            elif kind == "hardlink":
                info.type, info.linkname = tarfile.LNKTYPE, str(payload)
            elif kind == "fifo":
                info.type = tarfile.FIFOTYPE
            elif kind == "chardev":
                info.type = tarfile.CHRTYPE
            tar.addfile(info, io.BytesIO(data) if data else None)
    return buffer.getvalue()


def chunked(data: bytes, size: int = 7) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def test_regular_files_come_back_relative_to_the_copied_folder_with_their_exec_bit():
    tar = docker_cp_tar(
        ("workspace", "dir", ""),
        ("workspace/src", "dir", ""),
        ("workspace/src/app.py", "file", "print('hi')\n"),
        ("workspace/run.sh", "exe", "#!/bin/sh\n"),
    )
    out = extract_regular_files(chunked(tar))
    assert out.files == {
        "src/app.py": FileEntry(b"print('hi')\n"),
        "run.sh": FileEntry(b"#!/bin/sh\n", executable=True),
    }
    assert out.refused == ()
    assert out.total_bytes == len("print('hi')\n") + len("#!/bin/sh\n")


def test_symlinks_are_refused_wherever_they_point():
    tar = docker_cp_tar(
        ("workspace", "dir", ""),
        ("workspace/leak", "symlink", "/etc/shadow"),
        ("workspace/up", "symlink", "../../etc"),
        ("workspace/inside", "symlink", "tests/test_app.py"),
        ("workspace/ok.txt", "file", "fine"),
    )
    out = extract_regular_files([tar])
    assert set(out.files) == {"ok.txt"}
    assert {r.path for r in out.refused} == {"leak", "up", "inside"}
    assert all(r.reason.startswith("symbolic link") for r in out.refused)
    assert any("/etc/shadow" in r.reason for r in out.refused)


def test_special_files_and_escaping_names_are_refused():
    tar = docker_cp_tar(
        ("workspace", "dir", ""),
        ("workspace/pipe", "fifo", ""),
        ("workspace/tty", "chardev", ""),
        ("workspace/../../etc/cron.d/x", "file", "evil"),
        ("/etc/passwd", "file", "evil"),
        ("elsewhere/file", "file", "not under the copied folder"),
    )
    out = extract_regular_files([tar])
    assert out.files == {}
    reasons = {r.path: r.reason for r in out.refused}
    assert reasons["pipe"].startswith("special file")
    assert reasons["tty"].startswith("special file")
    assert reasons["workspace/../../etc/cron.d/x"] == "path outside the copied folder"
    assert reasons["/etc/passwd"] == "path outside the copied folder"
    assert reasons["elsewhere/file"] == "path outside the copied folder"


def test_a_hard_link_becomes_a_copy_of_the_earlier_file_and_a_dangling_one_is_refused():
    tar = docker_cp_tar(
        ("workspace", "dir", ""),
        ("workspace/a.txt", "file", "shared"),
        ("workspace/b.txt", "hardlink", "workspace/a.txt"),
        ("workspace/c.txt", "hardlink", "etc/shadow"),
    )
    out = extract_regular_files([tar])
    assert out.files["b.txt"] == out.files["a.txt"] == FileEntry(b"shared")
    assert [r.path for r in out.refused] == ["c.txt"]


def test_a_single_copied_file_is_keyed_by_its_name():
    out = extract_regular_files([docker_cp_tar(("reward.txt", "file", "1"))])
    assert out.files == {"reward.txt": FileEntry(b"1")}


def test_a_copied_path_that_is_itself_a_symlink_yields_nothing():
    out = extract_regular_files([docker_cp_tar(("workspace", "symlink", "/"))])
    assert out.files == {}
    assert [r.path for r in out.refused] == ["workspace"]


def test_content_over_the_byte_limit_raises_instead_of_truncating():
    tar = docker_cp_tar(("w", "dir", ""), ("w/a", "file", "x" * 600), ("w/b", "file", "y" * 600))
    assert set(extract_regular_files([tar], max_bytes=1200).files) == {"a", "b"}
    with pytest.raises(ArchiveTooLarge):
        extract_regular_files([tar], max_bytes=1000)


def test_too_many_entries_raise_even_when_they_are_empty():
    members = [("w", "dir", "")] + [(f"w/d{i}", "dir", "") for i in range(50)]
    with pytest.raises(ArchiveTooLarge):
        extract_regular_files([docker_cp_tar(*members)], max_entries=20)


def test_the_raw_stream_is_bounded_before_tar_parsing_finishes():
    endless = iter(lambda: b"\0" * 65536, None)  # never ends: must stop on the byte budget
    with pytest.raises(ArchiveTooLarge):
        extract_regular_files(endless, max_bytes=1024, max_entries=4)


def test_pack_gives_files_and_their_folders_to_the_owner():
    data = pack(
        {"src/pkg/mod.py": b"x = 1\n", "run.sh": FileEntry(b"#!/bin/sh\n", True)},
        uid=1000,
        gid=1001,
    )
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert set(members) == {"src", "src/pkg", "src/pkg/mod.py", "run.sh"}
    assert all((m.uid, m.gid) == (1000, 1001) for m in members.values())
    assert members["src"].isdir() and members["src/pkg"].isdir()
    assert members["run.sh"].mode == 0o755
    assert members["src/pkg/mod.py"].mode == 0o644


def test_a_private_file_lands_readable_by_its_owner_alone():
    # The hidden probes: no other user may read them, not even before the grader locks them.
    data = pack({"tests/probes.json": FileEntry(b"{}", private=True)}, uid=0, gid=0)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        assert tar.getmember("tests/probes.json").mode == 0o600


def test_pack_then_extract_round_trips():
    files = {"a/b.py": FileEntry(b"b"), "c.sh": FileEntry(b"c", executable=True)}
    # under one folder, as docker cp sends it back
    packed = pack({f"workspace/{path}": entry for path, entry in files.items()}, uid=0, gid=0)
    out = extract_regular_files(chunked(packed, 3))
    assert out.files == files
    assert out.refused == ()


@pytest.mark.parametrize("path", ["", "/etc/passwd", "../x", "a/../../x", ".", "a\0b"])
def test_pack_refuses_paths_that_are_not_inside_the_target(path):
    with pytest.raises(UnsafePath):
        pack({path: b"x"}, uid=1000, gid=1000)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a/b", "a/b"),
        ("./a//b/", "a/b"),
        ("a/./b", "a/b"),
        ("../a", None),
        ("/a", None),
        ("a/..", None),
        ("", None),
    ],
)
def test_safe_relative(raw, expected):
    assert safe_relative(raw) == expected
