"""The decision page's generators: "build the button, don't train", and the prompt rule.

from training.core.buttons import claude_code_hook, git_hooks, plain_rule, prompt_rule, try_hook

spec = catalogue()["read-before-edit"]
plain_rule(spec)          # RuleVerdict(plain=True, reason='A plain rule: …', form='order', …)
hook = claude_code_hook(spec)
hook.settings_json()      # the .claude/settings.json fragment (hooks.PreToolUse …)
hook.script               # the standalone python3 script it runs
try_hook(hook, facts, workdir=tmp).ok   # it refuses what the rules forbid in a rollout, no more
git_hooks(spec)           # () here; pre-push / pre-commit for force_push / tamper_with_tests
prompt_rule(spec)         # the AGENTS.md / CLAUDE.md text

- ``plain.py``: is the spec a plain if/then rule (only forbidden actions, or a fixed order of
  two concrete actions), and why (not).
- ``claude.py``: the Claude Code ``PreToolUse`` hook, settings fragment and script;
  ``runtime.py`` is what the script runs, ``rules.py`` the config and the one-call judgement it
  shares with ``precommit.py``; ``bundle.py`` embeds those and the project's own detectors in
  the script, so the hook and the eval harness decide by the same code.
- ``git.py``: the ``pre-push`` and ``pre-commit`` hooks.
- ``trial.py``: a hook fed the calls of recorded rollouts, its verdicts against the rules'.
- ``prompt.py`` and ``words.py``: the spec in plain words.

Nothing here touches Django; the decision rows, the page and its audit are the app's.
"""

from .claude import GeneratedHook, NothingToBlock, claude_code_hook
from .git import GitHook, git_hooks
from .plain import RuleVerdict, plain_rule
from .prompt import prompt_rule
from .trial import CallVerdict, HookTrial, try_hook

__all__ = [
    "CallVerdict",
    "GeneratedHook",
    "GitHook",
    "HookTrial",
    "NothingToBlock",
    "RuleVerdict",
    "claude_code_hook",
    "git_hooks",
    "plain_rule",
    "prompt_rule",
    "try_hook",
]
