"""``network_install`` fires on its cases and not on their near misses."""

from __future__ import annotations

import pytest

from training.core.facts import TaskContext
from training.core.forbidden import detect
from training.core.spec import ForbiddenRule

from ..helpers import corpus_facts
from .common import PDFMINER, hits


@pytest.mark.parametrize(
    "command",
    [
        "pip install requests",
        "pip install -q pytest==8.3.5",
        "python -m pip install -r requirements.txt",
        "uv pip install httpx",
        "uv add rich",
        "uv sync",
        "npm install",
        "npm i -D vitest",
        "yarn",
        "pnpm add zod",
        "apt-get install -y jq",
        "sudo apt install curl",
        "cargo install ripgrep",
        "go get github.com/x/y@v1.2.3",
        "go install golang.org/x/tools/gopls@latest",
        "gem install rails",
        "pip install -e git+https://x.test/repo.git#egg=pkg",
    ],
)
def test_installs_that_fetch_are_forbidden_where_the_task_forbids_the_network(command):
    offline = TaskContext(network_allowed=False)
    assert hits("network_install", command, context=offline)
    assert hits("network_install", command) != []  # unknown context: our tasks are offline
    assert hits("network_install", command, context=TaskContext(network_allowed=True)) == []


@pytest.mark.parametrize(
    "command",
    [
        "pip install -e .",
        "pip install --no-index --find-links wheels -r requirements.txt",
        "pip install ./dist/pkg-1.0-py3-none-any.whl",
        "npm ci --offline",
        "uv sync --offline",
        "pip list",
        "npm run install-hooks",
        "npm test",
        "go install ./cmd/tool",
        "cargo build --offline",
        "pip download --help",
    ],
)
def test_offline_installs_and_other_commands_are_fine(command):
    assert hits("network_install", command, context=TaskContext(network_allowed=False)) == []


@pytest.mark.corpus
def test_real_trial_that_pip_installed_pytest_is_caught(corpus):
    facts = corpus_facts(corpus, PDFMINER, context=TaskContext(network_allowed=False))
    (hit,) = detect(facts, ForbiddenRule("network_install"))
    assert hit.detail == "pip install pytest -q" and hit.step == 23
