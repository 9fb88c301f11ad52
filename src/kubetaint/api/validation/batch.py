"""batch/v1 Job and CronJob validation, the parts an application manifest meets (mirrors
ValidateJob, validateJobSpec, ValidateCronJobCreate/Update, ValidateCronJobSpec,
ValidateJobTemplateSpec, validateScheduleFormat and validateConcurrencyPolicy in
pkg/apis/batch/validation/validation.go). A Job reaches the server's validation with its
generated selector (the registry derives it from the Job's uid, as upstream's strategy does); a
Job validated offline, before any uid exists, needs a selector only with `manualSelector: true`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.jsonview import mapping_in as _m
from kubetaint.api.validation import field as f
from kubetaint.api.validation.jobpolicies import (
    restart_policy_errors,
    validate_indexes_and_modes,
    validate_policies,
)
from kubetaint.api.validation.labelselector import selector_converts, validate_label_selector
from kubetaint.api.validation.metaupdate import validate_namespaced_metadata as _meta
from kubetaint.api.validation.objectmeta import IS_NEGATIVE_ERROR
from kubetaint.api.validation.podspec import validate_pod_template
from kubetaint.api.validation.selectors import selector_matches
from kubetaint.api.validation.topologyspread import CREATE, SpreadOptions, spread_options

Obj = Mapping[str, Any]
RESTART_POLICIES = ("OnFailure", "Never")
CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")
#: DNS1035LabelMaxLength - 11: the cronjob controller suffixes `-<timestamp>` to its Jobs' names.
CRON_JOB_NAME_MAX = 52
CRON_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")


def _nonnegative(spec: Obj, path: str, *names: str) -> list[f.FieldError]:
    errs = []
    for name in names:
        value = spec.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            errs.append(f.invalid(f.child(path, name), value, IS_NEGATIVE_ERROR))
    return errs


def validate_job_spec(
    spec: Obj, path: str, allow_comparison: bool, spread: SpreadOptions = CREATE
) -> list[f.FieldError]:
    """validateJobSpec: counts, indexes and policies (jobpolicies.py), the pod template (`spread`:
    its topology spread options, an update's from the old template), a restart policy of
    OnFailure or Never (Never with a pod failure policy)."""
    errs = _nonnegative(spec, path, "parallelism", "completions", "activeDeadlineSeconds", "backoffLimit")
    errs.extend(_nonnegative(spec, path, "ttlSecondsAfterFinished"))
    errs.extend(validate_indexes_and_modes(spec, path))
    errs.extend(validate_policies(spec, path))
    template = spec.get("template")
    if isinstance(template, Mapping):
        errs.extend(
            validate_pod_template(
                template, f.child(path, "template"), allow_comparison=allow_comparison, spread=spread
            )
        )
    restart = _m(_m(spec, "template"), "spec").get("restartPolicy") or ""
    restart_path = f.child(path, "template", "spec", "restartPolicy")
    if restart in ("", "Always"):
        errs.append(f.required(restart_path, 'valid values: "OnFailure", "Never"'))
    elif restart not in RESTART_POLICIES:
        errs.append(f.not_supported(restart_path, restart, RESTART_POLICIES))
    else:
        errs.extend(restart_policy_errors(spec, path, restart))
    return errs


def validate_job(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateJob (ValidateJobUpdate's metadata rules with `old`)."""
    errs = _meta(obj, old)
    spec = _m(obj, "spec")
    selector = spec.get("selector")
    if selector is None and spec.get("manualSelector") is True:
        errs.append(f.required("spec.selector"))
    elif selector is not None:
        errs.extend(validate_label_selector(selector, "spec.selector"))
    spread = CREATE if old is None else spread_options(_m(_m(_m(old, "spec"), "template"), "spec"))
    errs.extend(validate_job_spec(spec, "spec", allow_comparison, spread))
    if isinstance(selector, Mapping) and selector_converts(selector):
        template_meta = _m(_m(spec, "template"), "metadata")
        labels = _m(template_meta, "labels")
        if not selector_matches(selector, labels):
            shown = f.GoValue(dict(labels), f.go_string_map(labels))
            detail = "`selector` does not match template `labels`"
            errs.append(f.invalid("spec.template.metadata.labels", shown, detail))
    if old is not None:
        errs.extend(_job_spec_update_errors(spec, _m(old, "spec")))
    return errs


def _job_spec_update_errors(spec: Obj, old_spec: Obj) -> list[f.FieldError]:
    """ValidateJobSpecUpdate's immutable scalars: completions (but for an Indexed Job's elastic
    resize) and completionMode."""
    errs = []
    elastic = spec.get("completionMode") == "Indexed" and spec.get("completions") == spec.get("parallelism")
    if spec.get("completions") != old_spec.get("completions") and not elastic:
        errs.append(f.invalid("spec.completions", spec.get("completions"), "field is immutable"))
    if spec.get("completionMode") != old_spec.get("completionMode"):
        errs.append(f.invalid("spec.completionMode", spec.get("completionMode"), "field is immutable"))
    return errs


def schedule_errors(schedule: str) -> list[str]:
    """What robfig/cron's ParseStandard refuses, in its words: a descriptor it does not know, or
    a number of fields other than five."""
    if schedule.startswith("@"):
        if schedule in CRON_DESCRIPTORS or schedule.startswith("@every "):
            return []
        return [f"unrecognized descriptor: {schedule}"]
    fields = schedule.split()
    if len(fields) != 5:
        return [f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"]
    return []


def validate_cron_job(obj: Obj, old: Obj | None, allow_comparison: bool) -> list[f.FieldError]:
    """ValidateCronJobCreate / ValidateCronJobUpdate."""
    errs = _meta(obj, old)
    name = str(_m(obj, "metadata").get("name") or "")
    if old is None and len(name) > CRON_JOB_NAME_MAX:
        errs.append(f.invalid("metadata.name", name, f"must be no more than {CRON_JOB_NAME_MAX} characters"))
    spec = _m(obj, "spec")
    schedule = spec.get("schedule")
    if not schedule:
        errs.append(f.required("spec.schedule"))
    else:
        errs.extend(f.invalid("spec.schedule", schedule, msg) for msg in schedule_errors(str(schedule)))
    errs.extend(_nonnegative(spec, "spec", "startingDeadlineSeconds"))
    policy = spec.get("concurrencyPolicy") or ""
    if not policy:
        errs.append(f.required("spec.concurrencyPolicy"))
    elif policy not in CONCURRENCY_POLICIES:
        errs.append(f.not_supported("spec.concurrencyPolicy", policy, CONCURRENCY_POLICIES))
    job_spec = _m(_m(spec, "jobTemplate"), "spec")
    old_template = _m(_m(_m(_m(old, "spec"), "jobTemplate"), "spec"), "template") if old is not None else None
    spread = CREATE if old_template is None else spread_options(_m(old_template, "spec"))
    errs.extend(validate_job_spec(job_spec, "spec.jobTemplate.spec", allow_comparison, spread))
    if job_spec.get("manualSelector") is True:
        errs.append(f.not_supported("spec.jobTemplate.spec.manualSelector", True, ("nil", "false")))
    errs.extend(_nonnegative(spec, "spec", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"))
    return errs
