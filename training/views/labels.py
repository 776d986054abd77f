"""Preference labelling: the queue of pairs per behaviour with the labellers' agreement, and the
keyboard-first labelling page (two rollouts side by side, A / B / tie / both bad, skip, then the
next).

Trajectory content is untrusted: templates escape it, and the only markup marked safe is
Pygments output (through the stepper's and the desk's display helpers), which escapes its input.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import push_url

from groundwork.access.errors import Refused, status_of
from groundwork.selectors.holds import held_note, hold_beat_seconds, is_held_by, is_held_by_other
from groundwork.services import holds
from project.htmx import render_fragment, render_page, wants_fragment
from training.services.labels import PAIRS

from ..models import Behaviour, BehaviourTask, PairLabel, PreferencePair
from ..roles import EXPORT, LABEL
from ..selectors import labels as reads
from ..selectors.pairs import pair_view
from ..services import labels
from ..services.pairs import pairs_build

can_label = permission_required(LABEL, raise_exception=True)
TEMPLATE = "training/labels/pair.html"


def _scope(request: HttpRequest) -> Behaviour | None:
    """The behaviour a labeller works on (``?behaviour=slug``), or every behaviour."""
    slug = request.GET.get("behaviour", "")
    return get_object_or_404(Behaviour, slug=slug) if slug else None


def _with_scope(url: str, behaviour: Behaviour | None, **extra: str) -> str:
    query = ({"behaviour": behaviour.slug} if behaviour else {}) | extra
    return f"{url}?{urlencode(query)}" if query else url


@can_label
@require_GET
def queue(request: HttpRequest) -> HttpResponse:
    behaviour = _scope(request)
    now = timezone.now()
    buildable = Behaviour.objects.filter(tasks__split=BehaviourTask.Split.TRAIN).distinct()
    left = reads.workable(request.user, now, behaviour.pk if behaviour else None).count()
    done = bool(request.GET.get("done"))
    return render_page(
        request,
        "training/labels/queue.html",
        {
            "behaviour": behaviour,
            "counts": reads.pair_counts(request.user, now),
            "agreement": reads.label_agreement(behaviour.pk if behaviour else None),
            "needed": reads.labels_needed(),
            "buildable": buildable.order_by("slug") if request.user.has_perm(EXPORT) else [],
            "done": done,
            # With nothing free the next button is off: say who holds what instead.
            "held": _held_note(request, behaviour) if done or not left else "",
            "left": left,
        },
    )


def _held_note(request: HttpRequest, behaviour: Behaviour | None) -> str:
    held = reads.held_by_others(request.user, timezone.now(), behaviour.pk if behaviour else None)
    return held_note(held, "pair")


@permission_required(EXPORT, raise_exception=True)
@require_POST
def build(request: HttpRequest, slug: str) -> HttpResponse:
    behaviour = get_object_or_404(Behaviour, slug=slug)
    added = pairs_build(user=request.user, behaviour_id=behaviour.pk)
    messages.success(
        request,
        f"{behaviour.slug}: {len(added)} new pair{'s' if len(added) != 1 else ''}"
        if added
        else f"{behaviour.slug}: no new pairs (every pair of its graded train rollouts exists)",
    )
    return redirect(_with_scope(reverse("loop:labels"), behaviour))


@can_label
@require_POST
def next_pair(request: HttpRequest) -> HttpResponse:
    """Hold the next pair left for this labeller and open it."""
    behaviour = _scope(request)
    pair = holds.hold_next(PAIRS, user=request.user, scope=behaviour.pk if behaviour else None)
    if pair is None:
        return redirect(_with_scope(reverse("loop:labels"), behaviour, done="1"))
    return redirect(_with_scope(reverse("loop:pair", args=[pair.pk]), behaviour))


def _pair(pk: int) -> PreferencePair:
    return get_object_or_404(
        PreferencePair.objects.select_related("behaviour", "task__candidate", "held_by"), pk=pk
    )


def _context(
    request: HttpRequest,
    pair: PreferencePair,
    behaviour: Behaviour | None,
    *,
    error: str = "",
    notice: str = "",
) -> dict[str, Any]:
    user, now = request.user, timezone.now()
    seen = reads.labels_for(pair, user)
    hold = _hold_context(request, pair, behaviour, now)
    workable = pair.status == PreferencePair.Status.OPEN and seen.mine is None
    return {
        **hold,
        # Post the hold on load for a pair this labeller could take: free, or theirs to renew.
        "take": workable and not hold["held_by_other"],
        "view": pair_view(pair, user),
        "labels": seen,
        "can_label": workable and not hold["held_by_other"],
        "tags": PairLabel.Tag.choices,
        "scope": behaviour,
        "queue_url": _with_scope(reverse("loop:labels"), behaviour),
        "label_url": _with_scope(reverse("loop:label", args=[pair.pk]), behaviour),
        "skip_url": _with_scope(reverse("loop:skip", args=[pair.pk]), behaviour),
        "error": error,
        "notice": notice,
        "more_url": reverse("loop:pair_more", args=[pair.pk]),
    }


def _hold_context(
    request: HttpRequest, pair: PreferencePair, behaviour: Behaviour | None, now: datetime
) -> dict[str, Any]:
    """Who holds the pair, as its hold banner shows it, and how the page renews its own hold
    (a beat while in use) and gives it back on leaving."""
    return {
        "pair": pair,
        "held_by_me": is_held_by(pair, request.user, now),
        "held_by_other": is_held_by_other(pair, request.user, now),
        "take": False,
        "hold_url": _with_scope(reverse("loop:hold", args=[pair.pk]), behaviour),
        "beat": hold_beat_seconds(),
        "leave_url": reverse("loop:release", args=[pair.pk]),
    }


@can_label
@require_GET
def pair_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The pair side by side; it writes nothing (the page posts `hold` once it is up)."""
    context = _context(request, _pair(pk), _scope(request))
    return render_page(request, TEMPLATE, context, "pair")


@can_label
@require_POST
def hold(request: HttpRequest, pk: int) -> HttpResponse:
    """Hold the pair, or renew one's hold: the hold banner under htmx, the pair without."""
    behaviour = _scope(request)
    pair = _pair(pk)
    try:  # a pair one could label is held; anything else (labelled, held by another) is shown
        holds.hold(PAIRS, user=request.user, row_id=pair.pk)
    except Refused:
        pass
    if not wants_fragment(request):
        return redirect(_with_scope(reverse("loop:pair", args=[pk]), behaviour))
    return render_fragment(
        request, f"{TEMPLATE}#hold", _hold_context(request, _pair(pk), behaviour, timezone.now())
    )


@can_label
@require_GET
def pair_more(request: HttpRequest, pk: int) -> HttpResponse:
    """The next slice of one capped field of the pair's steps ("show more")."""
    pair = _pair(pk)
    try:
        start = int(request.GET.get("start", "0"))
    except ValueError:
        start = 0
    part = pair_view(pair, request.user).fields.more(request.GET.get("field", ""), start)
    if part is None:
        raise Http404("No such field in this pair.")
    context = {"c": part, "more_url": reverse("loop:pair_more", args=[pair.pk])}
    return render_fragment(request, "trajectories/partials/capped.html", context)


def _next(request: HttpRequest, after: int, notice: str) -> HttpResponse:
    """The next pair in place of the one just labelled or skipped: a swap of the pair (and its
    URL) under htmx, a redirect without it."""
    behaviour = _scope(request)
    following = holds.hold_next(
        PAIRS, user=request.user, scope=behaviour.pk if behaviour else None, after=after
    )
    if following is None:
        empty = _with_scope(reverse("loop:labels"), behaviour)
        if not wants_fragment(request):
            return redirect(empty)
        context = {"queue_url": empty, "notice": notice, "held": _held_note(request, behaviour)}
        response = render_fragment(request, f"{TEMPLATE}#empty", context)
        return push_url(response, empty)
    url = _with_scope(reverse("loop:pair", args=[following.pk]), behaviour)
    if not wants_fragment(request):
        return redirect(url)
    context = _context(request, _pair(following.pk), behaviour, notice=notice)
    return push_url(render_fragment(request, f"{TEMPLATE}#pair", context), url)


@can_label
@require_POST
def label(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        left = int(request.POST.get("left", ""))
    except ValueError:
        left = 0
    try:
        labels.pair_label_submit(
            user=request.user,
            pair_id=pk,
            choice=request.POST.get("choice", ""),
            left=left,
            tag=request.POST.get("tag", ""),
        )
    except Refused as error:
        context = _context(request, _pair(pk), _scope(request), error=str(error))
        return render_page(request, TEMPLATE, context, "pair", status=status_of(error))
    return _next(request, pk, f"Pair #{pk} labelled.")


@can_label
@require_POST
def release(request: HttpRequest, pk: int) -> HttpResponse:
    """The beacon the page sends as its tab closes or navigates away: the hold goes back at
    once instead of when it runs out. Nothing reads the answer."""
    try:
        holds.release(PAIRS, user=request.user, row_id=pk, left=True)
    except Refused as error:
        return HttpResponse(status=status_of(error))
    return HttpResponse(status=204)


@can_label
@require_POST
def skip(request: HttpRequest, pk: int) -> HttpResponse:
    pair = _pair(pk)
    if is_held_by(pair, request.user, timezone.now()):
        holds.release(PAIRS, user=request.user, row_id=pk)
    return _next(request, pk, f"Pair #{pk} skipped.")
