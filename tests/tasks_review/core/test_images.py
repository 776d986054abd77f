"""The task images' recipe: the Go, Rust and services variants, and which a check needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundwork.core.docker.base import BaseImageSpec, mmdebstrap_command
from tasks_review.core import images
from tasks_review.core.images import named_variants, variants_for


def test_variants_are_recipes_of_their_own_named_in_their_tags():
    default, go, services = (
        BaseImageSpec(variants=named_variants(v)) for v in ((), ("go",), ("services",))
    )
    both = BaseImageSpec(variants=named_variants(("services", "go", "go")))
    # One recipe, however it is asked for.
    assert [v.name for v in both.variants] == ["go", "services"]
    assert len({s.recipe_hash for s in (default, go, services, both)}) == 4
    assert go.tag == f"bookworm-go-{go.recipe_hash}"
    assert both.tag == f"bookworm-go-services-{both.recipe_hash}"
    assert default.with_variants(named_variants(["go"])) == go
    public = BaseImageSpec(public_image="debian@sha256:" + "ab" * 32)
    # A configured image is used as it is.
    assert public.with_variants(named_variants(["go"])) is public


def test_the_go_variant_has_debians_backported_go_offline_and_a_warm_build_cache():
    spec = BaseImageSpec(variants=named_variants(["go"]))
    assert {"golang-go/bookworm-backports", "golang-src/bookworm-backports"} <= set(
        spec.all_packages()
    )
    assert "deb http://deb.debian.org/debian bookworm-backports main" in spec.sources()
    assert {"ENV GOPROXY=off", "ENV GOTOOLCHAIN=local"} <= set(spec.changes())
    hooks = spec.hooks()
    warm = next(h for h in hooks if "go test -count=1" in h)
    assert warm.startswith('chroot --userspec=1000:1000 "$1" env HOME=/home/agent GOPROXY=off')
    assert any("chown -R 1001:1001 /home/grader/.cache" in h for h in hooks)
    # Without backports (sid), the suite's own Go.
    sid = BaseImageSpec(suite="sid", security_mirror=None, variants=named_variants(["go"]))
    assert "golang-go" in sid.all_packages() and len(sid.sources()) == 1


def test_the_services_variant_starts_them_from_its_entrypoint_with_the_kits_own_script():
    from tasks_review.core.trials.kit import servers

    SERVERS_SCRIPT = images.SERVERS_SCRIPT
    spec = BaseImageSpec(variants=named_variants(["services"]))
    assert {"redis-server", "postgresql"} <= set(spec.all_packages())
    entry = f'ENTRYPOINT ["/usr/bin/python3", "-I", "{SERVERS_SCRIPT}", "entrypoint", "--"]'
    assert entry in spec.changes()
    command = mmdebstrap_command(spec, Path("/tmp/x.tar"))
    upload = next(a for a in command if "upload " in a)
    assert upload.endswith(f"kit/servers.py {SERVERS_SCRIPT}")
    # The recipe names the script by its content (not where this checkout lives): editing it
    # makes a new image.
    assert not any("/kit/servers.py" in h for h in spec.hooks())
    assert any(servers.PG_TEMPLATE in h and "initdb" in h for h in spec.hooks())


def test_services_and_the_grader_agree_on_the_go_settings_and_postgres_template():
    from tasks_review.core.trials.kit import running, servers

    assert dict(images.GO_ENV) == running.GO_ENV
    assert images.PG_TEMPLATE == servers.PG_TEMPLATE


def test_a_check_needs_go_for_go_code_and_services_when_it_names_some():
    assert variants_for(language="python") == ()
    assert variants_for(language="go") == ("go",)
    assert variants_for(language="rust") == ("rust",)
    assert variants_for(language="make", go_project=True) == ("go",)
    assert variants_for(language="python", services=["redis"]) == ("services",)


def test_a_variant_that_does_not_exist_is_refused_by_name():
    with pytest.raises(ValueError, match=r"unknown base image variants \['ruby'\]"):
        named_variants(["go", "ruby"])


def test_the_rust_variant_has_debians_newer_rust_and_cargo_offline():
    from tasks_review.core.trials.kit import running

    spec = BaseImageSpec(variants=named_variants(["rust"]))
    # rustc-web/cargo-web (bookworm-security): bookworm's own rustc 1.63 cannot read today's
    # Cargo.lock files. They come from the suites every recipe already lists.
    assert {"rustc-web", "cargo-web", "gcc", "libc6-dev"} <= set(spec.all_packages())
    assert "ENV CARGO_NET_OFFLINE=true" in spec.changes()
    assert spec.tag == f"bookworm-rust-{spec.recipe_hash}"
    assert dict(images.RUST_ENV).items() <= running.RUST_ENV.items()


def test_the_task_variants_keep_the_recipe_hashes_images_were_built_under():
    # Moving the recipe out of the Docker seam must not rename (so rebuild) any image. The
    # services variants were renamed on purpose when their script became kit/servers.py.
    tags = {
        names: BaseImageSpec(variants=named_variants(names)).tag
        for names in ((), ("go",), ("services",), ("go", "services"))
    }
    assert tags == {
        (): "bookworm-181b0a1a92ac55fa",
        ("go",): "bookworm-go-50e4a12babdad5d6",
        ("services",): "bookworm-services-60f4c51080cc8da3",
        ("go", "services"): "bookworm-go-services-c5c31e8845cf5588",
    }
