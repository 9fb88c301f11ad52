"""Pod affinity terms as the scheduler reads them (mirrors framework.AffinityTerm,
WeightedAffinityTerm and NewPodInfo's term parsing in pkg/scheduler/framework/types.go, and the pod
registry's applyMatchLabelKeysAndMismatchLabelKeys in pkg/registry/core/pod/strategy.go).

A term's `labelSelector` gets the pod's own values of its `matchLabelKeys` (In) and
`mismatchLabelKeys` (NotIn), as upstream's registry merges them at pod creation
(MatchLabelKeysInPodAffinity, on by default in the target version; kubetaint's registry does too:
kubetaint.core.label_keys_merge). Upstream's scheduler reads the stored selector; this one applies
the keys again, so a pod declared without the merge (a scenario's, a snapshot's) is scheduled as if
created through the API, and a merged term selects the same pods. A nil selector selects nothing;
an empty one everything. Terms are parsed once per (affinity object, namespace, labels).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.api.goquote import go_quote
from kubetaint.api.selectors import LabelSelector, Requirement, label_selector_from_dict
from kubetaint.api.validation.names import is_qualified_name, is_valid_label_value
from kubetaint.speed.memo import Memo

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


LabelMatch = Callable[[Mapping[str, str]], bool]
_MATCHERS: Memo[tuple[Requirement, ...], LabelMatch] = Memo("scheduler.affinity_terms.matchers", 1 << 12)


def label_matcher(selector: LabelSelector) -> LabelMatch:
    """`selector.matches` as a function over a labels mapping, with the usual selector of
    `key=value` pairs (matchLabels, or In with one value) compared directly."""
    requirements = selector.requirements
    known = _MATCHERS.get(requirements)
    if known is not None:
        return known
    matcher: LabelMatch
    if all(op in ("=", "==", "in") and len(values) == 1 for _, op, values in requirements):
        pairs = tuple((key, values[0]) for key, _, values in requirements)
        if len(pairs) == 1:
            ((key, value),) = pairs

            def matcher(labels: Mapping[str, str]) -> bool:
                return labels.get(key) == value

        else:

            def matcher(labels: Mapping[str, str]) -> bool:
                return all(labels.get(k) == v for k, v in pairs)

    else:
        matcher = selector.matches
    return _MATCHERS.put(requirements, matcher)


class TermError(ValueError):
    """A term whose selector does not convert (metav1.LabelSelectorAsSelector's error)."""


@dataclass(frozen=True)
class AffinityTerm:
    """namespaces, namespaceSelector (None: selects nothing), selector (None: nothing), topologyKey."""

    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None
    selector: LabelSelector | None
    topology_key: str

    def matches(self, namespace: str, labels: Mapping[str, str], ns_labels: Mapping[str, str] | None) -> bool:
        """AffinityTerm.Matches: the pod's namespace is listed or selected, and its labels match."""
        if namespace in self.namespaces or (
            self.namespace_selector is not None and self.namespace_selector.matches(ns_labels)
        ):
            return self.selector is not None and label_matcher(self.selector)(labels)
        return False

    def with_namespaces(self, names: frozenset[str]) -> AffinityTerm:
        """mergeAffinityTermNamespacesIfNotEmpty: the selected namespaces join the listed ones and
        the namespace selector then selects nothing."""
        return AffinityTerm(self.namespaces | names, None, self.selector, self.topology_key)


@dataclass(frozen=True)
class PodAffinityInfo:
    """What NewPodInfo parses of a pod's podAffinity and podAntiAffinity."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[tuple[int, AffinityTerm], ...] = ()
    preferred_anti_affinity: tuple[tuple[int, AffinityTerm], ...] = ()

    @property
    def has_any(self) -> bool:
        return bool(
            self.required_affinity
            or self.required_anti_affinity
            or self.preferred_affinity
            or self.preferred_anti_affinity
        )


NO_AFFINITY = PodAffinityInfo()


#: labels.NewRequirement's messages for a values set that does not fit the operator.
_EMPTY_IN = "for 'in', 'notin' operators, values set can't be empty"
_VALUES_FOR_EXISTS = "values set must be empty for exists and does not exist"


def _selector(raw: Any) -> LabelSelector | None:
    """metav1.LabelSelectorAsSelector, with labels.NewRequirement's checks of keys and values."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise TermError(f"invalid label selector: {raw!r}")
    try:
        selector = label_selector_from_dict(raw)
    except StatusError as exc:
        raise TermError(exc.message) from None
    assert selector is not None  # (a selector object, not nil)
    for key, op, values in selector.requirements:
        found: list[str] = []  # NewRequirement's field errors, aggregated
        errs = is_qualified_name(key)
        if errs:
            found.append(f"key: Invalid value: {go_quote(key)}: {'; '.join(errs)}")
        if op in ("in", "notin") and not values:
            found.append(f"values: Invalid value: {_go_strings(values)}: {_EMPTY_IN}")
        elif op in ("exists", "!") and values:
            found.append(f"values: Invalid value: {_go_strings(values)}: {_VALUES_FOR_EXISTS}")
        for i, value in enumerate(values):
            errs = is_valid_label_value(value)
            if errs:
                found.append(f"values[{i}][{key}]: Invalid value: {go_quote(value)}: {'; '.join(errs)}")
        if found:
            unique = list(dict.fromkeys(found))
            raise TermError(unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]")
    return selector


def _go_strings(values: tuple[str, ...]) -> str:
    """`%#v` of the []string NewRequirement is given (nil when empty)."""
    return "[]string{" + ", ".join(map(go_quote, values)) + "}" if values else "[]string(nil)"


def _merged_selector(term: Mapping[str, Any], labels: Mapping[str, str]) -> LabelSelector | None:
    """The term's labelSelector with its matchLabelKeys/mismatchLabelKeys applied."""
    selector = _selector(term.get("labelSelector"))
    match_keys = term.get("matchLabelKeys") or ()
    mismatch_keys = term.get("mismatchLabelKeys") or ()
    if selector is None or not (match_keys or mismatch_keys):
        return selector  # a nil selector selects nothing: nothing to add to
    extra: list[Requirement] = []
    for key in match_keys:
        if isinstance(key, str) and key in labels:
            extra.append((key, "in", (labels[key],)))
    for key in mismatch_keys:
        if isinstance(key, str) and key in labels:
            extra.append((key, "notin", (labels[key],)))
    return LabelSelector(selector.requirements + tuple(extra))


def parse_term(term: Any, namespace: str, labels: Mapping[str, str]) -> AffinityTerm:
    """newAffinityTerm: with neither namespaces nor a namespaceSelector, the pod's own namespace."""
    if not isinstance(term, Mapping):
        raise TermError(f"invalid pod affinity term: {term!r}")
    names = [str(n) for n in term.get("namespaces") or ()]
    raw_ns_selector = term.get("namespaceSelector")
    namespaces = frozenset(names) if names or raw_ns_selector is not None else frozenset((namespace,))
    return AffinityTerm(
        namespaces,
        _selector(raw_ns_selector),
        _merged_selector(term, labels),
        str(term.get("topologyKey") or ""),
    )


def _weighted(items: Any, namespace: str, labels: Mapping[str, str]) -> tuple[tuple[int, AffinityTerm], ...]:
    out: list[tuple[int, AffinityTerm]] = []
    for item in items or ():
        if not isinstance(item, Mapping):
            raise TermError(f"invalid weighted pod affinity term: {item!r}")
        weight = item.get("weight")
        out.append(
            (
                int(weight) if isinstance(weight, int) else 0,
                parse_term(item.get("podAffinityTerm") or {}, namespace, labels),
            )
        )
    return tuple(out)


def _required(raw: Mapping[str, Any], namespace: str, labels: Mapping[str, str]) -> tuple[AffinityTerm, ...]:
    return tuple(parse_term(t, namespace, labels) for t in raw.get(_REQUIRED) or ())


def raw_pod_affinity(pod: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any]] | None:
    """(podAffinity, podAntiAffinity) of the pod, or None when it has neither."""
    affinity = (pod.get("spec") or {}).get("affinity")
    if not affinity:
        return None
    aff, anti = affinity.get("podAffinity"), affinity.get("podAntiAffinity")
    if not aff and not anti:
        return None
    return (aff or {}), (anti or {})


#: Parsed terms by (the pod affinity by value, namespace, labels): equal values parse alike.
_PARSED: Memo[tuple[str, str, tuple[tuple[str, str], ...]], PodAffinityInfo] = Memo(
    "scheduler.affinity_terms.parsed", 1 << 12
)


def pod_affinity_info(pod: Mapping[str, Any], sig: str | None = None) -> PodAffinityInfo:
    """The pod's parsed affinity terms (NO_AFFINITY without any); raises TermError. `sig`: the
    pod's podAffinity and podAntiAffinity by value (the spec facts' `pod_affinity_sig`), by which
    the answer is remembered; without it nothing is remembered."""
    raw = raw_pod_affinity(pod)
    if raw is None:
        return NO_AFFINITY
    meta = pod.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    labels: Mapping[str, str] = meta.get("labels") or {}
    key = None
    if sig is not None:
        key = (sig, namespace, tuple(sorted(labels.items())))
        known = _PARSED.get(key)
        if known is not None:
            return known
    aff, anti = raw
    errors: list[str] = []

    def parsed(what: str, parse: Callable[[], Any]) -> Any:
        try:
            return parse()
        except TermError as exc:
            errors.append(f"{what}: {exc}")
            return ()

    info = PodAffinityInfo(
        parsed("requiredAffinityTerms", lambda: _required(aff, namespace, labels)),
        parsed("requiredAntiAffinityTerms", lambda: _required(anti, namespace, labels)),
        parsed("preferredAffinityTerms", lambda: _weighted(aff.get(_PREFERRED), namespace, labels)),
        parsed("preferredAntiAffinityTerms", lambda: _weighted(anti.get(_PREFERRED), namespace, labels)),
    )
    if errors:  # utilerrors.NewAggregate
        raise TermError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    if key is not None:
        _PARSED.put(key, info)
    return info


def pod_affinity_info_or_none(pod: Mapping[str, Any], sig: str | None = None) -> PodAffinityInfo:
    """pod_affinity_info, with an unparsable existing pod counted as having no terms (upstream
    logs the error of an assigned pod's NewPodInfo and keeps the terms it parsed)."""
    try:
        return pod_affinity_info(pod, sig)
    except (TermError, ValueError, TypeError):
        return NO_AFFINITY
