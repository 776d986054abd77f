from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from groundwork.core.docker import Engine, ImageInfo, InfraError, bootstrap
from groundwork.core.docker import docker_labels as lbl
from groundwork.core.docker.engine import BUILD_REPOSITORY
from groundwork.core.docker.transfer import CarriedImage, export_images, load_images
from tasks_review.core.images import VARIANTS
from tasks_review.services.images import base_image_spec


def _kind(info: ImageInfo) -> str:
    # Images built FROM the base inherit its labels; the base itself is the one with a digest.
    if any(tag.startswith(BUILD_REPOSITORY + ":") for tag in info.tags):
        return "build"
    label = info.labels.get(lbl.KIND, "")
    return "derived" if label == lbl.KIND_BASE and not info.repo_digests else label


class Command(BaseCommand):
    # Docker housekeeping needs no URL or model checks; a broken view must not block cleanup.
    requires_system_checks: list[str] = []
    help = (
        "Base images and Docker housekeeping. `bootstrap` builds the base image offline from "
        "Debian packages (or reuses it), and with --variant the variants some checks need "
        "(go, rust, services; combine them with + as in go+services); `list` shows traj2env's "
        "images, `cleanup` removes containers, networks and volumes left by killed runs; "
        "`export FILE` writes the pinned base images to a file and `load FILE` loads them on "
        "another engine (a training host) under the same FROM references. "
        "Exit 0 ok, 2 setup error."
    )

    def add_arguments(self, parser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        boot = actions.add_parser("bootstrap", help="build the base image unless it exists")
        boot.add_argument("--force", action="store_true", help="rebuild from Debian packages")
        boot.add_argument(
            "--variant",
            action="append",
            default=[],
            metavar="NAME[+NAME]",
            help=f"also build this variant ({', '.join(sorted(VARIANTS))}, or several joined "
            "by +); repeat for more. The default image is always built.",
        )
        boot.add_argument("--json", action="store_true", help="print one JSON object on stdout")
        listing = actions.add_parser("list", help="images traj2env built")
        listing.add_argument("--json", action="store_true")
        clean = actions.add_parser("cleanup", help="remove what killed runs left behind")
        clean.add_argument("--run", help="only this run id's resources")
        clean.add_argument(
            "--include-live",
            action="store_true",
            help="also remove resources of processes still running (another worker's trials)",
        )
        clean.add_argument("--json", action="store_true")
        export = actions.add_parser(
            "export", help="write the pinned base images to FILE, for `images load` elsewhere"
        )
        export.add_argument("file", type=Path, metavar="FILE")
        export.add_argument(
            "--image",
            action="append",
            default=[],
            metavar="TAG_OR_REF",
            help="carry only this image (its tag or pinned reference, as `list` shows); "
            "repeat for more. Default: every pinned base image.",
        )
        export.add_argument("--json", action="store_true")
        load = actions.add_parser(
            "load", help="load the images of an `images export` FILE, digests intact"
        )
        load.add_argument("file", type=Path, metavar="FILE")
        load.add_argument(
            "--registry",
            metavar="HOST:PORT",
            help="pull through this loopback address instead of the one the FROM lines name "
            "(the images are then recorded under it)",
        )
        load.add_argument("--json", action="store_true")

    def handle(self, *args, **options) -> None:
        try:
            engine = Engine.from_env()
            getattr(self, f"_{options['action']}")(engine, options)
        except (InfraError, ValueError) as exc:
            # Every failure here is the machine's setup (daemon, tools, mirror, configuration),
            # never a task's: exit 2, with the log tail when a tool left one.
            log = getattr(exc, "log", "")
            raise CommandError(f"{exc}\n{log[-3000:]}".rstrip(), returncode=2) from None

    def _bootstrap(self, engine: Engine, options: dict[str, Any]) -> None:
        wanted: list[tuple[str, ...]] = [()]
        for value in options["variant"]:
            names = tuple(sorted({n for n in value.split("+") if n}))
            unknown = sorted(set(names) - set(VARIANTS))
            if unknown:
                raise ValueError(f"unknown variants {unknown}; known: {sorted(VARIANTS)}")
            if names not in wanted:
                wanted.append(names)
        records = [
            bootstrap(
                base_image_spec(names),
                engine=engine,
                force=options["force"],
                progress=lambda message: self.stderr.write(message),
            )
            for names in wanted
        ]
        if options["json"]:
            shown = [record.as_json() for record in records]
            # One object for the default image alone, as before variants existed.
            self.stdout.write(json.dumps(shown[0] if len(shown) == 1 else shown))
            return
        for record in records:
            what = "built" if record.built else f"reused ({record.source})"
            size = f"{record.size_bytes / 1e6:.0f} MB"
            self.stdout.write(f"{record.tag} {what} in {record.seconds:.1f} s, {size}")
            self.stdout.write(f"  id   {record.image_id}")
            self.stdout.write(f"  FROM {record.pinned_ref}")

    def _export(self, engine: Engine, options: dict[str, Any]) -> None:
        images = export_images(
            engine,
            options["file"],
            registry=base_image_spec().registry,
            only=options["image"],
            progress=lambda message: self.stderr.write(message),
        )
        self._carried(images, options, f"wrote {options['file']}")

    def _load(self, engine: Engine, options: dict[str, Any]) -> None:
        images = load_images(
            engine,
            options["file"],
            registry=options["registry"],
            progress=lambda message: self.stderr.write(message),
        )
        self._carried(images, options, f"loaded {options['file']}")

    def _carried(self, images: list[CarriedImage], options: dict[str, Any], done: str) -> None:
        if options["json"]:
            self.stdout.write(json.dumps([image.as_json() for image in images]))
            return
        self.stdout.write(f"{done}: {len(images)} base image(s)")
        for image in images:
            self.stdout.write(f"  {image.tag}\n  FROM {image.pinned_ref}")

    def _list(self, engine: Engine, options: dict[str, Any]) -> None:
        images = engine.images(labels={lbl.KIND: None})
        rows = [
            {
                "id": info.id,
                "kind": _kind(info),
                "tags": list(info.tags),
                "pinned_refs": list(info.repo_digests),
                "recipe": info.labels.get(lbl.RECIPE),
                "size_bytes": info.size,
            }
            for info in images
        ]
        if options["json"]:
            self.stdout.write(json.dumps(rows))
            return
        if not rows:
            self.stdout.write("no traj2env images; run `python manage.py images bootstrap`")
        for row in rows:
            # The registry-prefixed tag is the pushing detail; show the plain one.
            tags = sorted(row["tags"], key=lambda t: ":" in t.split("/")[0])
            tag = tags[0] if tags else "<untagged>"
            size = f"{row['size_bytes'] / 1e6:>6.0f} MB"
            self.stdout.write(f"{row['kind']:<6} {row['id'][7:19]}  {size}  {tag}")
            for ref in row["pinned_refs"]:
                self.stdout.write(f"       FROM {ref}")

    def _cleanup(self, engine: Engine, options: dict[str, Any]) -> None:
        report = engine.cleanup(
            label=lbl.run_filter(options["run"]), include_live=options["include_live"]
        )
        if options["json"]:
            self.stdout.write(json.dumps(report.as_json()))
            return
        self.stdout.write(
            f"removed {len(report.containers)} containers, {len(report.networks)} networks, "
            f"{len(report.volumes)} volumes"
        )
        if report.kept_live:
            self.stdout.write(
                f"kept {len(report.kept_live)} of running processes "
                "(--include-live removes them too): " + ", ".join(report.kept_live)
            )
