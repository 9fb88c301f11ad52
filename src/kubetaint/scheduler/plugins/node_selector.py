"""Node selector terms and requirements (mirrors component-helpers/scheduling/corev1/nodeaffinity).

`compile_*` validate once and return matchers over (node name, labels); invalid selectors raise
InputError naming the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubetaint.scheduler.resources import InputError

Matcher = Callable[[str, Mapping[str, str]], bool]
_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _parse_int(text: str) -> int | None:
    try:
        number = int(text, 10)
    except ValueError:
        return None
    return number if -(2**63) <= number < 2**63 and text.strip() == text and "_" not in text else None


def _requirement(req: Mapping[str, Any], where: str, ref: str) -> Callable[[str | None], bool]:
    """A predicate over the label value (None when absent)."""
    key = req.get("key", "")
    op = req.get("operator", "")
    values = [str(v) for v in req.get("values") or ()]
    if not key:
        raise InputError(ref, f"{where}.key", "Required value")
    if op not in _OPERATORS:
        raise InputError(ref, f"{where}.operator", f'Unsupported value: "{op}"')
    if op in ("In", "NotIn") and not values:
        raise InputError(
            ref, f"{where}.values", "Required value: must be specified when `operator` is 'In' or 'NotIn'"
        )
    if op in ("Exists", "DoesNotExist") and values:
        raise InputError(
            ref,
            f"{where}.values",
            "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )
    if op in ("Gt", "Lt"):
        if len(values) != 1 or _parse_int(values[0]) is None:
            raise InputError(
                ref,
                f"{where}.values",
                "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
            )
        bound = _parse_int(values[0])
        assert bound is not None

        def compare(v: str | None) -> bool:
            number = None if v is None else _parse_int(v)
            if number is None:
                return False
            return number > bound if op == "Gt" else number < bound

        return compare
    allowed = frozenset(values)
    if op == "In":
        return lambda v: v is not None and v in allowed
    if op == "NotIn":
        return lambda v: v is None or v not in allowed
    if op == "Exists":
        return lambda v: v is not None
    return lambda v: v is None


def compile_term(term: Mapping[str, Any], where: str, ref: str) -> Matcher:
    """A NodeSelectorTerm: all requirements must match; a term without requirements matches nothing."""
    label_reqs = [
        (str(r.get("key", "")), _requirement(r, f"{where}.matchExpressions[{i}]", ref))
        for i, r in enumerate(term.get("matchExpressions") or ())
    ]
    field_reqs = []
    for i, r in enumerate(term.get("matchFields") or ()):
        path = f"{where}.matchFields[{i}]"
        if r.get("key") != "metadata.name":
            raise InputError(
                ref, f"{path}.key", f'Unsupported value: "{r.get("key")}": supported values: "metadata.name"'
            )
        if r.get("operator") in ("In", "NotIn") and len(r.get("values") or ()) != 1:
            raise InputError(
                ref,
                f"{path}.values",
                "Required value: must be only one value when `operator` is 'In' or 'NotIn' "
                "for node field selector",
            )
        field_reqs.append(_requirement(r, path, ref))
    if not label_reqs and not field_reqs:
        return lambda _name, _labels: False

    def match(name: str, labels: Mapping[str, str]) -> bool:
        for key, pred in label_reqs:
            if not pred(labels.get(key)):
                return False
        return all(field_pred(name) for field_pred in field_reqs)

    return match


def compile_required(pod: Mapping[str, Any], ref: str) -> Matcher | None:
    """nodeSelector AND requiredDuringScheduling terms (ORed); None when the pod has neither."""
    spec = pod.get("spec") or {}
    selector: Mapping[str, str] = spec.get("nodeSelector") or {}
    affinity = ((spec.get("affinity") or {}).get("nodeAffinity")) or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms: list[Matcher] = []
    if required is not None:
        base = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        raw_terms = required.get("nodeSelectorTerms") or ()
        if not raw_terms:
            raise InputError(
                ref, f"{base}.nodeSelectorTerms", "Required value: must have at least one node selector term"
            )
        terms = [compile_term(t, f"{base}.nodeSelectorTerms[{i}]", ref) for i, t in enumerate(raw_terms)]
    if not selector and required is None:
        return None
    items = [(str(k), str(v)) for k, v in selector.items()]

    def match(name: str, labels: Mapping[str, str]) -> bool:
        for k, v in items:
            if labels.get(k) != v:
                return False
        return not terms or any(t(name, labels) for t in terms)

    return match


def required_node_names(pod: Mapping[str, Any]) -> frozenset[str] | None:
    """NodeAffinity PreFilter's PreFilterResult.NodeNames: within a required term, the intersection of
    its `metadata.name In` field requirements; across terms, their union. None (all nodes) when there
    are no required terms or some term has no such requirement; an empty set when the terms conflict.

    A node outside the set fails the required matcher whatever its labels, so the scheduler filters
    just these nodes (the matcher still decides for the named ones)."""
    affinity = (((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity")) or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = (required or {}).get("nodeSelectorTerms") or ()
    if not terms:
        return None
    names: set[str] = set()
    for term in terms:
        term_names: set[str] | None = None
        for r in term.get("matchFields") or ():
            if r.get("key") == "metadata.name" and r.get("operator") == "In":
                values = {str(v) for v in r.get("values") or ()}
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None  # terms are ORed: this one may match any node
        names |= term_names
    return frozenset(names)


def compile_preferred(pod: Mapping[str, Any], ref: str) -> list[tuple[int, Matcher]]:
    """(weight, matcher) for each preferredDuringScheduling term with a non-zero weight."""
    affinity = (((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity")) or {}
    base = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
    out: list[tuple[int, Matcher]] = []
    for i, term in enumerate(affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ()):
        weight = term.get("weight", 0)
        if not isinstance(weight, int) or not 0 < weight <= 100:
            raise InputError(
                ref, f"{base}[{i}].weight", f"Invalid value: {weight!r}: must be in the range 1-100"
            )
        out.append((weight, compile_term(term.get("preference") or {}, f"{base}[{i}].preference", ref)))
    return out
