"""Package sources the dependency tests serve themselves: an npm registry on loopback and a Go
module proxy folder (``file://``), each holding a small package of the test's own.

    with npm_registry({"leftpad-x": {"1.0.0": (EARLY, SOURCE), ...}}) as url: ...
    proxy = go_proxy(tmp_path, GREET_MODULE, "v1.0.0", GREET_FILES)    # a folder, and go.sum
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import json
import tarfile
import threading
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from tasks_review.core.trials.gomodules import escape, mod_hash, zip_hash

# -- npm ----------------------------------------------------------------------------------------

NpmVersions = Mapping[str, tuple[datetime, str]]  # version -> (published, index.js)


def npm_tarball(name: str, version: str, index_js: str) -> bytes:
    """A package tarball as npm packs it: ``package/package.json`` and ``package/index.js``."""
    manifest = json.dumps({"name": name, "version": version, "main": "index.js"}).encode()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for path, data in (("package/package.json", manifest), ("package/index.js", index_js)):
            raw = data if isinstance(data, bytes) else data.encode()
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(raw), 0o644, 499162500
            archive.addfile(info, io.BytesIO(raw))
    return out.getvalue()


@contextmanager
def npm_registry(packages: Mapping[str, NpmVersions]) -> Iterator[str]:
    """A registry on 127.0.0.1 serving each package's packument (with publication times, which
    npm's ``--before`` reads) and its tarballs; yields its URL. Requests are counted in
    ``served`` on the handler class."""
    tarballs: dict[str, bytes] = {}
    documents: dict[str, bytes] = {}
    served: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server hook's name
            served.append(self.path)
            body = documents.get(self.path.rstrip("/")) or tarballs.get(self.path)
            if body is None:
                self.send_response(404)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"error":"not found"}')
                return
            self.send_response(200)
            kind = "application/json" if self.path in documents else "application/octet-stream"
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    for name, versions in packages.items():
        document: dict = {"name": name, "versions": {}, "time": {}, "dist-tags": {}}
        for version, (published, index_js) in sorted(versions.items()):
            tgz = npm_tarball(name, version, index_js)
            path = f"/{name}/-/{name}-{version}.tgz"
            tarballs[path] = tgz
            document["versions"][version] = {
                "name": name,
                "version": version,
                "main": "index.js",
                "dist": {
                    "tarball": url.rstrip("/") + path,
                    "shasum": hashlib.sha1(tgz).hexdigest(),  # noqa: S324 - npm's own field
                    "integrity": "sha512-"
                    + base64.b64encode(hashlib.sha512(tgz).digest()).decode(),
                },
            }
            document["time"][version] = published.isoformat().replace("+00:00", "Z")
            document["dist-tags"]["latest"] = version
        stamps = sorted(document["time"].values())
        document["time"].update(created=stamps[0], modified=stamps[-1])
        documents[f"/{name}"] = json.dumps(document).encode()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        Handler.served = served  # type: ignore[attr-defined]
        yield url
    finally:
        server.shutdown()
        server.server_close()


# -- Go -----------------------------------------------------------------------------------------


def go_module_zip(module: str, version: str, files: Mapping[str, bytes]) -> bytes:
    """A module zip as Go makes it: every file under ``<module>@<version>/``."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(files.items()):
            archive.writestr(f"{module}@{version}/{name}", data)
    return out.getvalue()


def go_proxy(
    root: Path, module: str, version: str, files: Mapping[str, bytes], published: str
) -> tuple[Path, str]:
    """A module proxy folder holding ``module@version`` (its ``list``, ``.info``, ``.mod`` and
    ``.zip``, laid out as GOPROXY's protocol asks); returns it and the module's go.sum lines."""
    folder = root / escape(module) / "@v"
    folder.mkdir(parents=True, exist_ok=True)
    go_mod = files["go.mod"]
    archive = go_module_zip(module, version, files)
    (folder / "list").write_text(version + "\n")
    (folder / f"{version}.info").write_text(json.dumps({"Version": version, "Time": published}))
    (folder / f"{version}.mod").write_bytes(go_mod)
    (folder / f"{version}.zip").write_bytes(archive)
    go_sum = (
        f"{module} {version} {zip_hash(archive)}\n{module} {version}/go.mod {mod_hash(go_mod)}\n"
    )
    return root, go_sum
