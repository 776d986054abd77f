"""Which function says what a program does to files: ``HANDLERS``, filled by ``@handles``.

The walk looks a program up by its name (wrappers removed, ``python3.12`` read as ``python``,
see ``programs``): a handler when one is registered, else nothing for the read-only programs
below, else the program may have written anything in its directory. Each family module
(``coreutils``, ``vcs``, ``packages`` …) registers its programs next to their code, so
``grep -rn '"sed"'`` lands where sed is handled.

A handler gets the walk (``Shell``: the files, the targets helpers, the walk's state) and the
``Call``; it emits effects and returns the working directory afterwards (only ``cd`` and its
kin change it) and what it printed when that is known (``echo x | tee f``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..programs import basename
from ..shell import Word

if TYPE_CHECKING:
    from .walk import Shell

Handled = tuple[str | None, str | None]  # (working directory afterwards, stdout when known)


@dataclass(frozen=True, slots=True)
class Call:
    """One program run: its words from the program on, where it ran and what it read."""

    words: tuple[Word, ...]
    cwd: str | None
    stdin: str | None

    @property
    def args(self) -> list[str]:
        return [w.value for w in self.words]

    @property
    def name(self) -> str:
        return basename(self.words[0].value)


Handler = Callable[["Shell", Call], Handled]

HANDLERS: dict[str, Handler] = {}


def handles(*names: str) -> Callable[[Handler], Handler]:
    """Register the decorated function as the handler of every program in ``names``."""

    def register(handler: Handler) -> Handler:
        for name in names:
            if name in HANDLERS:
                raise ValueError(f"{name} has two handlers: {HANDLERS[name]} and {handler}")
            HANDLERS[name] = handler
        return handler

    return register


# Programs with no handler that never write the project's files. A handler wins over this list
# (echo, cat, set … are here for `find -exec` and `xargs`, which only ask whether a program reads).
READ_ONLY = frozenset(
    """
    ls ll la dir vdir tree cat bat head tail less more most grep egrep fgrep rg ag ack ugrep
    fd wc sort uniq cut tr nl diff cmp comm file stat du df pwd echo printf true false test [
    [[ which whereis type hash date whoami id uname hostname printenv sleep wait jobs ps pgrep
    top htop lsof kill pkill killall basename dirname realpath readlink md5sum md5 sha1sum
    sha256sum shasum cksum xxd od hexdump strings jq yq column fold fmt expand unexpand rev tac
    paste join seq yes exit return export unset set shopt alias unalias ulimit umask trap local
    declare typeset readonly read history clear reset tput stty man help info tldr ping dig
    nslookup host netstat ss ifconfig ip free uptime nproc lscpu locale getconf arch sw_vers
    open xdg-open code cursor subl pbcopy pbpaste xclip xsel say notify-send osascript cal
    watch env column nvidia-smi lsblk mount df tokei cloc scc eza exa fzf delta difftree
    mdfind mdls defaults screen tmux gh-dash glow w who last dmesg journalctl systemctl
    launchctl brew apt apt-get apt-cache dpkg rpm yum dnf apk pacman port snap flatpak choco
    winget pyenv nvm asdf rbenv sdk volta corepack fnm rustup goenv jenv conda mamba pipx
    http https httpie wrk ab curlie nc telnet ssh-add gpg node-gyp tsc-watch true
    :
    """.split()
)
VERSION_FLAGS = frozenset({"--version", "-v", "-V", "--help", "-h", "version", "help", "-version"})
