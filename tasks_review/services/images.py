"""The base images task Dockerfiles start FROM: configured, or built offline by bootstrap.

One default recipe and its variants (``core/images.py``: ``go``, ``services``), each built the
first time a candidate needs it and cached by recipe under ``TRAJ2ENV_CACHE_DIR`` like the
default; a configured public image (``TRAJ2ENV_BASE_IMAGE``) serves every candidate as it is
(the image probe then drops what it cannot run).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.conf import settings

from groundwork.core.docker import BaseImageSpec, InfraError, bootstrap
from groundwork.core.docker.base import DEFAULT_REGISTRY
from tasks_review.core.images import named_variants


class NoBaseImage(RuntimeError):
    """No pinned base image is configured or bootstrapped: a setup error, not a drop."""


def base_image_spec(variants: Iterable[str] = ()) -> BaseImageSpec:
    """The configured base image: TRAJ2ENV settings where present, the built-in recipe otherwise
    (with ``variants`` added)."""
    conf: dict[str, Any] = getattr(settings, "TRAJ2ENV", {})
    spec = BaseImageSpec(
        cache_dir=Path(conf.get("CACHE_DIR") or settings.VAR_DIR / "cache"),
        registry=conf.get("BASE_IMAGE_REGISTRY") or DEFAULT_REGISTRY,
        public_image=conf.get("BASE_IMAGE") or None,
    )
    return spec.with_variants(named_variants(variants))


def base_is_public() -> bool:
    """Whether task images start FROM a configured public image rather than traj2env's own."""
    return bool(settings.TRAJ2ENV.get("BASE_IMAGE"))


def base_image_ref(variants: Iterable[str] = ()) -> str:
    """The FROM reference for task Dockerfiles: a configured public image, else the base image
    (the variant with ``variants``) built offline by bootstrap (a no-op when the engine already
    has it; two workers at once build it once, under bootstrap's lock)."""
    configured = settings.TRAJ2ENV.get("BASE_IMAGE")
    if configured:
        return configured
    spec = base_image_spec(variants)
    try:
        record = bootstrap(spec)
    except InfraError as exc:
        raise NoBaseImage(f"no base image {spec.tag}: {exc}") from None
    if not record.pinned_ref:
        raise NoBaseImage(
            "no base image: run `python manage.py images bootstrap` (or set TRAJ2ENV_BASE_IMAGE)"
        )
    return record.pinned_ref
