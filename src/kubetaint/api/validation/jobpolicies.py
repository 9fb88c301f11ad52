"""A Job spec's failure and success handling, validated as pkg/apis/batch/validation's
validateJobSpec does: `backoffLimitPerIndex` and `maxFailedIndexes`, the completion mode, the pod
failure policy (validatePodFailurePolicy and its rules), the success policy
(validateSuccessPolicy, validateIndexesFormat) and `podReplacementPolicy`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubetaint.api.goquote import go_quote
from kubetaint.api.jsonview import as_mapping
from kubetaint.api.validation import field as f
from kubetaint.api.validation.names import is_qualified_name
from kubetaint.api.validation.objectmeta import IS_NEGATIVE_ERROR

Obj = Mapping[str, Any]
MAX_PARALLELISM_FOR_INDEXED_JOB = 100_000
MAX_FAILED_INDEXES_FOR_INDEXED_JOB = 100_000
COMPLETIONS_SOFT_LIMIT = 100_000
PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS = 10_000
MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS = 10_000
MAX_POD_FAILURE_POLICY_RULES = 20
MAX_ON_EXIT_CODES_VALUES = 255
MAX_ON_POD_CONDITIONS_PATTERNS = 20
MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024
MAX_SUCCESS_POLICY_RULES = 20
ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")
OPERATORS = ("In", "NotIn")
CONDITION_STATUSES = ("False", "True", "Unknown")
REPLACEMENT_POLICIES = ("Failed", "TerminatingOrFailed")
COMPLETION_MODES = ("NonIndexed", "Indexed")
REQUIRES_INDEXED = "requires indexed completion mode"


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _nonnegative(value: Any, path: str) -> list[f.FieldError]:
    number = _int(value)
    return [f.invalid(path, number, IS_NEGATIVE_ERROR)] if number is not None and number < 0 else []


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _go_strings(values: Sequence[str]) -> str:
    """Go's %q of a []string: `["A" "B"]`."""
    return "[" + " ".join(go_quote(v) for v in values) + "]"


def validate_indexes_and_modes(spec: Obj, path: str) -> list[f.FieldError]:
    """backoffLimitPerIndex, maxFailedIndexes and the completion mode's limits."""
    errs: list[f.FieldError] = []
    per_index = spec.get("backoffLimitPerIndex")
    max_failed = _int(spec.get("maxFailedIndexes"))
    completions = _int(spec.get("completions"))
    parallelism = _int(spec.get("parallelism"))
    errs.extend(_nonnegative(per_index, f.child(path, "backoffLimitPerIndex")))
    if spec.get("maxFailedIndexes") is not None:
        errs.extend(_nonnegative(max_failed, f.child(path, "maxFailedIndexes")))
        if per_index is None:
            errs.append(
                f.required(f.child(path, "backoffLimitPerIndex"), "when maxFailedIndexes is specified")
            )
    mode = spec.get("completionMode")
    if mode is not None:
        if mode not in COMPLETION_MODES:
            errs.append(f.not_supported(f.child(path, "completionMode"), mode, COMPLETION_MODES))
        if mode == "Indexed":
            if spec.get("completions") is None:
                errs.append(f.required(f.child(path, "completions"), "when completion mode is Indexed"))
            if parallelism is not None and parallelism > MAX_PARALLELISM_FOR_INDEXED_JOB:
                errs.append(
                    f.invalid(
                        f.child(path, "parallelism"),
                        parallelism,
                        f"must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} "
                        "when completion mode is Indexed",
                    )
                )
            if completions is not None and max_failed is not None and max_failed > completions:
                errs.append(
                    f.invalid(
                        f.child(path, "maxFailedIndexes"),
                        max_failed,
                        "must be less than or equal to completions",
                    )
                )
            if max_failed is not None and max_failed > MAX_FAILED_INDEXES_FOR_INDEXED_JOB:
                errs.append(
                    f.invalid(
                        f.child(path, "maxFailedIndexes"),
                        max_failed,
                        f"must be less than or equal to {MAX_FAILED_INDEXES_FOR_INDEXED_JOB}",
                    )
                )
            if completions is not None and completions > COMPLETIONS_SOFT_LIMIT and per_index is not None:
                errs.extend(
                    _high_completions(path, parallelism, max_failed, spec.get("maxFailedIndexes") is None)
                )
    if mode is None or mode == "NonIndexed":
        if per_index is not None:
            errs.append(f.invalid(f.child(path, "backoffLimitPerIndex"), per_index, REQUIRES_INDEXED))
        if spec.get("maxFailedIndexes") is not None:
            errs.append(
                f.invalid(f.child(path, "maxFailedIndexes"), spec.get("maxFailedIndexes"), REQUIRES_INDEXED)
            )
    return errs


def _high_completions(
    path: str, parallelism: int | None, max_failed: int | None, missing: bool
) -> list[f.FieldError]:
    suffix = f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
    errs = []
    if missing:
        errs.append(
            f.required(
                f.child(path, "maxFailedIndexes"),
                f"must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}",
            )
        )
    if parallelism is not None and parallelism > PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS:
        errs.append(
            f.invalid(
                f.child(path, "parallelism"),
                parallelism,
                f"must be less than or equal to {PARALLELISM_LIMIT_FOR_HIGH_COMPLETIONS} {suffix}",
            )
        )
    if max_failed is not None and max_failed > MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS:
        errs.append(
            f.invalid(
                f.child(path, "maxFailedIndexes"),
                max_failed,
                f"must be less than or equal to {MAX_FAILED_INDEXES_LIMIT_FOR_HIGH_COMPLETIONS} {suffix}",
            )
        )
    return errs


def validate_policies(spec: Obj, path: str) -> list[f.FieldError]:
    """The pod failure policy, the success policy and podReplacementPolicy."""
    errs: list[f.FieldError] = []
    if spec.get("podFailurePolicy") is not None:
        errs.extend(_pod_failure_policy(spec, f.child(path, "podFailurePolicy")))
    policy = spec.get("successPolicy")
    if policy is not None:
        if spec.get("completionMode") != "Indexed":
            errs.append(
                f.invalid(f.child(path, "successPolicy"), _go_success_policy(policy), REQUIRES_INDEXED)
            )
        else:
            errs.extend(_success_policy(spec, f.child(path, "successPolicy")))
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None:
        replacement_path = f.child(path, "podReplacementPolicy")
        if spec.get("podFailurePolicy") is not None:
            if replacement != "Failed":
                errs.append(f.not_supported(replacement_path, replacement, ("Failed",)))
        elif replacement not in REPLACEMENT_POLICIES:
            errs.append(f.not_supported(replacement_path, replacement, REPLACEMENT_POLICIES))
    return errs


def restart_policy_errors(spec: Obj, path: str, restart: str) -> list[f.FieldError]:
    """A pod failure policy needs restartPolicy Never (once OnFailure or Never is given)."""
    if spec.get("podFailurePolicy") is not None and restart == "OnFailure":
        return [
            f.invalid(
                f.child(path, "template", "spec", "restartPolicy"),
                restart,
                'only "Never" is supported when podFailurePolicy is specified',
            )
        ]
    return []


def _pod_failure_policy(spec: Obj, path: str) -> list[f.FieldError]:
    """validatePodFailurePolicy."""
    errs: list[f.FieldError] = []
    rules = _list(as_mapping(spec.get("podFailurePolicy")).get("rules"))
    rules_path = f.child(path, "rules")
    if len(rules) > MAX_POD_FAILURE_POLICY_RULES:
        errs.append(f.too_many(rules_path, len(rules), MAX_POD_FAILURE_POLICY_RULES))
    pod_spec = as_mapping(as_mapping(spec.get("template")).get("spec"))
    names = {
        str(as_mapping(c).get("name") or "")
        for key in ("containers", "initContainers")
        for c in _list(pod_spec.get(key))
    }
    for i, rule in enumerate(rules):
        errs.extend(_pod_failure_policy_rule(spec, as_mapping(rule), f.index(rules_path, i), names))
    return errs


def _pod_failure_policy_rule(spec: Obj, rule: Obj, path: str, names: set[str]) -> list[f.FieldError]:
    """validatePodFailurePolicyRule."""
    errs: list[f.FieldError] = []
    action = rule.get("action") or ""
    action_path = f.child(path, "action")
    if action == "":
        errs.append(f.required(action_path, f"valid values: {_go_strings(ACTIONS)}"))
    elif action == "FailIndex":
        if spec.get("backoffLimitPerIndex") is None:
            errs.append(f.invalid(action_path, action, "requires the backoffLimitPerIndex to be set"))
    elif action not in ACTIONS:
        errs.append(f.not_supported(action_path, action, ACTIONS))
    on_exit_codes = rule.get("onExitCodes")
    on_conditions = _list(rule.get("onPodConditions"))
    if on_exit_codes is not None:
        errs.extend(_on_exit_codes(as_mapping(on_exit_codes), f.child(path, "onExitCodes"), names))
    if on_conditions:
        errs.extend(_on_pod_conditions(on_conditions, f.child(path, "onPodConditions")))
    if on_exit_codes is not None and on_conditions:
        errs.append(
            f.invalid_omitted(path, "specifying both OnExitCodes and OnPodConditions is not supported")
        )
    if on_exit_codes is None and not on_conditions:
        errs.append(f.invalid_omitted(path, "specifying one of OnExitCodes and OnPodConditions is required"))
    return errs


def _on_pod_conditions(patterns: list[Any], path: str) -> list[f.FieldError]:
    """validatePodFailurePolicyRuleOnPodConditions."""
    errs: list[f.FieldError] = []
    if len(patterns) > MAX_ON_POD_CONDITIONS_PATTERNS:
        errs.append(f.too_many(path, len(patterns), MAX_ON_POD_CONDITIONS_PATTERNS))
    for j, raw in enumerate(patterns):
        pattern = as_mapping(raw)
        pattern_path = f.index(path, j)
        ctype = str(pattern.get("type") or "")
        errs.extend(f.invalid(f.child(pattern_path, "type"), ctype, msg) for msg in is_qualified_name(ctype))
        status = pattern.get("status") or ""
        status_path = f.child(pattern_path, "status")
        if status == "":
            errs.append(f.required(status_path, f"valid values: {_go_strings(CONDITION_STATUSES)}"))
        elif status not in CONDITION_STATUSES:
            errs.append(f.not_supported(status_path, status, CONDITION_STATUSES))
    return errs


def _go_int32s(values: Any) -> f.GoValue:
    if values is None:
        return f.GoValue(values, "[]int32(nil)")
    return f.GoValue(values, "[]int32{" + ", ".join(str(v) for v in _list(values)) + "}")


def _on_exit_codes(requirement: Obj, path: str, names: set[str]) -> list[f.FieldError]:
    """validatePodFailurePolicyRuleOnExitCodes."""
    errs: list[f.FieldError] = []
    operator = requirement.get("operator") or ""
    operator_path = f.child(path, "operator")
    if operator == "":
        errs.append(f.required(operator_path, f"valid values: {_go_strings(OPERATORS)}"))
    elif operator not in OPERATORS:
        errs.append(f.not_supported(operator_path, operator, OPERATORS))
    name = requirement.get("containerName")
    if name is not None and name not in names:
        errs.append(
            f.invalid(
                f.child(path, "containerName"),
                name,
                "must be one of the container or initContainer names in the pod template",
            )
        )
    values_path = f.child(path, "values")
    raw = requirement.get("values")
    values = _list(raw)
    if not values:
        errs.append(f.invalid(values_path, _go_int32s(raw), "at least one value is required"))
    elif len(values) > MAX_ON_EXIT_CODES_VALUES:
        errs.append(f.too_many(values_path, len(values), MAX_ON_EXIT_CODES_VALUES))
    ordered = True
    seen: set[Any] = set()
    for j, value in enumerate(values):
        value_path = f.index(values_path, j)
        if operator == "In" and value == 0:
            errs.append(f.invalid(value_path, value, "must not be 0 for the In operator"))
        if value in seen:
            errs.append(f.duplicate(value_path, value))
        else:
            seen.add(value)
        if j > 0 and _int(values[j - 1]) is not None and _int(value) is not None and values[j - 1] > value:
            ordered = False
    if not ordered:
        errs.append(f.invalid(values_path, _go_int32s(values), "must be ordered"))
    return errs


def _success_policy(spec: Obj, path: str) -> list[f.FieldError]:
    """validateSuccessPolicy."""
    errs: list[f.FieldError] = []
    rules = _list(as_mapping(spec.get("successPolicy")).get("rules"))
    rules_path = f.child(path, "rules")
    if not rules:
        errs.append(
            f.required(rules_path, "at least one rules must be specified when the successPolicy is specified")
        )
    if len(rules) > MAX_SUCCESS_POLICY_RULES:
        errs.append(f.too_many(rules_path, len(rules), MAX_SUCCESS_POLICY_RULES))
    completions = _int(spec.get("completions")) or 0
    for i, rule in enumerate(rules):
        errs.extend(_success_policy_rule(as_mapping(rule), f.index(rules_path, i), completions))
    return errs


def _success_policy_rule(rule: Obj, path: str, completions: int) -> list[f.FieldError]:
    """validateSuccessPolicyRule."""
    errs: list[f.FieldError] = []
    count = rule.get("succeededCount")
    indexes = rule.get("succeededIndexes")
    if count is None and indexes is None:
        errs.append(f.required(path, "at least one of succeededCount or succeededIndexes must be specified"))
    total = 0
    if indexes is not None:
        indexes_path = f.child(path, "succeededIndexes")
        text = str(indexes)
        if len(text) > MAX_SUCCEEDED_INDEXES_LENGTH:
            errs.append(f.too_long(indexes_path, MAX_SUCCEEDED_INDEXES_LENGTH))
        parsed, error = validate_indexes_format(text, completions)
        total = parsed
        if error is not None:
            errs.append(f.invalid(indexes_path, text, f"error parsing succeededIndexes: {error}"))
    number = _int(count)
    if number is not None:
        count_path = f.child(path, "succeededCount")
        errs.extend(_nonnegative(number, count_path))
        if number > completions:
            errs.append(
                f.invalid(
                    count_path,
                    number,
                    f"must be less than or equal to {completions} (the number of specified completions)",
                )
            )
        if indexes is not None and number > total:
            errs.append(
                f.invalid(
                    count_path,
                    number,
                    f"must be less than or equal to {total} "
                    "(the number of indexes in the specified succeededIndexes field)",
                )
            )
    return errs


def validate_indexes_format(text: str, completions: int) -> tuple[int, str | None]:
    """validateIndexesFormat: (the number of indexes, the error in upstream's words or None)."""
    if not text:
        return 0, None
    last: int | None = None
    total = 0
    for part in text.split(","):
        first, end, error = _parse_index_interval(part, completions)
        if error is not None:
            return 0, error
        if last is not None and last >= first:
            return 0, f"non-increasing order, previous: {last}, current: {first}"
        total += end - first + 1
        last = end
    return total, None


def _parse_index_interval(text: str, completions: int) -> tuple[int, int, str | None]:
    """parseIndexInterval."""
    limits = text.split("-")
    if len(limits) > 2:
        return (
            0,
            0,
            f"the fragment {go_quote(text)} violates the requirement that an index interval can have at most "
            "two parts separated by '-'",
        )
    first = _atoi(limits[0])
    if first is None:
        return 0, 0, f"cannot convert string to integer for index: {go_quote(limits[0])}"
    if first >= completions:
        return 0, 0, f"too large index: {go_quote(limits[0])}"
    if len(limits) > 1:
        last = _atoi(limits[1])
        if last is None:
            return 0, 0, f"cannot convert string to integer for index: {go_quote(limits[1])}"
        if last >= completions:
            return 0, 0, f"too large index: {go_quote(limits[1])}"
        if first >= last:
            return 0, 0, f"non-increasing order, previous: {first}, current: {last}"
        return first, last, None
    return first, first, None


def _atoi(text: str) -> int | None:
    stripped = text[1:] if text[:1] in "+-" else text
    return int(text) if stripped.isascii() and stripped.isdigit() else None


def _go_success_policy(policy: Any) -> f.GoValue:
    """Go's %#v of a batch.SuccessPolicy (its pointers printed as Go prints them, at an address
    kube-apiserver's own run would choose)."""
    rules = []
    for raw in _list(as_mapping(policy).get("rules")):
        rule = as_mapping(raw)
        indexes = "(*string)(nil)" if rule.get("succeededIndexes") is None else "(*string)(0xc000000000)"
        count = "(*int32)(nil)" if rule.get("succeededCount") is None else "(*int32)(0xc000000000)"
        rules.append(f"batch.SuccessPolicyRule{{SucceededIndexes:{indexes}, SucceededCount:{count}}}")
    listed = (
        "[]batch.SuccessPolicyRule(nil)"
        if as_mapping(policy).get("rules") is None
        else ("[]batch.SuccessPolicyRule{" + ", ".join(rules) + "}")
    )
    return f.GoValue(policy, f"batch.SuccessPolicy{{Rules:{listed}}}")
