"""Deploying adapted behaviour: plain Python the Django app wraps.

- ``adapters`` — an adapter version's identity (what "the same version" means) and its checks.
- ``gate`` — the held-out gate: adapter against base agent on the same held-out tasks, every
  behaviour those tasks score, verdicts with the numbers behind them.
- ``bucketing`` — a subject's stable place in a rollout percentage (basis points).
- ``states`` — deployment states and one pure function per action, refusing with typed errors.
- ``budget`` — usage per UTC day and when a report crosses a deployment's cap.
- ``route`` — the route endpoint's answer from a snapshot; the base model on every fault.
- ``serving`` — vLLM LoRA arguments and a LiteLLM proxy config from the active state.

Nothing here reads a clock, a database or the network: callers pass times and snapshots in.
"""
