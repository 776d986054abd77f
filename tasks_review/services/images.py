"""The base image task Dockerfiles start FROM: configured, or built offline by bootstrap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings

from tasks_review.core.docker import BaseImageSpec, InfraError, bootstrap
from tasks_review.core.docker.base import DEFAULT_REGISTRY


class NoBaseImage(RuntimeError):
    """No pinned base image is configured or bootstrapped: a setup error, not a drop."""


def base_image_spec() -> BaseImageSpec:
    """The configured base image: TRAJ2ENV settings where present, the built-in recipe otherwise."""
    conf: dict[str, Any] = getattr(settings, "TRAJ2ENV", {})
    return BaseImageSpec(
        cache_dir=Path(conf.get("CACHE_DIR") or settings.VAR_DIR / "cache"),
        registry=conf.get("BASE_IMAGE_REGISTRY") or DEFAULT_REGISTRY,
        public_image=conf.get("BASE_IMAGE") or None,
    )


def base_image_ref() -> str:
    """The FROM reference for task Dockerfiles: a configured public image, else the base image
    built offline by bootstrap (a no-op when the engine already has it)."""
    configured = settings.TRAJ2ENV.get("BASE_IMAGE")
    if configured:
        return configured
    try:
        record = bootstrap(base_image_spec())
    except InfraError as exc:
        raise NoBaseImage(f"no base image: {exc}") from None
    if not record.pinned_ref:
        raise NoBaseImage(
            "no base image: run `python manage.py images bootstrap` (or set TRAJ2ENV_BASE_IMAGE)"
        )
    return record.pinned_ref
