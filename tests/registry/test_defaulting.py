"""The registry's defaulting step: an in-process create or update stores the kind's defaults
(the decoder's SetDefaults_*) and a Job's generated selector, as an HTTP write does."""

import random

import pytest

from kubetaint.admission import AdmissionChain
from kubetaint.clock import VirtualClock
from kubetaint.registry import Registry
from kubetaint.store.memory import MemoryStore

UID = "0b4c6c0e-1111-4222-8333-444455556666"


def make_registry() -> Registry:
    store = MemoryStore(VirtualClock())
    store.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
    return Registry(store, admission=AdmissionChain(), rng=random.Random(7))


def job(**meta: str) -> dict:
    template = {
        "metadata": {"labels": {"app": "batch"}},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]},
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "pi", "namespace": "default", **meta},
        "spec": {"template": template},
    }


def test_a_job_created_with_its_uid_is_stored_defaulted_with_its_generated_selector() -> None:
    created = make_registry().create("jobs.batch", job(uid=UID))
    spec = created["spec"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (1, 1, 6)
    assert spec["completionMode"] == "NonIndexed" and spec["suspend"] is False
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": UID}}
    labels = spec["template"]["metadata"]["labels"]
    assert labels["job-name"] == labels["batch.kubernetes.io/job-name"] == "pi"
    assert labels["controller-uid"] == UID
    assert created["metadata"]["labels"] == {"app": "batch"}  # the template's, as SetDefaults_Job


def test_a_stateful_set_update_without_defaults_stores_them() -> None:
    registry = make_registry()
    template = {
        "metadata": {"labels": {"app": "db"}},
        "spec": {"containers": [{"name": "c", "image": "db"}]},
    }
    manifest = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {"serviceName": "db", "selector": {"matchLabels": {"app": "db"}}, "template": template},
    }
    created = registry.create("statefulsets.apps", manifest)
    assert created["spec"]["podManagementPolicy"] == "OrderedReady"
    bare = {**manifest, "metadata": created["metadata"], "spec": {**manifest["spec"], "replicas": 3}}
    updated = registry.update("statefulsets.apps", bare)
    assert updated["spec"]["replicas"] == 3
    assert updated["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"partition": 0, "maxUnavailable": 1},
    }
    assert updated["spec"]["revisionHistoryLimit"] == 10


@pytest.mark.parametrize(
    ("resource", "manifest", "field", "value"),
    [
        pytest.param(
            "cronjobs.batch",
            {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "metadata": {"name": "c", "namespace": "default"},
                "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": job()["spec"]}},
            },
            ("spec", "concurrencyPolicy"),
            "Allow",
            id="a cron job allows concurrent runs by default",
        ),
        pytest.param(
            "persistentvolumeclaims",
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data", "namespace": "default"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
                "status": {"phase": "Bound"},
            },
            ("status", "phase"),
            "Pending",
            id="a created claim starts Pending whatever status it is given",
        ),
        pytest.param(
            "rolebindings.rbac.authorization.k8s.io",
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": "b", "namespace": "default"},
                "roleRef": {"kind": "Role", "name": "r"},
                "subjects": [{"kind": "User", "name": "alice"}],
            },
            ("roleRef", "apiGroup"),
            "rbac.authorization.k8s.io",
            id="a binding's role reference gets the RBAC group",
        ),
        pytest.param(
            "secrets",
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "s", "namespace": "default"},
                "stringData": {"k": "v"},
            },
            ("data", "k"),
            "dg==",
            id="a secret's string data is stored as base64 data",
        ),
    ],
)
def test_an_in_process_create_stores_the_kinds_defaults(
    resource: str, manifest: dict, field: tuple[str, str], value: str
) -> None:
    created = make_registry().create(resource, manifest)
    assert created[field[0]][field[1]] == value


GENERATION = "deprecated.daemonset.template.generation"


def _daemonset(annotations: dict[str, str] | None = None) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "default", "annotations": annotations or {}},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "agent", "image": "agent:1"}]},
            },
        },
    }


# pkg/registry/apps/daemonset/strategy.go: PrepareForCreate sets TemplateGeneration to at least 1;
# PrepareForUpdate keeps the stored one (a request cannot set it) and adds one when the template
# changes; apps/v1 carries it in the annotation.
@pytest.mark.parametrize(
    ("given", "stored"),
    [
        pytest.param(None, "1", id="a new daemon set is at template generation 1"),
        pytest.param("5", "5", id="a given template generation is kept"),
        pytest.param("-3", "1", id="one below 1 becomes 1"),
    ],
)
def test_a_daemon_set_is_created_with_its_template_generation(given: str | None, stored: str) -> None:
    created = make_registry().create("daemonsets.apps", _daemonset({GENERATION: given} if given else None))
    assert created["metadata"]["annotations"][GENERATION] == stored


def test_a_daemon_set_moves_to_the_next_template_generation_only_when_its_template_changes() -> None:
    registry = make_registry()
    created = registry.create("daemonsets.apps", _daemonset())
    other_spec = {**created, "spec": {**created["spec"], "minReadySeconds": 5}}
    updated = registry.update("daemonsets.apps", other_spec)
    assert updated["metadata"]["annotations"][GENERATION] == "1"
    assert updated["metadata"]["generation"] == 2
    set_by_request = {**updated, "metadata": {**updated["metadata"], "annotations": {GENERATION: "9"}}}
    assert registry.update("daemonsets.apps", set_by_request)["metadata"]["annotations"][GENERATION] == "1"
    stored = registry.get("daemonsets.apps", "default", "agent")
    template = stored["spec"]["template"]
    new_image = {**template, "spec": {"containers": [{"name": "agent", "image": "agent:2"}]}}
    rolled = registry.update("daemonsets.apps", {**stored, "spec": {**stored["spec"], "template": new_image}})
    assert rolled["metadata"]["annotations"][GENERATION] == "2"
    assert rolled["metadata"]["generation"] == 3
