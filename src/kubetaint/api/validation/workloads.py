"""The selector and pod template checks of the apps/v1 workloads (mirrors
pkg/apis/apps/validation/validation.go: ValidateReplicaSetSpec, ValidateDeploymentSpec,
ValidateDaemonSetSpec and ValidatePodTemplateSpecForReplicaSet, selector and template parts)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.jsonview import mapping_in as _m
from kubetaint.api.validation import field as f
from kubetaint.api.validation.labelselector import (
    go_label_selector,
    selector_converts,
    validate_label_selector,
)
from kubetaint.api.validation.podspec import validate_pod_template
from kubetaint.api.validation.selectors import selector_matches
from kubetaint.api.validation.topologyspread import CREATE, SpreadOptions

Obj = Mapping[str, Any]


def selector_and_template(
    kind: str, spec: Obj, allow_comparison: bool, spread: SpreadOptions = CREATE
) -> list[f.FieldError]:
    """The selector and template checks of ValidateReplicaSetSpec / ValidateDeploymentSpec (a
    selector metav1.LabelSelectorAsSelector refuses skips the template) and ValidateDaemonSetSpec
    (no required selector; the match check comes before the empty check). `spread`: the
    template's topology spread options (an update's, from the old template)."""
    selector = spec.get("selector")
    errs = validate_label_selector(selector, "spec.selector")
    converts = selector_converts(selector)
    empty = (
        isinstance(selector, Mapping)
        and not selector.get("matchLabels")
        and not selector.get("matchExpressions")
    )
    empty_error = f.invalid(
        "spec.selector",
        f.GoValue(dict(selector), go_label_selector(selector)) if isinstance(selector, Mapping) else None,
        f"empty selector is invalid for {kind.lower()}",
    )
    template = spec.get("template")
    if kind == "DaemonSet":
        if converts and isinstance(template, Mapping):
            errs.extend(_template_labels_match(selector, template))
        if empty:
            errs.append(empty_error)
        return errs + _template(kind, template, allow_comparison, spread)
    if not isinstance(selector, Mapping):
        errs.append(f.required("spec.selector"))
    elif empty:
        errs.append(empty_error)
    if not converts and isinstance(selector, Mapping):  # (only a mapping can fail)
        shown = f.GoValue(dict(selector), go_label_selector(selector))
        return [*errs, f.invalid("spec.selector", shown, "invalid label selector")]
    if isinstance(template, Mapping) and not empty:
        errs.extend(_template_labels_match(selector, template))
    return errs + _template(kind, template, allow_comparison, spread)


def _template_labels_match(selector: Any, template: Mapping[str, Any]) -> list[f.FieldError]:
    """The template's labels against the selector (an absent selector matches nothing)."""
    meta = _m(template, "metadata")
    labels = _m(meta, "labels")
    if isinstance(selector, Mapping) and selector_matches(selector, labels):
        return []
    rendered = (
        f.go_string_map(labels) if isinstance(meta.get("labels"), Mapping) else "map[string]string(nil)"
    )
    shown = f.GoValue(dict(labels), rendered)
    return [f.invalid("spec.template.metadata.labels", shown, "`selector` does not match template `labels`")]


def _template(kind: str, template: Any, allow_comparison: bool, spread: SpreadOptions) -> list[f.FieldError]:
    """ValidatePodTemplateSpec, then the restart policy and deadline a workload's pods need."""
    if not isinstance(template, Mapping):
        return [f.required("spec.template")]
    errs = validate_pod_template(template, "spec.template", allow_comparison=allow_comparison, spread=spread)
    template_spec = _m(template, "spec")
    restart = template_spec.get("restartPolicy") or "Always"
    if restart != "Always":
        errs.append(f.not_supported("spec.template.spec.restartPolicy", restart, ("Always",)))
    if template_spec.get("activeDeadlineSeconds") is not None:
        detail = f"activeDeadlineSeconds in {kind} is not Supported"
        errs.append(f.forbidden("spec.template.spec.activeDeadlineSeconds", detail))
    return errs
