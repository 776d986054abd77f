"""What a shell command line does to files, read with certainty or not at all.

``run_script`` (``walk``) walks a parsed command line the way the shell would run it and hands
each file effect (``model``) to a ``Files`` sink as soon as it is known, so a later command in
the same line sees what an earlier one wrote (``echo x > a && cp a b``). Each program goes to
its handler in ``registry.HANDLERS``; the handlers live by family: ``builtins``, ``coreutils``,
``editors``, ``archives``, ``vcs``, ``network``, ``packages``, ``interpreters``, ``runners``,
``formatters``, ``containers``, ``databases``.

Certain effects are few and simple: ``echo``/``printf``/``cat`` (here-documents included)
redirected to a file, ``tee``, ``rm``, ``mv``, ``cp``, ``mkdir``, ``touch``, ``git mv``/``rm``,
patches. Everything else that may write is reported as lost: named targets of ``sed -i`` and
friends become a ``Write`` of unknown content, and when the targets cannot be known (scripts,
formatters, ``git checkout``, unknown programs) the directory becomes uncertain (``LostTree``).

Policy for checks: running tests, builds and type checkers does not rewrite sources (it writes
caches and build output, which the task image regenerates), so a recognised check has no file
effect unless it is asked to fix or update (``--fix``, ``--write``, ``-u``). Formatters lose
their targets, unless their own output says every run changed nothing (biome's "No fixes
applied", black's "left unchanged"). Project scripts (``npm run check``, ``mise run test``) are
judged by the bodies the runner echoes into the output (``> biome check --write .``) and, when
nothing was echoed, by name: test/build/typecheck scripts have no effect, any other script may
rewrite files. Read-only programs (``ls``, ``cat``, ``grep``, ``git status`` …) have no effect
here; what a simple read showed of a file is the engine's business (``reads``).
Inline code (``python -c``, ``node -e``, ``python - <<EOF``) is read-only when it names nothing
that writes files (``open(…, 'w')``, ``shutil``, ``subprocess``, ``fs.writeFile`` …); a script
file is opaque and makes its directory uncertain.
"""

# Importing the families registers their handlers.
from . import (  # noqa: F401
    archives,
    builtins,
    containers,
    coreutils,
    databases,
    editors,
    formatters,
    interpreters,
    network,
    packages,
    runners,
    vcs,
)
from .model import (
    CodexPatch,
    Copy,
    Delete,
    Effect,
    Files,
    GlobEffect,
    LostTree,
    MakeDir,
    Move,
    Touch,
    UnifiedPatch,
    Write,
)
from .registry import HANDLERS, Call, Handler, handles
from .runners import echoed_bodies
from .walk import FoundCheck, ShellRun, run_script

__all__ = [
    "HANDLERS",
    "Call",
    "CodexPatch",
    "Copy",
    "Delete",
    "Effect",
    "Files",
    "FoundCheck",
    "GlobEffect",
    "Handler",
    "LostTree",
    "MakeDir",
    "Move",
    "ShellRun",
    "Touch",
    "UnifiedPatch",
    "Write",
    "echoed_bodies",
    "handles",
    "run_script",
]
