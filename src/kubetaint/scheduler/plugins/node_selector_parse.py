"""Node selectors as the scheduler parses them (mirrors component-helpers/scheduling/corev1/nodeaffinity
nodeaffinity.go and apimachinery labels.NewRequirement).

Unlike API validation (`node_selector.compile_*`), parsing never refuses a pod: a required term that
does not parse (a bad key or operator, an In value that is no label value, a multi-value
`metadata.name` field requirement) matches no node, as LazyErrorNodeSelector's terms do; preferred
terms report their parse errors (NewPreferredSchedulingTerms), and a weight-0 or empty preferred
term is skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubetaint.api.goquote import go_quote
from kubetaint.api.validation import field as f
from kubetaint.api.validation.names import is_qualified_name, is_valid_label_value

Matcher = Callable[[str, Mapping[str, str]], bool]
_VALID_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_OPERATORS = ("In", "NotIn")


def go_aggregate(messages: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message as it is, several in brackets (repeats once)."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def parse_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64), or None when it fails."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    number = int(text, 10)
    return number if -(2**63) <= number < 2**63 else None


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _go_strings(raw: Any, values: list[str]) -> f.GoValue:
    """A []string as Go's %#v prints it: []string(nil) when absent, else []string{"a", "b"}."""
    if raw is None:
        return f.GoValue(values, "[]string(nil)")
    return f.GoValue(values, "[]string{" + ", ".join(go_quote(v) for v in values) + "}")


def _requirement(req: Mapping[str, Any], path: str) -> tuple[Callable[[str | None], bool] | None, list[str]]:
    """nodeSelectorRequirementsAsSelector for one requirement: (predicate over the label value or
    None when absent, parse errors)."""
    key = str(req.get("key") or "")
    op = req.get("operator") or ""
    values = _strings(req.get("values"))
    shown = _go_strings(req.get("values"), values)
    if op not in _VALID_OPERATORS:
        return None, [str(f.not_supported(f.child(path, "operator"), op, _VALID_OPERATORS))]
    errs: list[str] = []
    problems = is_qualified_name(key)
    if problems:
        errs.append(str(f.invalid(f.child(path, "key"), key, "; ".join(problems))))
    values_path = f.child(path, "values")
    if op in ("In", "NotIn") and not values:
        errs.append(
            str(f.invalid(values_path, shown, "for 'in', 'notin' operators, values set can't be empty"))
        )
    elif op in ("Exists", "DoesNotExist") and values:
        errs.append(
            str(f.invalid(values_path, shown, "values set must be empty for exists and does not exist"))
        )
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(
                str(f.invalid(values_path, shown, "for 'Gt', 'Lt' operators, exactly one value is required"))
            )
        for i, value in enumerate(values):
            if parse_int64(value) is None:
                errs.append(
                    str(
                        f.invalid(
                            f.index(values_path, i),
                            value,
                            "for 'Gt', 'Lt' operators, the value must be an integer",
                        )
                    )
                )
    for i, value in enumerate(values):
        problems = is_valid_label_value(value)
        if problems:
            errs.append(str(f.invalid(f.key(f.index(values_path, i), key), value, "; ".join(problems))))
    if errs:
        return None, errs
    allowed = frozenset(values)
    if op == "In":
        return (lambda v: v is not None and v in allowed), []
    if op == "NotIn":
        return (lambda v: v is None or v not in allowed), []
    if op == "Exists":
        return (lambda v: v is not None), []
    if op == "DoesNotExist":
        return (lambda v: v is None), []
    bound = parse_int64(values[0])
    assert bound is not None
    greater = op == "Gt"

    def compare(v: str | None) -> bool:
        number = None if v is None else parse_int64(v)
        if number is None:
            return False
        return number > bound if greater else number < bound

    return compare, []


def _field_requirement(req: Mapping[str, Any], path: str) -> tuple[Callable[[str], bool] | None, list[str]]:
    """nodeSelectorRequirementsAsFieldSelector for one requirement: a predicate over the node's name."""
    op = req.get("operator") or ""
    values = _strings(req.get("values"))
    if op not in _FIELD_OPERATORS:
        return None, [str(f.not_supported(f.child(path, "operator"), op, _FIELD_OPERATORS))]
    if len(values) != 1:
        shown = _go_strings(req.get("values"), values)
        return None, [str(f.invalid(f.child(path, "values"), shown, "must have one element"))]
    key, wanted = str(req.get("key") or ""), values[0]
    # extractNodeFields holds only metadata.name: another key reads as ""
    if op == "In":
        return (lambda name: (name if key == "metadata.name" else "") == wanted), []
    return (lambda name: (name if key == "metadata.name" else "") != wanted), []


def _is_empty_term(term: Mapping[str, Any]) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


@dataclass(frozen=True)
class ParsedTerm:
    """newNodeSelectorTerm: a matcher, or the parse errors (then the term matches nothing)."""

    match: Matcher | None
    errors: tuple[str, ...] = ()


def parse_term(term: Mapping[str, Any], path: str) -> ParsedTerm:
    errs: list[str] = []
    label_preds: list[tuple[str, Callable[[str | None], bool]]] = []
    field_preds: list[Callable[[str], bool]] = []
    expressions = term.get("matchExpressions") or []
    for i, req in enumerate(expressions if isinstance(expressions, list) else []):
        pred, req_errs = _requirement(
            req if isinstance(req, Mapping) else {}, f"{path}.matchExpressions[{i}]"
        )
        errs.extend(req_errs)
        if pred is not None:
            label_preds.append((str(req.get("key") or ""), pred))
    fields = term.get("matchFields") or []
    for i, req in enumerate(fields if isinstance(fields, list) else []):
        fpred, req_errs = _field_requirement(
            req if isinstance(req, Mapping) else {}, f"{path}.matchFields[{i}]"
        )
        errs.extend(req_errs)
        if fpred is not None:
            field_preds.append(fpred)
    if errs:
        return ParsedTerm(None, tuple(errs))

    def match(name: str, labels: Mapping[str, str]) -> bool:
        for key, pred in label_preds:
            if not pred(labels.get(key)):
                return False
        if field_preds and name:  # (a node without a name skips the field selector)
            return all(fp(name) for fp in field_preds)
        return True

    return ParsedTerm(match)


def lazy_node_selector(selector: Mapping[str, Any], path: str = "") -> list[ParsedTerm]:
    """NewLazyErrorNodeSelector: the non-empty terms, parsed."""
    terms = selector.get("nodeSelectorTerms") or []
    out: list[ParsedTerm] = []
    for i, raw in enumerate(terms if isinstance(terms, list) else []):
        term = raw if isinstance(raw, Mapping) else {}
        if not _is_empty_term(term):
            out.append(parse_term(term, f.index(f.child(path, "nodeSelectorTerms"), i)))
    return out


def selector_errors(terms: list[ParsedTerm]) -> list[str]:
    return [e for t in terms for e in t.errors]


def terms_matcher(terms: list[ParsedTerm]) -> Matcher:
    """LazyErrorNodeSelector.Match without its errors: any parsed term matching (none: no match)."""
    matchers = [t.match for t in terms if t.match is not None]
    return lambda name, labels: any(m(name, labels) for m in matchers)


def preferred_terms(terms: Any, path: str = "") -> tuple[list[tuple[int, Matcher]], list[str]]:
    """NewPreferredSchedulingTerms: (weight, matcher) of each term with a non-zero weight and a
    non-empty preference, and the parse errors of all of them."""
    out: list[tuple[int, Matcher]] = []
    errs: list[str] = []
    for i, raw in enumerate(terms if isinstance(terms, list) else []):
        term = raw if isinstance(raw, Mapping) else {}
        weight = term.get("weight") or 0
        preference = term.get("preference") or {}
        if not isinstance(weight, int) or weight == 0 or not isinstance(preference, Mapping):
            continue
        if _is_empty_term(preference):
            continue
        parsed = parse_term(preference, f.index(path, i))
        if parsed.match is None:
            errs.extend(parsed.errors)
        else:
            out.append((weight, parsed.match))
    return out, errs


def required_affinity(pod: Mapping[str, Any]) -> Matcher | None:
    """GetRequiredNodeAffinity(pod).Match, parse errors ignored: the nodeSelector AND the required
    terms (ORed, unparsable ones matching nothing); None when the pod has neither."""
    spec = pod.get("spec") or {}
    selector = spec.get("nodeSelector") or {}
    affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not selector and required is None:
        return None
    items = [(str(k), str(v)) for k, v in selector.items()] if isinstance(selector, Mapping) else []
    terms = terms_matcher(lazy_node_selector(required)) if isinstance(required, Mapping) else None

    def match(name: str, labels: Mapping[str, str]) -> bool:
        for k, v in items:
            if labels.get(k) != v:
                return False
        return terms is None or terms(name, labels)

    return match
