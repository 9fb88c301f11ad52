"""ConfigMaps, Secrets and ServiceAccounts over HTTP: stored as upstream stores them (a Secret's
stringData merged into data, its type defaulted), refused in upstream's words, printed with
kubectl's columns; kinds kubetaint stores without running them are created with a warning."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from starlette.testclient import TestClient

from .builders import TABLE_ACCEPT

JSON = dict[str, Any]
CORE = "/api/v1/namespaces/default"


def meta(name: str) -> JSON:
    return {"name": name, "namespace": "default"}


def test_a_secrets_string_data_is_merged_into_data_and_not_stored(engine_client: TestClient) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": meta("creds"),
        "data": {"user": base64.b64encode(b"old").decode(), "keep": "eA=="},
        "stringData": {"user": "admin", "pass": "s3cret"},
    }
    created = engine_client.post(f"{CORE}/secrets", json=body)
    assert created.status_code == 201, created.text
    stored = engine_client.get(f"{CORE}/secrets/creds").json()
    assert "stringData" not in stored
    assert stored["type"] == "Opaque"
    assert {k: base64.b64decode(v).decode() for k, v in stored["data"].items()} == {
        "user": "admin",
        "pass": "s3cret",
        "keep": "x",
    }


def test_string_data_merges_on_update_too(engine_client: TestClient) -> None:
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": meta("s"), "data": {"a": "eA=="}}
    assert engine_client.post(f"{CORE}/secrets", json=body).status_code == 201
    patch = {"stringData": {"b": "y"}}
    response = engine_client.patch(
        f"{CORE}/secrets/s", json=patch, headers={"Content-Type": "application/merge-patch+json"}
    )
    assert response.status_code == 200, response.text
    assert response.json()["data"] == {"a": "eA==", "b": "eQ=="}
    assert "stringData" not in response.json()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(
            {"a": "abc!"},
            'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3',
            id="a character outside the alphabet",
        ),
        pytest.param(
            {"a": "abcde"},
            'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 4',
            id="a quantum without its padding",
        ),
        pytest.param(
            {"a": 5},
            'Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal number into Go '
            "struct field Secret.data of type []uint8",
            id="a number is not bytes",
        ),
    ],
)
def test_secret_data_must_be_base64(engine_client: TestClient, data: JSON, message: str) -> None:
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": meta("bad"), "data": data}
    response = engine_client.post(f"{CORE}/secrets", json=body)
    assert (response.status_code, response.json()["message"]) == (400, message)


def test_a_secrets_type_cannot_change(engine_client: TestClient) -> None:
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": meta("t"), "stringData": {"username": "u"}}
    assert engine_client.post(f"{CORE}/secrets", json=body).status_code == 201
    response = engine_client.patch(
        f"{CORE}/secrets/t",
        json={"type": "kubernetes.io/basic-auth"},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 422
    assert response.json()["message"] == (
        'Secret "t" is invalid: type: Invalid value: "kubernetes.io/basic-auth": field is immutable'
    )


def test_an_immutable_config_map_refuses_new_data(engine_client: TestClient) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta("c"),
        "data": {"a": "1"},
        "immutable": True,
    }
    assert engine_client.post(f"{CORE}/configmaps", json=body).status_code == 201
    response = engine_client.patch(
        f"{CORE}/configmaps/c",
        json={"data": {"a": "2"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert (response.status_code, response.json()["message"]) == (
        422,
        'ConfigMap "c" is invalid: data: Forbidden: field is immutable when `immutable` is set',
    )


def _rows(client: TestClient, path: str) -> tuple[list[str], list[list[Any]]]:
    table = client.get(path, headers={"Accept": TABLE_ACCEPT}).json()
    return [c["name"] for c in table["columnDefinitions"]], [row["cells"] for row in table["rows"]]


def test_tables_have_kubectls_columns(engine_client: TestClient) -> None:
    for path, body in (
        ("configmaps", {"kind": "ConfigMap", "data": {"a": "1"}, "binaryData": {"b": "eA=="}}),
        (
            "secrets",
            {"kind": "Secret", "type": "kubernetes.io/tls", "stringData": {"tls.crt": "c", "tls.key": "k"}},
        ),
        ("serviceaccounts", {"kind": "ServiceAccount", "secrets": [{"name": "x"}]}),
    ):
        created = engine_client.post(
            f"{CORE}/{path}", json={"apiVersion": "v1", **body, "metadata": meta("o")}
        )
        assert created.status_code == 201, created.text
    assert _rows(engine_client, f"{CORE}/configmaps") == (["Name", "Data", "Age"], [["o", 2, "0s"]])
    assert _rows(engine_client, f"{CORE}/secrets") == (
        ["Name", "Type", "Data", "Age"],
        [["o", "kubernetes.io/tls", 2, "0s"]],
    )
    assert _rows(engine_client, f"{CORE}/serviceaccounts") == (["Name", "Secrets", "Age"], [["o", 1, "0s"]])


TEMPLATE = {
    "metadata": {"labels": {"app": "a"}},
    "spec": {"containers": [{"name": "c", "image": "busybox"}]},
}
RUN_ONCE = {**TEMPLATE, "spec": {**TEMPLATE["spec"], "restartPolicy": "Never"}}


#: What SetDefaults_StatefulSet, SetDefaults_Job and SetDefaults_CronJob add.
DEFAULTS: dict[str, JSON] = {
    "StatefulSet": {
        "podManagementPolicy": "OrderedReady",
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": 1}},
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
        "replicas": 1,
        "revisionHistoryLimit": 10,
    },
    "Job": {
        "completions": 1,
        "parallelism": 1,
        "backoffLimit": 6,
        "completionMode": "NonIndexed",
        "suspend": False,
        "podReplacementPolicy": "TerminatingOrFailed",
    },
    "CronJob": {
        "concurrencyPolicy": "Allow",
        "suspend": False,
        "successfulJobsHistoryLimit": 3,
        "failedJobsHistoryLimit": 1,
    },
}


@pytest.mark.parametrize(
    ("path", "body", "controller"),
    [
        pytest.param(
            "/apis/apps/v1/namespaces/default/statefulsets",
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": TEMPLATE},
            },
            "StatefulSet",
            id="a StatefulSet",
        ),
        pytest.param(
            "/apis/batch/v1/namespaces/default/jobs",
            {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": RUN_ONCE}},
            "Job",
            id="a Job",
        ),
        pytest.param(
            "/apis/batch/v1/namespaces/default/cronjobs",
            {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": RUN_ONCE}}},
            },
            "CronJob",
            id="a CronJob",
        ),
    ],
)
def test_workloads_are_stored_with_upstreams_defaults_and_run_without_a_warning(
    engine_client: TestClient, path: str, body: JSON, controller: str
) -> None:
    response = engine_client.post(path, json={**body, "metadata": meta("w")})
    assert response.status_code == 201, response.text
    assert response.json()["spec"] | DEFAULTS[controller] == response.json()["spec"]
    assert engine_client.get(f"{path}/w").status_code == 200
    assert "warning" not in response.headers


def test_a_jobs_selector_is_generated_from_its_uid(engine_client: TestClient) -> None:
    body = {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta("j"), "spec": {"template": RUN_ONCE}}
    job = engine_client.post("/apis/batch/v1/namespaces/default/jobs", json=body).json()
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert job["spec"]["template"]["metadata"]["labels"] == {
        "app": "a",
        "job-name": "j",
        "batch.kubernetes.io/job-name": "j",
        "controller-uid": uid,
        "batch.kubernetes.io/controller-uid": uid,
    }
    assert job["metadata"]["labels"] == {"app": "a"}  # the template's labels before the generated ones


def test_a_jobs_selector_must_match_its_template(engine_client: TestClient) -> None:
    body = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta("m"),
        "spec": {"manualSelector": True, "selector": {"matchLabels": {"app": "other"}}, "template": RUN_ONCE},
    }
    response = engine_client.post("/apis/batch/v1/namespaces/default/jobs", json=body)
    assert (response.status_code, response.json()["message"]) == (
        422,
        'Job.batch "m" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"a"}: '
        "`selector` does not match template `labels`",
    )
