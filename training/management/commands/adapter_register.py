"""`manage.py adapter_register NAME@VERSION --behaviour SLUG --base-model MODEL ... --as USERNAME`:
register an adapter version, as the adapter form does; versions are immutable.

Registering the same content again changes nothing (exit 0, ``"created": false``); the same
NAME@VERSION with other content is refused (exit 1) naming what differs, as is someone without
the register role. Exit 2 a usage error (a field the rules refuse, an unknown behaviour or user).
"""

from __future__ import annotations

from typing import Any

from training.management.loop_commands import Done, LoopCommand, export_named, usage_error
from training.services.deploy_adapters import adapter_register


class Command(LoopCommand):
    help = "Register an adapter version for a behaviour (the start of a deployment)."
    person = "required"

    def add_step_arguments(self, parser) -> None:
        def field(flag: str, help: str, **kwargs: Any) -> None:
            parser.add_argument(flag, required=True, help=help, **kwargs)

        parser.add_argument(
            "adapter", metavar="NAME@VERSION", help="e.g. failing-test-repair-lora@1.0"
        )
        field("--behaviour", "the behaviour it was trained for (its slug)", metavar="SLUG")
        field("--base-model", "the model it adapts", metavar="MODEL")
        field("--artifact-uri", "where the weights are (file://, s3://, hf://...)", metavar="URI")
        field("--artifact-sha256", "the weights' sha256", metavar="SHA256")
        dataset = parser.add_mutually_exclusive_group(required=True)
        dataset.add_argument(
            "--export", metavar="DIR_OR_ID", help="the training export it was trained on"
        )
        dataset.add_argument(
            "--dataset-sha256", metavar="SHA256", help="or that export's sha256, as it is"
        )
        field("--rank", "the LoRA rank", type=int)
        field("--eval-suite", "the eval it was measured on")
        field("--training-plan", "the plan it was trained by (e.g. plan-7)", metavar="PLAN")

    def step(self, *, user, adapter: str, **options: Any) -> Done:
        name, at, version = adapter.rpartition("@")
        if not at:
            raise usage_error(f"{adapter!r} is not NAME@VERSION, e.g. failing-test-repair-lora@1.0")
        names = (
            "behaviour", "base_model", "artifact_uri", "artifact_sha256", "rank", "eval_suite",
            "training_plan",
        )  # fmt: skip
        fields = {n: options[n] for n in names}
        fields["dataset_sha256"] = (
            export_named(options["export"]).sha256
            if options["export"]
            else options["dataset_sha256"]
        )
        row, created = adapter_register(user=user, name=name, version=version, **fields)
        payload = {
            "adapter": row.pk,
            "key": row.key,
            "served_name": row.served_name,
            "behaviour": row.behaviour.slug,
            "created": created,
        }
        text = (
            f"registered {row.key}, served as {row.served_name}"
            if created
            else f"{row.key} was already registered with this content; nothing changed"
        )
        return Done(payload, text)
