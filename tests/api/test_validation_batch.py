"""Job and CronJob validation (pkg/apis/batch/validation cases, as data)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.validation import validate

JSON = dict[str, Any]


def template(restart: str | None = "Never") -> JSON:
    spec: JSON = {"containers": [{"name": "c", "image": "busybox"}]}
    if restart is not None:
        spec["restartPolicy"] = restart
    return {"spec": spec}


def job(name: str = "j", **spec: Any) -> JSON:
    spec.setdefault("template", template())
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": spec,
    }


def cron_job(name: str = "c", **spec: Any) -> JSON:
    spec.setdefault("schedule", "*/5 * * * *")
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("jobTemplate", {"spec": {"template": template("OnFailure")}})
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": spec,
    }


def messages(obj: JSON, old: JSON | None = None) -> list[str]:
    return [str(e) for e in validate(obj, old=old)]


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(job(), [], id="a job restarting never"),
        pytest.param(
            job(template=template(None)),
            ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'],
            id="a job's pods must not restart always (the default)",
        ),
        pytest.param(
            job(template=template("Sometimes")),
            [
                'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: '
                '"Always", "OnFailure", "Never"',
                'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: '
                '"OnFailure", "Never"',
            ],
            id="an unknown restart policy, as the pod spec and as a job's",
        ),
        pytest.param(
            job(parallelism=-1, backoffLimit=-2),
            [
                "spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
                "spec.backoffLimit: Invalid value: -2: must be greater than or equal to 0",
            ],
            id="negative counts",
        ),
        pytest.param(
            job(manualSelector=True),
            ["spec.selector: Required value"],
            id="a manual selector must be given",
        ),
    ],
)
def test_job(obj: JSON, expected: list[str]) -> None:
    assert messages(obj) == expected


def test_a_jobs_completions_are_immutable() -> None:
    assert messages(job(completions=3), job(completions=1)) == [
        "spec.completions: Invalid value: 3: field is immutable"
    ]


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(cron_job(), [], id="every five minutes"),
        pytest.param(cron_job(schedule="@hourly"), [], id="a descriptor"),
        pytest.param(
            cron_job(schedule="* * *"),
            ['spec.schedule: Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]'],
            id="three fields",
        ),
        pytest.param(
            cron_job(schedule="@sometimes"),
            ['spec.schedule: Invalid value: "@sometimes": unrecognized descriptor: @sometimes'],
            id="an unknown descriptor",
        ),
        pytest.param(
            cron_job(concurrencyPolicy="Maybe"),
            [
                'spec.concurrencyPolicy: Unsupported value: "Maybe": supported values: "Allow", "Forbid", '
                '"Replace"'
            ],
            id="an unknown concurrency policy",
        ),
        pytest.param(
            cron_job(name="x" * 53),
            [f'metadata.name: Invalid value: "{"x" * 53}": must be no more than 52 characters'],
            id="room for the job name suffix",
        ),
        pytest.param(
            cron_job(jobTemplate={"spec": {"template": template(None)}}),
            [
                'spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'
            ],
            id="the job template's restart policy",
        ),
    ],
)
def test_cron_job(obj: JSON, expected: list[str]) -> None:
    assert messages(obj) == expected


def stateful_set(**spec: Any) -> JSON:
    base: JSON = {
        "selector": {"matchLabels": {"app": "db"}},
        "template": {"metadata": {"labels": {"app": "db"}}, "spec": template(None)["spec"]},
        "serviceName": "db",
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "ns"},
        "spec": {**base, **spec},
    }


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param({"replicas": 3}, [], id="replicas may change"),
        pytest.param(
            {"serviceName": "other"},
            [
                "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' "
                "are forbidden"
            ],
            id="the service name may not",
        ),
    ],
)
def test_a_stateful_set_update_changes_only_what_upstream_allows(change: JSON, expected: list[str]) -> None:
    assert messages(stateful_set(**change), stateful_set()) == expected
