"""Toleration/taint matching, exactly as upstream.

Mirrors staging/src/k8s.io/api/core/v1/toleration.go (ToleratesTaint, compareNumericValues,
MatchToleration), taint.go (MatchTaint, ToString), component-helpers/scheduling/corev1/helpers.go
(TolerationsTolerateTaint, FindMatchingUntoleratedTaint) and pkg/apis/core/v1/helper/helpers.go
(GetMatchingTolerations, AddOrUpdateTolerationInPodSpec).

Arguments are Kubernetes JSON dicts; pydantic models are accepted and converted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kubetaint.api.content import parse_int64
from kubetaint.api.features import FeatureGates, comparison_operators_enabled
from kubetaint.api.goquote import go_quote

JSONDict = dict[str, Any]
TaintFilter = Callable[[Mapping[str, Any]], bool]

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
TAINT_EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)


def as_dict(obj: Any) -> Mapping[str, Any]:
    """A Kubernetes JSON mapping for a dict or a kubetaint (pydantic) model."""
    if isinstance(obj, Mapping):
        return obj
    dump = getattr(obj, "model_dump", None)
    if dump is None:
        raise TypeError(f"expected a Kubernetes JSON object, got {type(obj).__name__}")
    result: Mapping[str, Any] = dump(by_alias=True, exclude_none=True)
    return result


def _s(obj: Mapping[str, Any], field: str) -> str:
    value = obj.get(field)
    return "" if value is None else str(value)


class ComparisonError(ValueError):
    """An Lt/Gt value that is not a canonical int64 (the toleration then does not match)."""


def compare_numeric_values(toleration_value: str, taint_value: str, operator: str) -> bool:
    """Upstream compareNumericValues: Lt tolerates when taint < toleration, Gt when taint > toleration."""
    try:
        tol = parse_int64(toleration_value)
    except ValueError as exc:
        raise ComparisonError(
            f"failed to parse toleration value {go_quote(toleration_value)} as int64: {exc}"
        ) from None
    try:
        taint = parse_int64(taint_value)
    except ValueError as exc:
        raise ComparisonError(
            f"failed to parse taint value {go_quote(taint_value)} as int64: {exc}"
        ) from None
    if operator == "Lt":
        return taint < tol
    return taint > tol


def tolerates_taint_checked(
    toleration: Mapping[str, Any], taint: Mapping[str, Any], enable_comparison: bool
) -> tuple[bool, str | None]:
    """Upstream ToleratesTaint: (tolerated, error message or None)."""
    effect = _s(toleration, "effect")
    if effect and effect != _s(taint, "effect"):
        return False, None
    key = _s(toleration, "key")
    if key and key != _s(taint, "key"):
        return False, None
    operator = _s(toleration, "operator")
    if operator in ("", "Equal"):
        return _s(toleration, "value") == _s(taint, "value"), None
    if operator == "Exists":
        return True, None
    if operator in ("Lt", "Gt"):
        if not enable_comparison:
            return False, None
        try:
            return compare_numeric_values(_s(toleration, "value"), _s(taint, "value"), operator), None
        except ComparisonError as exc:
            return False, str(exc)
    return False, None


def tolerates(toleration: Any, taint: Any, *, feature_gates: FeatureGates | None = None) -> bool:
    """Whether `toleration` tolerates `taint`, as upstream's `Toleration.ToleratesTaint` decides.

    Args:
        toleration: a toleration as in a pod's `spec.tolerations` (a dict, or a kubetaint model).
        taint: a taint as in a node's `spec.taints`.
        feature_gates: feature gates by name; `TaintTolerationComparisonOperators: True` enables
            the alpha `Lt` and `Gt` operators (off by default, as upstream).

    Returns:
        True when the toleration matches the taint's key, value (by its operator) and effect.

    Examples:
        >>> tolerates({"operator": "Exists"}, {"key": "a", "effect": "NoExecute"})
        True
    """
    tolerated, _ = tolerates_taint_checked(
        as_dict(toleration), as_dict(taint), comparison_operators_enabled(feature_gates)
    )
    return tolerated


def tolerations_tolerate_taint(
    tolerations: Iterable[Mapping[str, Any]], taint: Mapping[str, Any], enable_comparison: bool
) -> tuple[bool, str | None]:
    """Upstream TolerationsTolerateTaint: true on the first match, else the first error seen."""
    first_error: str | None = None
    for toleration in tolerations:
        tolerated, error = tolerates_taint_checked(toleration, taint, enable_comparison)
        if tolerated:
            return True, None
        if error is not None and first_error is None:
            first_error = error
    return False, first_error


def do_not_schedule_taints_filter(taint: Mapping[str, Any]) -> bool:
    """helper.DoNotScheduleTaintsFilterFunc: NoSchedule and NoExecute taints."""
    return taint.get("effect") in (NO_SCHEDULE, NO_EXECUTE)


def find_matching_untolerated_taint(
    taints: Iterable[Mapping[str, Any]],
    tolerations: Sequence[Mapping[str, Any]],
    inclusion_filter: TaintFilter | None,
    enable_comparison: bool,
) -> tuple[Mapping[str, Any] | None, str | None]:
    """Upstream FindMatchingUntoleratedTaint: the first filtered taint no toleration tolerates.

    Returns (taint, error); (None, None) when every considered taint is tolerated.
    """
    for taint in taints:
        if inclusion_filter is not None and not inclusion_filter(taint):
            continue
        tolerated, error = tolerations_tolerate_taint(tolerations, taint, enable_comparison)
        if error is not None:
            return taint, error
        if not tolerated:
            return taint, None
    return None, None


def find_untolerated_taint(
    taints: Iterable[Any],
    tolerations: Iterable[Any],
    *,
    effects: Iterable[str] | None = None,
    feature_gates: FeatureGates | None = None,
) -> dict[str, Any] | None:
    """The first taint, in the node's order, of the given effects that no toleration tolerates.

    This is the check of the scheduler's TaintToleration filter (effects NoSchedule and
    NoExecute) and of the taint-eviction controller (NoExecute).

    Args:
        taints: a node's `spec.taints`.
        tolerations: a pod's `spec.tolerations`.
        effects: the taint effects to look at (default: every effect).
        feature_gates: as for `tolerates`.

    Returns:
        The untolerated taint, or None when every taint of those effects is tolerated.
    """
    wanted = None if effects is None else frozenset(effects)
    taint_dicts = [as_dict(t) for t in taints]
    toleration_dicts = [as_dict(t) for t in tolerations]
    taint_filter: TaintFilter | None = None
    if wanted is not None:
        taint_filter = lambda t: t.get("effect") in wanted  # noqa: E731
    found, _ = find_matching_untolerated_taint(
        taint_dicts, toleration_dicts, taint_filter, comparison_operators_enabled(feature_gates)
    )
    return None if found is None else dict(found)


def get_matching_tolerations(
    taints: Sequence[Mapping[str, Any]],
    tolerations: Sequence[Mapping[str, Any]],
    enable_comparison: bool = False,
) -> tuple[bool, list[Mapping[str, Any]]]:
    """Upstream GetMatchingTolerations: per taint the first toleration (pod order) that tolerates it."""
    if not taints:
        return True, []
    if not tolerations:
        return False, []
    used: list[Mapping[str, Any]] = []
    for taint in taints:
        for toleration in tolerations:
            if tolerates_taint_checked(toleration, taint, enable_comparison)[0]:
                used.append(toleration)
                break
        else:
            return False, []
    return True, used


def match_toleration(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Toleration.MatchToleration: key, operator, value and effect equal (seconds ignored)."""
    return all(_s(a, f) == _s(b, f) for f in ("key", "operator", "value", "effect"))


def match_taint(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Taint.MatchTaint: same key and effect (value ignored)."""
    return _s(a, "key") == _s(b, "key") and _s(a, "effect") == _s(b, "effect")


def taint_to_string(taint: Any) -> str:
    """Taint.ToString: `key=value:effect`, `key:effect`, `key=value:` or `key`."""
    t = as_dict(taint)
    key, value, effect = _s(t, "key"), _s(t, "value"), _s(t, "effect")
    if not value and not effect:
        return key
    if not effect:
        return f"{key}={value}:"
    if not value:
        return f"{key}:{effect}"
    return f"{key}={value}:{effect}"


def add_or_update_toleration(tolerations: list[JSONDict], toleration: JSONDict) -> list[JSONDict]:
    """AddOrUpdateTolerationInPodSpec: replace every MatchToleration hit in place, else append.

    Returns the new list (the input is not modified).
    """
    result: list[JSONDict] = []
    replaced = False
    for existing in tolerations:
        if match_toleration(toleration, existing):
            result.append(dict(toleration))
            replaced = True
        else:
            result.append(existing)
    if not replaced:
        result.append(dict(toleration))
    return result
