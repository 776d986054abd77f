"""Go modules for an offline image build, fetched on the host through the user's module proxy.

A Go task whose go.mod requires modules carries them in its build context as a module proxy
folder (Go's ``GOPROXY`` protocol laid out on disk: ``<module>/@v/<version>.info``, ``.mod``,
``.zip``), and the image's Go reads it as ``GOPROXY=file://...`` with the network off.
``fetch_go_modules`` fills it for the module a check builds in:

* **Through the user's proxy**: ``GoSettings.from_user`` reads GOPROXY, GOPRIVATE / GONOPROXY
  and GOFLAGS from the environment, then from ``go env -w``'s file (``$GOENV``, else
  ``~/.config/go/env``), then Go's defaults (``https://proxy.golang.org,direct``). The proxy list
  is followed as Go follows it: after a ``,`` only when a proxy has no such module (404 or 410),
  after a ``|`` on any error. ``direct`` and the modules GOPRIVATE names come from their version
  control, which traj2env does not fetch; ``off`` fetches nothing. ``file://`` proxies are read
  from disk. GOFLAGS ``-mod=vendor`` means the project's vendor/ folder, so nothing is fetched.
* **Pinned by go.sum**: every go.sum line is one file to fetch (``/go.mod`` lines the ``.mod``,
  the others the module's ``.zip``), checked against its ``h1:`` hash (Go's dirhash) before it
  is kept. A module go.mod requires that go.sum does not list is unavailable, as it would be to
  ``go test`` itself. No date pin is needed.
* **A cache shared between tasks**: ``cache_dir/proxy/`` is itself a proxy folder, every file
  written whole (``hostcache``); a module found there with the right hash is not fetched again.
  **Offline mode** uses that cache only.

``GoModulesUnavailable`` names the source and why, which the task writer turns into a
``dependency_unavailable_offline`` drop.
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import io
import json
import os
import re
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .fetching import Fetch, Unavailable, nearest_folder, write_atomic

DEFAULT_PROXY = "https://proxy.golang.org,direct"
# Where the image keeps the task's modules (a proxy folder; root's, read-only to everyone).
IMAGE_PROXY = "/opt/traj2env/goproxy"
_FETCH_TIMEOUT = 60.0
_WORKERS = 8


@dataclass(frozen=True, slots=True)
class GoSettings:
    proxy: str = DEFAULT_PROXY  # GOPROXY as Go reads it
    private: str = ""  # GONOPROXY (or GOPRIVATE): modules that never go through a proxy
    flags: str = ""  # GOFLAGS

    @classmethod
    def from_user(cls, environ: Mapping[str, str], env_file: Path | None = None) -> GoSettings:
        """The user's settings: their environment first, then ``go env -w``'s file."""
        saved = _read_env_file(env_file if env_file is not None else go_env_file(environ))

        def value(name: str) -> str | None:
            found = environ.get(name)
            return found if found is not None else saved.get(name)

        private = value("GONOPROXY")
        return cls(
            proxy=value("GOPROXY") or DEFAULT_PROXY,
            private=private if private is not None else value("GOPRIVATE") or "",
            flags=value("GOFLAGS") or "",
        )

    def vendored(self) -> bool:
        return "-mod=vendor" in self.flags.split()

    def describe(self) -> str:
        return f"GOPROXY={self.proxy}"


def go_env_file(environ: Mapping[str, str]) -> Path:
    """Where ``go env -w`` keeps its settings: ``$GOENV``, else the user's config folder."""
    if environ.get("GOENV"):
        return Path(environ["GOENV"])
    config = environ.get("XDG_CONFIG_HOME") or os.path.join(environ.get("HOME") or "~", ".config")
    return Path(os.path.expanduser(config)) / "go" / "env"


def _read_env_file(path: Path) -> dict[str, str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    found = {}
    for line in text.splitlines():
        key, eq, value = line.strip().partition("=")
        if eq and key:
            found[key] = value
    return found


@dataclass(frozen=True, slots=True)
class GoModules:
    files: Mapping[str, Path]  # proxy-relative path -> the file in the host cache
    modules: tuple[str, ...]  # "module version", sorted
    source: str  # the proxy list they came through


class GoModulesUnavailable(Unavailable):
    what = "Go modules"


@dataclass(frozen=True, slots=True)
class _Entry:
    module: str
    version: str
    kind: str  # "mod" or "zip"
    h1: str

    def path(self, suffix: str) -> str:
        return f"{escape(self.module)}/@v/{escape(self.version)}.{suffix}"


def escape(path: str) -> str:
    """Go's case encoding for module paths and versions on a proxy: ``A`` is ``!a``.

    >>> escape("github.com/BurntSushi/toml")
    'github.com/!burnt!sushi/toml'
    """
    return re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), path)


_GO_BLOCK = re.compile(r"^(require|replace|exclude|retract)\s*\($")


def go_module_directives(text: str) -> list[tuple[str, list[str]]]:
    """(verb, words) for each directive of a go.mod, blocks unfolded, comments dropped."""
    found = []
    block = None
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if block is not None:
            if line == ")":
                block = None
            else:
                found.append((block, line.split()))
            continue
        match = _GO_BLOCK.match(line)
        if match:
            block = match.group(1)
            continue
        verb, _, rest = line.partition(" ")
        found.append((verb, rest.split()))
    return found


def fetch_go_modules(
    files: Mapping[str, bytes], workdir: str, fetch: Fetch, settings: GoSettings | None = None
) -> GoModules | None:
    """The modules the check's module (the go.mod nearest at or above ``workdir``) needs, in
    the host cache; None when it needs none (no go.mod, nothing required, vendored).
    ``settings``: the user's (``GoSettings.from_user``) unless given; go.sum pins the modules, so
    ``fetch.before`` plays no part. GoModulesUnavailable when they cannot be had."""
    settings = settings or GoSettings.from_user(fetch.env())
    folder = nearest_folder(files, workdir, "go.mod")
    if folder is None:
        return None
    join = (lambda name: name) if folder == "." else (lambda name: f"{folder}/{name}")
    if join("vendor/modules.txt") in files or settings.vendored():
        return None
    required = _required(files[join("go.mod")].decode("utf-8", "replace"), folder)
    if not required:
        return None
    source = settings.describe()
    entries = _go_sum(files.get(join("go.sum"), b"").decode("utf-8", "replace"))
    pinned = {(e.module, e.version) for e in entries if e.kind == "mod"}
    unpinned = [f"{m} {v}" for m, v in required if (m, v) not in pinned]
    if unpinned:
        raise GoModulesUnavailable(
            source, f"go.sum does not pin {', '.join(unpinned[:3])}: Go itself would refuse"
        )
    private = [e.module for e in entries if _matches(settings.private, e.module)]
    if private:
        raise GoModulesUnavailable(
            f"the version control of {private[0]}",
            "GOPRIVATE/GONOPROXY sends it past the proxy, to its version control, "
            "which traj2env does not fetch from",
        )
    proxy = _Proxy(settings.proxy, fetch.cache_dir / "proxy", fetch.offline)
    with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
        fetched = list(pool.map(proxy.fetch, entries))
    found = {rel: path for group in fetched for rel, path in group.items()}
    modules = sorted({f"{e.module} {e.version}" for e in entries})
    return GoModules(files=found, modules=tuple(modules), source=source)


def _required(go_mod: str, folder: str) -> list[tuple[str, str]]:
    """(module, version) of each requirement no folder of the project replaces."""
    local: set[str] = set()
    requires = []
    for verb, words in go_module_directives(go_mod):
        if verb == "require" and len(words) >= 2:
            requires.append((words[0], words[1]))
        elif verb == "replace" and "=>" in words:
            target = words[words.index("=>") + 1 :]
            if target and target[0].startswith(("./", "../", "/")):
                local.add(words[0])
            elif len(target) >= 2:
                local.add(words[0])  # replaced by another module: go.sum pins that one
    return [(m, v) for m, v in requires if m not in local]


def _go_sum(text: str) -> list[_Entry]:
    entries = []
    for line in text.splitlines():
        words = line.split()
        if len(words) != 3 or not words[2].startswith("h1:"):
            continue
        module, version, h1 = words
        kind = "mod" if version.endswith("/go.mod") else "zip"
        entries.append(_Entry(module, version.removesuffix("/go.mod"), kind, h1))
    return list(dict.fromkeys(entries))


def _matches(patterns: str, module: str) -> bool:
    """Go's ``module.MatchPrefixPatterns``: a glob matches the module's leading elements."""
    parts = module.split("/")
    for pattern in filter(None, (p.strip() for p in patterns.split(","))):
        globs = pattern.rstrip("/").split("/")
        if len(globs) <= len(parts) and all(
            fnmatch.fnmatchcase(part, glob) for part, glob in zip(parts, globs, strict=False)
        ):
            return True
    return False


def h1_hash(files: Iterable[tuple[str, bytes]]) -> str:
    """Go's ``dirhash.Hash1``: sha256 over one ``"<sha256 hex>  <name>\\n"`` line per file, in
    the order of the file names."""
    lines = [f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in sorted(files)]
    summary = hashlib.sha256("".join(lines).encode()).digest()
    return "h1:" + base64.b64encode(summary).decode()


def mod_hash(data: bytes) -> str:
    return h1_hash([("go.mod", data)])


def zip_hash(data: bytes) -> str:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return h1_hash((info.filename, archive.read(info)) for info in archive.infolist())


class _NotFound(Exception):
    pass


class _Proxy:
    """The user's proxy list over the host cache (itself a proxy folder)."""

    def __init__(self, proxy: str, cache: Path, offline: bool) -> None:
        self.proxy, self.cache, self.offline = proxy, cache, offline

    def fetch(self, entry: _Entry) -> dict[str, Path]:
        """The files one go.sum line needs, in the cache, checked: {proxy path: cache file}."""
        wanted = ["info", "mod"] + (["zip"] if entry.kind == "zip" else [])
        found = {}
        for suffix in wanted:
            rel = entry.path(suffix)
            cached = self.cache / rel
            if not (cached.is_file() and self._good(entry, suffix, cached.read_bytes())):
                if self.offline:
                    raise GoModulesUnavailable(
                        str(self.cache),
                        f"offline, and it does not hold {entry.module} "
                        f"{entry.version} ({suffix}) yet",
                    )
                data = self._download(rel, entry)
                if not self._good(entry, suffix, data):
                    raise GoModulesUnavailable(
                        f"GOPROXY={self.proxy}",
                        f"{entry.module} {entry.version} ({suffix}) does not match go.sum's "
                        f"{entry.h1}: refused",
                    )
                write_atomic(cached, data)
            found[rel] = cached
        return found

    @staticmethod
    def _good(entry: _Entry, suffix: str, data: bytes) -> bool:
        if suffix == "info":
            try:
                return isinstance(json.loads(data), dict)
            except ValueError:
                return False
        if suffix != entry.kind:  # a .mod fetched for a zip line: its own line checks it
            return True
        try:
            return (mod_hash(data) if suffix == "mod" else zip_hash(data)) == entry.h1
        except (zipfile.BadZipFile, OSError):
            return False

    def _download(self, rel: str, entry: _Entry) -> bytes:
        """Go's walk of the proxy list: ``,`` goes on after not-found, ``|`` after any error."""
        problems: list[tuple[str, str, bool]] = []  # (proxy, why, was it a not-found)
        items = re.split(r"([,|])", self.proxy)
        proxies = [(items[i].strip(), items[i - 1] if i else ",") for i in range(0, len(items), 2)]
        for url, separator in proxies:
            if problems and separator == "," and not problems[-1][2]:
                break  # the last error was not a not-found: a "," list stops there
            if url in ("", "off"):
                problems.append((url or "(empty)", "GOPROXY=off: fetching is disabled", False))
                break
            if url == "direct":
                problems.append(
                    (
                        "direct",
                        "it comes from its version control, which traj2env does not fetch from",
                        False,
                    )
                )
                continue
            try:
                return _get(url.rstrip("/") + "/" + rel)
            except _NotFound as exc:
                problems.append((url, str(exc), True))
            except (OSError, ValueError) as exc:
                problems.append((url, _reason(exc), False))
        said = "; ".join(f"{where}: {why}" for where, why, _ in problems) or "no proxy is set"
        raise GoModulesUnavailable(
            f"GOPROXY={self.proxy}", f"{entry.module} {entry.version}: {said}"
        )


def _get(url: str) -> bytes:
    if url.startswith("file://"):
        path = Path(urllib.request.url2pathname(url[len("file://") :]))
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise _NotFound("not found") from None
    if not url.startswith(("https://", "http://")):
        raise ValueError(f"not a proxy URL: {url}")
    request = urllib.request.Request(url, headers={"User-Agent": "traj2env (Go modules)"})
    try:
        with urllib.request.urlopen(request, timeout=_FETCH_TIMEOUT) as response:  # noqa: S310
            return response.read()
    except urllib.error.HTTPError as exc:
        if exc.code in (404, 410):
            raise _NotFound(f"not found ({exc.code})") from None
        raise


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"answered {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return f"not reachable ({exc.reason})"
    if isinstance(exc, TimeoutError):
        return "not reachable (timed out)"
    return f"not reachable ({exc})"
