"""What the scheduler derives from a pod once (mirrors framework.PodInfo / QueuedPodInfo inputs).

Requests, tolerations and affinity are extracted when the pod enters the scheduler so hot loops read
plain attributes instead of walking JSON.
"""

from __future__ import annotations

import json
import marshal
from collections.abc import Hashable, Mapping
from typing import Any

from kubetaint.api.quantity import QuantityError
from kubetaint.clock.base import parse_time
from kubetaint.scheduler.resources import InputError, Resources, object_ref, pod_requests
from kubetaint.speed.memo import Memo

HostPort = tuple[str, str, int]  # (hostIP, protocol, hostPort)


def pod_key(pod: Mapping[str, Any]) -> str:
    """The cache key: metadata.uid, or namespace/name for objects without one (files, tests)."""
    meta = pod.get("metadata") or {}
    uid = meta.get("uid")
    if uid:
        return str(uid)
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"


def _toleration_signature(tolerations: list[dict[str, Any]]) -> tuple[tuple[str, str, str, str], ...]:
    if not tolerations:
        return ()
    return tuple(
        (
            str(t.get("key") or ""),
            str(t.get("operator") or ""),
            str(t.get("value") or ""),
            str(t.get("effect") or ""),
        )
        for t in tolerations
    )


def _host_ports(spec: Mapping[str, Any]) -> tuple[HostPort, ...]:
    ports: list[HostPort] = []
    containers = list(spec.get("containers") or ())
    # Sidecar init containers keep running, so their host ports are in use too.
    containers += [c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
    for c in containers:
        for p in c.get("ports") or ():
            host_port = int(p.get("hostPort") or 0)
            if host_port <= 0:
                continue
            ports.append((str(p.get("hostIP") or "0.0.0.0"), str(p.get("protocol") or "TCP"), host_port))
    return tuple(ports)


class PodInfo:
    """Scheduling-relevant facts of one pod (read-only view of the pod dict)."""

    __slots__ = (
        "affinity",
        "facts",
        "has_required_affinity",
        "host_ports",
        "key",
        "name",
        "namespace",
        "node_name",
        "nominated_node_name",
        "nonzero",
        "pod",
        "preemption_policy",
        "preferred_terms",
        "priority",
        "requests",
        "scheduling_gates",
        "start_time",
        "tol_sig",
        "tolerations",
    )

    def __init__(self, pod: Mapping[str, Any], key: str | None = None) -> None:
        """`key`: pod_key(pod), when the caller has it already."""
        spec = pod.get("spec") or {}
        self.node_name: str = spec.get("nodeName") or ""
        self._take_facts(_spec_facts(pod, spec))
        self._read_pod(pod, key)

    @classmethod
    def refreshed(cls, prior: PodInfo, pod: Mapping[str, Any], key: str | None = None) -> PodInfo:
        """The PodInfo of `pod`, a newer version of `prior.pod` whose spec has the same facts
        (`same_spec_facts`): everything derived from the spec but nodeName is taken over (the
        values are never changed in place), the rest (node, name, status) is read afresh
        (`key`: pod_key(pod), when the caller has it already)."""
        fresh = cls.__new__(cls)
        fresh.node_name = (pod.get("spec") or {}).get("nodeName") or ""
        fresh._take_facts(prior)
        fresh._read_pod(pod, key)
        return fresh

    def _take_facts(self, facts: _SpecFacts | PodInfo) -> None:
        """The spec-derived facts, from a _SpecFacts or another PodInfo of the same spec (copied
        into slots: the scheduler's hot loops read them as plain attributes). `facts`: the
        _SpecFacts they come from (shared by the pods of one template)."""
        self.facts: _SpecFacts = facts if isinstance(facts, _SpecFacts) else facts.facts
        self.priority: int = facts.priority
        self.preemption_policy: str = facts.preemption_policy
        self.tolerations: list[dict[str, Any]] = facts.tolerations
        self.tol_sig: tuple[tuple[str, str, str, str], ...] = facts.tol_sig
        self.requests: Resources = facts.requests
        self.nonzero: Resources = facts.nonzero
        self.host_ports: tuple[HostPort, ...] = facts.host_ports
        self.scheduling_gates: tuple[str, ...] = facts.scheduling_gates
        self.affinity: Mapping[str, Any] = facts.affinity
        self.has_required_affinity: bool = facts.has_required_affinity
        self.preferred_terms: list[dict[str, Any]] = facts.preferred_terms

    def _read_pod(self, pod: Mapping[str, Any], key: str | None = None) -> None:
        """What does not come from the spec: identity (`key`: pod_key(pod) when given),
        nomination and start time."""
        meta = pod.get("metadata") or {}
        status = pod.get("status") or {}
        self.pod: Mapping[str, Any] = pod
        self.key = pod_key(pod) if key is None else key
        self.namespace: str = meta.get("namespace") or "default"
        self.name: str = meta.get("name") or ""
        self.nominated_node_name: str = status.get("nominatedNodeName") or ""
        self.start_time = _start_time(pod, status.get("startTime") or meta.get("creationTimestamp"))

    def renew(self, pod: Mapping[str, Any]) -> None:
        """Speeds up a bound pod's owner, label or status change in the scheduler's cache: this
        PodInfo takes `pod`, a newer version of `self.pod` with the very same spec object and
        key, instead of a new PodInfo being made (`Cache` renews only PodInfos no queue holds,
        and not in reference mode, KUBETAINT_REFERENCE=1). What comes from the status is read
        again when the status object changed."""
        status = pod.get("status")
        if status is self.pod.get("status"):
            self.pod = pod
            return
        self._read_pod(pod, self.key)

    def __repr__(self) -> str:
        return f"PodInfo({self.namespace}/{self.name})"


class _SpecFacts:
    """What PodInfo derives from a pod's spec apart from nodeName (never changed once made)."""

    __slots__ = (
        "affinity",
        "filter_sig",
        "has_required_affinity",
        "host_ports",
        "nonzero",
        "pod_affinity_sig",
        "preemption_policy",
        "preferred_terms",
        "priority",
        "requests",
        "required_sig",
        "scheduling_gates",
        "tol_sig",
        "tolerations",
        "values",
    )

    def __init__(self, pod: Mapping[str, Any], spec: Mapping[str, Any]) -> None:
        # held: the ids in its _SPEC_FACTS key stay these values' while it lives
        self.values = tuple(spec.values())
        priority = spec.get("priority")
        self.priority: int = int(priority) if isinstance(priority, int) else 0
        self.preemption_policy: str = spec.get("preemptionPolicy") or "PreemptLowerPriority"
        self.tolerations: list[dict[str, Any]] = list(spec.get("tolerations") or ())
        self.tol_sig = _toleration_signature(self.tolerations)
        self.requests: Resources = pod_requests(pod)
        self.nonzero: Resources = pod_requests(pod, non_missing=True)
        self.host_ports = _host_ports(spec)
        self.scheduling_gates: tuple[str, ...] = tuple(
            str(g.get("name", "")) for g in spec.get("schedulingGates") or ()
        )
        self._read_affinity(spec)

    @classmethod
    def with_affinity_of(cls, other: _SpecFacts, spec: Mapping[str, Any]) -> _SpecFacts:
        """Speeds up the facts of the pods a DaemonSet pins each to its node (its memo,
        `scheduler.podinfo.spec_facts_but_affinity`, holds nothing with KUBETAINT_REFERENCE=1).

        The facts of `spec`, whose values other than affinity (and nodeName) are those `other`
        was derived from: what does not depend on the affinity is taken over (never changed once
        made), the rest derived from `spec`."""
        facts = cls.__new__(cls)
        facts.values = tuple(spec.values())
        facts.priority = other.priority
        facts.preemption_policy = other.preemption_policy
        facts.tolerations = other.tolerations
        facts.tol_sig = other.tol_sig
        facts.requests = other.requests
        facts.nonzero = other.nonzero
        facts.host_ports = other.host_ports
        facts.scheduling_gates = other.scheduling_gates
        facts._read_affinity(spec)
        return facts

    def _read_affinity(self, spec: Mapping[str, Any]) -> None:
        """What depends on the spec's affinity (and nodeSelector), and the filter signature."""
        self.affinity: Mapping[str, Any] = ((spec.get("affinity") or {}).get("nodeAffinity")) or {}
        self.has_required_affinity = bool(spec.get("nodeSelector")) or bool(
            self.affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        )
        self.preferred_terms: list[dict[str, Any]] = list(
            self.affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
        )
        #: The nodeSelector and the required node affinity, by value (None: empty, absent): pods
        #: with equal signatures have equal required node affinity (NodeAffinity's memos).
        self.required_sig: tuple[str | None, str | None] = (
            _by_value(spec.get("nodeSelector")),
            _exactly(self.affinity.get("requiredDuringSchedulingIgnoredDuringExecution")),
        )
        #: The podAffinity and podAntiAffinity, by value (None when the pod has neither): what
        #: the parsed pod affinity terms are remembered by (scheduler.affinity_terms).
        self.pod_affinity_sig: str | None = _pod_affinity_sig(spec)
        #: Everything in the spec (nodeName aside) the filters that judge a node by the pod's spec
        #: alone read, by value: pods with equal signatures get equal verdicts from them
        #: (scheduler.filter_memo).
        self.filter_sig: Hashable = (
            self.tol_sig,
            tuple(sorted(self.requests.items())),
            self.host_ports,
            self.required_sig,
        )

    #: what is derived, compared by __eq__ (`values` only holds the ids of the key alive)
    _DERIVED: tuple[str, ...] = tuple(name for name in __slots__ if name != "values")

    def __eq__(self, other: object) -> bool:
        """Equal facts: what is derived is equal (two specs with equal values give equal facts)."""
        if not isinstance(other, _SpecFacts):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._DERIVED)

    __hash__ = None  # type: ignore[assignment]


def _by_value(value: Any) -> str | None:
    """A hashable rendering of a JSON value, equal for equal values (None when empty)."""
    if not value:
        return None
    return _exactly(value)


def _exactly(value: Any) -> str | None:
    """A hashable rendering of a JSON value, equal for equal values, different for different ones
    (None only for None)."""
    if value is None:
        return None
    try:
        return json.dumps(value, sort_keys=True, default=repr)
    except TypeError:  # keys of mixed types: not sortable (equal values then may differ: no harm)
        return repr(value)


def _pod_affinity_sig(spec: Mapping[str, Any]) -> str | None:
    """raw_pod_affinity's (podAffinity, podAntiAffinity) by value, None when it has neither."""
    affinity = spec.get("affinity")
    if not affinity or not isinstance(affinity, Mapping):
        return None
    aff, anti = affinity.get("podAffinity"), affinity.get("podAntiAffinity")
    if not aff and not anti:
        return None
    return _exactly([aff or {}, anti or {}])


def same_spec_facts(old: Any, new: Any) -> bool:
    """Whether PodInfo derives the same facts (nodeName aside) from the specs `old` and `new`:
    the very same object, or plain dicts holding the very same values under the same keys but
    nodeName (a binding: bound_pod copies the spec and sets nodeName). Stored specs are
    read-only, so identical values mean equal facts, as for _SPEC_FACTS."""
    if old is new:
        return old is not None
    if type(old) is not dict or type(new) is not dict:
        return False
    if len(old) - ("nodeName" in old) != len(new) - ("nodeName" in new):
        return False
    missing = _MISSING
    return all(key == "nodeName" or old.get(key, missing) is value for key, value in new.items())


_MISSING = object()


#: Spec facts by the identities of a spec's values other than nodeName. Pods stamped from one
#: template by the registry's bulk creates share every such value (the very same objects), and
#: pods reach the scheduler as stored objects, which are read-only: equal identities mean equal
#: values, so equal facts (pod_requests reads the pod itself only to name it in an error, and an
#: error leaves nothing here).
_SPEC_FACTS: Memo[tuple[tuple[str, ...], tuple[int, ...]], _SpecFacts] = Memo(
    "scheduler.podinfo.spec_facts", 1 << 12
)


#: Spec facts by the `marshal` bytes of a spec's other values than nodeName: the pods a controller
#: stamps from one template, each spec a copy (other objects, equal values), share the facts of the
#: first (equal bytes, equal values: facts never changed, read-only, equal). Looked up when
#: `_SPEC_FACTS` does not know the values' identities.
_SPEC_FACTS_BY_VALUE: Memo[bytes, _SpecFacts] = Memo("scheduler.podinfo.spec_facts_by_value", 1 << 10)


#: Spec facts by the identities of a spec's values other than nodeName and affinity, for specs
#: with an affinity: the pods a DaemonSet pins each to its node (their node-name affinity their
#: own, every other value the template's) share what does not depend on the affinity
#: (`_SpecFacts.with_affinity_of`). Looked up when `_SPEC_FACTS` does not know the values' identities.
_SPEC_FACTS_BUT_AFFINITY: Memo[tuple[tuple[str, ...], tuple[int, ...]], _SpecFacts] = Memo(
    "scheduler.podinfo.spec_facts_but_affinity", 1 << 10
)


def _spec_facts(pod: Mapping[str, Any], spec: Mapping[str, Any]) -> _SpecFacts:
    if type(spec) is not dict:
        return _SpecFacts(pod, spec)
    # the names and the value identities but nodeName's, in order (built at C speed)
    rest = spec
    if "nodeName" in spec:
        rest = spec.copy()
        del rest["nodeName"]
    names = tuple(rest)
    ids = tuple(map(id, rest.values()))
    key = (names, ids)
    facts = _SPEC_FACTS.get(key)
    if facts is None:
        but_affinity: tuple[tuple[str, ...], tuple[int, ...]] | None = None
        if "affinity" in rest:
            at = names.index("affinity")
            but_affinity = (names, ids[:at] + ids[at + 1 :])
            template = _SPEC_FACTS_BUT_AFFINITY.get(but_affinity)
            if template is not None:
                return _SpecFacts.with_affinity_of(template, spec)  # (not kept: one per pod)
        try:
            by_value: bytes | None = marshal.dumps(rest)
        except ValueError:  # (a value marshal does not write: no JSON value)
            by_value = None
        known = _SPEC_FACTS_BY_VALUE.get(by_value) if by_value is not None else None
        if known is not None:
            return known  # (not kept by identity: these values' ids are not held)
        facts = _SPEC_FACTS.put(key, _SpecFacts(pod, spec))
        if by_value is not None:
            _SPEC_FACTS_BY_VALUE.put(by_value, facts)
        if but_affinity is not None:
            _SPEC_FACTS_BUT_AFFINITY.put(but_affinity, facts)
    return facts


#: parse_time of the start times seen (pods started in the same second share one text).
_START_TIMES: Memo[str, float] = Memo("scheduler.podinfo.start_times", 1 << 12)


def _start_time(pod: Mapping[str, Any], started: Any) -> float:
    """status.startTime (or creationTimestamp) in seconds; 0 when absent."""
    if not isinstance(started, str):
        return 0.0
    seconds = _START_TIMES.get(started)
    if seconds is None:
        try:
            seconds = parse_time(started)
        except ValueError:
            raise InputError(object_ref(pod), "status.startTime", f"invalid time {started!r}") from None
        _START_TIMES.put(started, seconds)
    return seconds


def make_pod_info(pod: Mapping[str, Any], key: str | None = None) -> PodInfo:
    """PodInfo for a pod dict (`key`: its pod_key, when the caller has it already); bad
    quantities raise InputError naming the field."""
    try:
        return PodInfo(pod, key)
    except QuantityError as exc:  # pragma: no cover - quantity() already wraps these
        raise InputError(object_ref(pod), "spec", str(exc)) from None
