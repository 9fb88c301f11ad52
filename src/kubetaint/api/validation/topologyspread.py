"""Pod topology spread constraint checks (mirrors pkg/apis/core/validation/validation.go:
validateTopologySpreadConstraints, ValidatePositiveField for maxSkew, validateMinDomains,
ValidateTopologyKey, ValidateWhenUnsatisfiable, ValidateSpreadConstraintNotRepeat,
validateNodeInclusionPolicy, ValidateMatchLabelKeysInTopologySpread; and pkg/api/pod/util.go's
options for them: GetValidationOptionsFromPodSpecAndMeta, hasInvalidTopologySpreadConstraintLabelSelector,
hasInvalidTopologySpreadConstrainMatchLabelKeys, hasLegacyInvalidTopologySpreadConstrainMatchLabelKeys).

Each constraint is checked in upstream's order: maxSkew, topologyKey, whenUnsatisfiable, a
repeated {topologyKey, whenUnsatisfiable} pair, minDomains, nodeAffinityPolicy, nodeTaintsPolicy,
matchLabelKeys, then the labelSelector. With MatchLabelKeysInPodTopologySpread and
MatchLabelKeysInPodTopologySpreadSelectorMerge on (their 1.35 defaults), matchLabelKeys are checked
as pod affinity's are (ValidateMatchLabelKeysAndMismatchLabelKeys, on the selector a created pod
carries with its matchLabelKeys merged in); an update whose old pod fails that check keeps the
legacy one (ValidateMatchLabelKeysInTopologySpread), and one whose old pod has an invalid
labelSelector skips the selector check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubetaint.api.jsonview import as_list, as_mapping
from kubetaint.api.validation import field as f
from kubetaint.api.validation.labelselector import validate_label_selector
from kubetaint.api.validation.objectmeta import validate_label_name
from kubetaint.api.validation.podaffinity import validate_match_label_keys_and_mismatch_label_keys

#: core.DoNotSchedule and core.ScheduleAnyway, sorted as sets.List returns them.
SCHEDULE_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")
#: core.NodeInclusionPolicyHonor and core.NodeInclusionPolicyIgnore, sorted.
NODE_INCLUSION_POLICIES = ("Honor", "Ignore")
#: isNotPositiveErrorMsg.
NOT_POSITIVE = "must be greater than zero"


@dataclass(frozen=True)
class SpreadOptions:
    """The PodValidationOptions the constraint checks read (upstream's names, lower-cased)."""

    #: AllowMatchLabelKeysInPodTopologySpread (the MatchLabelKeysInPodTopologySpread gate).
    match_label_keys: bool = True
    #: AllowMatchLabelKeysInPodTopologySpreadSelectorMerge (MatchLabelKeysInPodTopologySpreadSelectorMerge).
    selector_merge: bool = True
    #: OldPodViolatesMatchLabelKeysValidation.
    old_violates_match_label_keys: bool = False
    #: OldPodViolatesLegacyMatchLabelKeysValidation.
    old_violates_legacy_match_label_keys: bool = False
    #: AllowInvalidTopologySpreadConstraintLabelSelector.
    allow_invalid_label_selector: bool = False


#: The options of a create (and of an update whose old spec passes every check).
CREATE = SpreadOptions()


def _constraints(value: Any) -> list[Mapping[str, Any]]:
    return [as_mapping(c) for c in as_list(value)]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _keys(constraint: Mapping[str, Any]) -> list[str]:
    return [str(k) for k in as_list(constraint.get("matchLabelKeys"))]


def spread_options(old_spec: Mapping[str, Any] | None, base: SpreadOptions = CREATE) -> SpreadOptions:
    """GetValidationOptionsFromPodSpecAndMeta's topology spread part: `base` (the gates) for a
    create; for an update, what the old spec (a pod's, or a pod template's) already violates is
    allowed to stay."""
    if old_spec is None:
        return base
    constraints = _constraints(old_spec.get("topologySpreadConstraints"))
    if not constraints:
        return base
    invalid_selector = any(validate_label_selector(c.get("labelSelector"), "") for c in constraints)
    violates = violates_legacy = False
    if base.match_label_keys:
        if base.selector_merge:
            violates = any(
                validate_match_label_keys_and_mismatch_label_keys("", _keys(c), [], c.get("labelSelector"))
                for c in constraints
            )
        else:
            violates_legacy = any(
                validate_match_label_keys_in_topology_spread("", _keys(c), c.get("labelSelector"))
                for c in constraints
            )
    return SpreadOptions(
        base.match_label_keys,
        base.selector_merge,
        violates,
        violates_legacy,
        invalid_selector,
    )


def validate_topology_spread_constraints(
    constraints: Any, path: str, options: SpreadOptions = CREATE
) -> list[f.FieldError]:
    """validateTopologySpreadConstraints: every constraint's checks, in upstream's order."""
    items = _constraints(constraints)
    errs: list[f.FieldError] = []
    for i, constraint in enumerate(items):
        sub = f.index(path, i)
        max_skew = _int(constraint.get("maxSkew")) or 0
        if max_skew <= 0:
            errs.append(f.invalid(f.child(sub, "maxSkew"), max_skew, NOT_POSITIVE))
        topology_key = str(constraint.get("topologyKey") or "")
        if not topology_key:
            errs.append(f.required(f.child(sub, "topologyKey"), "can not be empty"))
        action = str(constraint.get("whenUnsatisfiable") or "")
        if action not in SCHEDULE_ACTIONS:
            errs.append(f.not_supported(f.child(sub, "whenUnsatisfiable"), action, SCHEDULE_ACTIONS))
        errs.extend(
            _not_repeated(f.child(sub, "{topologyKey, whenUnsatisfiable}"), constraint, items[i + 1 :])
        )
        errs.extend(_min_domains(f.child(sub, "minDomains"), constraint.get("minDomains"), action))
        for name in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            policy = constraint.get(name)
            if policy is not None and policy not in NODE_INCLUSION_POLICIES:
                errs.append(f.not_supported(f.child(sub, name), str(policy), NODE_INCLUSION_POLICIES))
        errs.extend(_match_label_keys(sub, constraint, options))
        if not options.allow_invalid_label_selector:
            errs.extend(
                validate_label_selector(constraint.get("labelSelector"), f.child(sub, "labelSelector"))
            )
    return errs


def _not_repeated(
    path: str, constraint: Mapping[str, Any], rest: Sequence[Mapping[str, Any]]
) -> list[f.FieldError]:
    """ValidateSpreadConstraintNotRepeat: one Duplicate when a later constraint has the same pair."""
    pair = (str(constraint.get("topologyKey") or ""), str(constraint.get("whenUnsatisfiable") or ""))
    for other in rest:
        if (str(other.get("topologyKey") or ""), str(other.get("whenUnsatisfiable") or "")) == pair:
            return [f.duplicate(path, f"{{{pair[0]}, {pair[1]}}}")]
    return []


def _min_domains(path: str, value: Any, action: str) -> list[f.FieldError]:
    """validateMinDomains: positive, and only with whenUnsatisfiable DoNotSchedule."""
    min_domains = _int(value)
    if min_domains is None:
        return []
    errs: list[f.FieldError] = []
    if min_domains <= 0:
        errs.append(f.invalid(path, min_domains, NOT_POSITIVE))
    if action != "DoNotSchedule":
        detail = f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"
        errs.append(f.invalid(path, min_domains, detail))
    return errs


def _match_label_keys(sub: str, constraint: Mapping[str, Any], options: SpreadOptions) -> list[f.FieldError]:
    """The preferred check (pod affinity's, at the constraint's path) or the legacy one (at
    `matchLabelKeys`), as the gates and the old pod's violations choose."""
    keys, selector = _keys(constraint), constraint.get("labelSelector")
    preferred = options.match_label_keys and (
        (options.selector_merge and not options.old_violates_match_label_keys)
        or (not options.selector_merge and options.old_violates_legacy_match_label_keys)
    )
    if preferred:
        return validate_match_label_keys_and_mismatch_label_keys(sub, keys, [], selector)
    return validate_match_label_keys_in_topology_spread(f.child(sub, "matchLabelKeys"), keys, selector)


def validate_match_label_keys_in_topology_spread(
    path: str, keys: list[str], selector: Any
) -> list[f.FieldError]:
    """ValidateMatchLabelKeysInTopologySpread (the legacy check): a labelSelector is needed, and
    each key is a label name not already in the selector."""
    if not keys:
        return []
    errs: list[f.FieldError] = []
    selector_keys: set[str] = set()
    if isinstance(selector, Mapping):
        selector_keys.update(str(k) for k in as_mapping(selector.get("matchLabels")))
        selector_keys.update(
            str(as_mapping(e).get("key") or "") for e in as_list(selector.get("matchExpressions"))
        )
    else:
        errs.append(f.forbidden(path, "must not be specified when labelSelector is not set"))
    for i, key in enumerate(keys):
        errs.extend(validate_label_name(key, f.index(path, i)))
        if key in selector_keys:
            errs.append(f.invalid(f.index(path, i), key, "exists in both matchLabelKeys and labelSelector"))
    return errs
