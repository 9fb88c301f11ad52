"""What a ReplicaSet sync needs to know about the pods it owns, kept incrementally.

calculateStatus (replica_set_utils.go) counts the owned active pods, those carrying the template's
labels and the ready ones; claimPods needs to know whether any owned pod stopped matching the
selector. Recounting every owned pod on every sync costs O(pods of the set) per pod event. A view
remembers, per owned pod, the facts a sync reads, and the pod events since the last sync mark
only the changed pods for re-evaluation, so a sync costs O(pods changed since the last one). The
results are exactly those of the full recount: a view is rebuilt whenever the selector or the
template labels it was computed for change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kubetaint.api.selectors import LabelSelector
from kubetaint.controllers.replicaset import podutil

JSON = dict[str, Any]
Key = tuple[str, str]


class PodFacts(NamedTuple):  # a tuple: built for every pod event a view sees
    pod: JSON
    matches: bool  # the selector matches its labels
    active: bool
    labeled: bool  # it carries every template label
    ready: bool


_UNSET = object()


def _facts(values: tuple[JSON, bool, bool, bool, bool]) -> PodFacts:
    """PodFacts(*values) without its generated constructor's Python call."""
    return tuple.__new__(PodFacts, values)


def pod_facts(pod: JSON, selector: LabelSelector, template_labels: Mapping[str, str]) -> PodFacts:
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return PodFacts(
        pod,
        selector.matches(labels),
        podutil.is_active(pod),
        labels == template_labels or all(labels.get(k) == v for k, v in template_labels.items()),
        podutil.is_ready(pod),
    )


def _same_fact_inputs(old: JSON, new: JSON) -> bool:
    """Whether pod_facts reads the same from `new` as from `old`: the very same labels and status
    objects (read-only, so the same labels, phase and conditions) and the same deletionTimestamp."""
    old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
    return (
        old.get("status") is new.get("status")
        and old_meta.get("labels") is new_meta.get("labels")
        and old_meta.get("deletionTimestamp") == new_meta.get("deletionTimestamp")
    )


@dataclass
class OwnedPodsView:
    """The facts about one owner's pods, as of its last refresh."""

    selector: LabelSelector
    template_labels: Mapping[str, str]
    facts: dict[Key, PodFacts] = field(default_factory=dict)
    dirty: set[Key] = field(default_factory=set)
    unmatched: int = 0  # owned pods the selector does not match
    active: int = 0  # owned active pods
    active_matched: int = 0  # owned active pods the selector matches
    labeled: int = 0  # owned active pods with the template labels
    ready: int = 0  # owned active ready pods
    #: whether the selector matches the template labels (worked out at first need)
    template_matches: bool | None = None

    def _count(self, facts: PodFacts, sign: int) -> None:
        self.unmatched += sign * (not facts.matches)
        if facts.active:
            self.active += sign
            self.active_matched += sign * facts.matches
            self.labeled += sign * facts.labeled
            self.ready += sign * facts.ready

    def put(self, key: Key, pod: JSON | None) -> None:
        """Record the current pod under `key` (None: no longer owned)."""
        old = self.facts.pop(key, None)
        if old is not None:
            if old.pod is pod:
                self.facts[key] = old
                return
            if pod is not None and _same_fact_inputs(old.pod, pod):
                # pod_facts would find the same facts (an owner or other metadata change): the
                # counts stay, only the pod is the new one
                self.facts[key] = _facts((pod, old.matches, old.active, old.labeled, old.ready))
                return
            self._count(old, -1)
        if pod is not None:
            facts = self._pod_facts(pod)
            self.facts[key] = facts
            self._count(facts, +1)

    def _pod_facts(self, pod: JSON) -> PodFacts:
        """pod_facts(pod, selector, template_labels); a pod carrying labels equal to the
        template's (the usual pod) is matched as the template labels are, worked out once."""
        labels = (pod.get("metadata") or {}).get("labels") or {}
        template_labels = self.template_labels
        if labels != template_labels:
            return pod_facts(pod, self.selector, template_labels)
        matches = self.template_matches
        if matches is None:
            matches = self.template_matches = self.selector.matches(template_labels)
        return PodFacts(pod, matches, podutil.is_active(pod), True, podutil.is_ready(pod))

    def refresh(self, current: Callable[[Key], JSON | None]) -> None:
        """Apply the changes marked since the last refresh (`current(key)`: the owned pod or None).

        A pod not counted yet (an adoption) carrying labels equal to the template's and no
        deletionTimestamp has its facts made inline: whether it is active and ready depends on
        its status alone, compared by equality only with constants, so a status equal to the
        last one's (one template's pods) has the same answers."""
        if not self.dirty:
            return
        dirty, self.dirty = self.dirty, set()
        facts, put = self.facts, self.put
        template_labels = self.template_labels
        last_status: object = _UNSET
        active = ready = False
        for key in dirty:
            pod = current(key)
            if pod is None or key in facts:
                put(key, pod)
                continue
            meta = pod.get("metadata") or {}
            if (meta.get("labels") or {}) != template_labels or meta.get("deletionTimestamp"):
                new = self._pod_facts(pod)
            else:
                status = pod.get("status")
                if status is not last_status and status != last_status:
                    active, ready = podutil.is_active(pod), podutil.is_ready(pod)
                    last_status = status
                matches = self.template_matches
                if matches is None:
                    matches = self.template_matches = self.selector.matches(template_labels)
                new = _facts((pod, matches, active, True, ready))
            facts[key] = new
            self._count(new, +1)

    def sorted_facts(self) -> list[PodFacts]:
        return [self.facts[key] for key in sorted(self.facts)]


class OwnedPodViews:
    """One view per owner UID, rebuilt when its selector or template labels change."""

    def __init__(
        self,
        owned_pods: Callable[[str], list[JSON]],
        owned_pod: Callable[[str, Key], JSON | None],
        owned_pod_lookup: Callable[[str], Callable[[Key], JSON | None]] | None = None,
    ):
        """`owned_pod_lookup(uid)`, optional: a function doing `owned_pod(uid, key)` for one
        refresh (while nothing is written)."""
        self._owned_pods = owned_pods
        self._owned_pod = owned_pod
        self._owned_pod_lookup = owned_pod_lookup
        self._views: dict[str, OwnedPodsView] = {}

    def mark(self, uid: str, key: Key) -> None:
        view = self._views.get(uid)
        if view is not None:
            view.dirty.add(key)

    def marks_of(self, uid: str) -> set[Key] | None:
        """The set `mark(uid, key)` adds keys to until the view's next refresh (None: no view,
        `mark` does nothing)."""
        view = self._views.get(uid)
        return None if view is None else view.dirty

    def forget(self, uid: str) -> None:
        self._views.pop(uid, None)

    def view(self, uid: str, selector: LabelSelector, template_labels: Mapping[str, str]) -> OwnedPodsView:
        """The up-to-date view of `uid`'s pods under `selector` and `template_labels`."""
        view = self._views.get(uid)
        if (
            view is None
            or (view.selector is not selector and view.selector != selector)  # parsed once per owner
            or view.template_labels != template_labels
        ):
            view = OwnedPodsView(selector, dict(template_labels))
            for pod in self._owned_pods(uid):
                view.put(podutil.key_of(pod), pod)
            self._views[uid] = view
            return view
        if view.dirty:
            lookup = self._owned_pod_lookup
            view.refresh(lookup(uid) if lookup is not None else lambda key: self._owned_pod(uid, key))
        return view
