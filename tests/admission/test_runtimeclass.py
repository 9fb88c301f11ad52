"""RuntimeClass: overhead and scheduling, following upstream's TestSetOverhead, TestSetScheduling and
TestValidate cases."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetaint.admission import CONNECT, CREATE, DELETE, UPDATE, AdmissionError, Attributes
from kubetaint.admission.runtimeclass import RuntimeClass

from .builders import lookup, pod, pod_create, runtime_class, tol

OVERHEAD = {"podFixed": {"cpu": "100m", "memory": "64Mi"}}
WITH_OVERHEAD = runtime_class("kata", overhead=OVERHEAD)
PLAIN = runtime_class("runc")
SCHEDULING = runtime_class(
    "gvisor",
    scheduling={
        "nodeSelector": {"sandboxed": "true"},
        "tolerations": [tol("sandbox", "Exists", effect="NoSchedule")],
    },
)
STORE = (WITH_OVERHEAD, PLAIN, SCHEDULING)


def admit(requested: dict[str, Any]) -> dict[str, Any]:
    before = copy.deepcopy(requested)
    plugin = RuntimeClass()
    admitted = plugin.admit(pod_create(requested), lookup(*STORE))
    assert admitted is not None
    plugin.validate(pod_create(dict(admitted)), lookup(*STORE))
    assert requested == before
    return dict(admitted)


@pytest.mark.parametrize(
    ("requested", "overhead"),
    [
        pytest.param(pod(runtimeClassName="kata"), OVERHEAD["podFixed"], id="the RuntimeClass overhead is set on the pod"),
        pytest.param(pod(runtimeClassName="kata", overhead={"cpu": "0.1", "memory": "64Mi"}), {"cpu": "100m", "memory": "64Mi"},
                     id="an equal overhead spelled differently is accepted and normalised to the class's"),
        pytest.param(pod(runtimeClassName="runc"), None, id="a class without overhead sets none"),
        pytest.param(pod(), None, id="a pod without a runtime class is unchanged"),
    ],
)  # fmt: skip
def test_set_overhead(requested: dict[str, Any], overhead: dict[str, str] | None) -> None:
    assert admit(requested)["spec"].get("overhead") == overhead


@pytest.mark.parametrize(
    ("requested", "message"),
    [
        pytest.param(pod(runtimeClassName="kata", overhead={"cpu": "200m", "memory": "64Mi"}),
                     "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
                     id="a pod setting a different overhead is rejected"),
        pytest.param(pod(runtimeClassName="runc", overhead={"cpu": "1"}),
                     "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead",
                     id="a pod setting an overhead its class does not define is rejected"),
        pytest.param(pod(overhead={"cpu": "1"}),
                     "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead",
                     id="a pod setting an overhead without a runtime class is rejected"),
        pytest.param(pod(runtimeClassName="missing"), 'pod rejected: RuntimeClass "missing" not found',
                     id="an unknown runtime class is rejected"),
        pytest.param(pod(runtimeClassName="gvisor", nodeSelector={"sandboxed": "false"}),
                     "conflict: runtimeClass.scheduling.nodeSelector[sandboxed] = true; "
                     "pod.spec.nodeSelector[sandboxed] = false",
                     id="a conflicting node selector value is rejected"),
    ],
)  # fmt: skip
def test_rejections(requested: dict[str, Any], message: str) -> None:
    with pytest.raises(AdmissionError) as caught:
        admit(requested)
    assert (caught.value.code, caught.value.message) == (403, f'pods "p" is forbidden: {message}')


def test_validate_rejects_an_overhead_changed_after_admit() -> None:
    mutated = pod(runtimeClassName="kata", overhead={"cpu": "1", "memory": "64Mi"})
    with pytest.raises(AdmissionError, match="Pod's Overhead doesn't match"):
        RuntimeClass().validate(pod_create(mutated), lookup(*STORE))


@pytest.mark.parametrize(
    ("requested", "selector", "tolerations"),
    [
        pytest.param(pod(runtimeClassName="gvisor"), {"sandboxed": "true"}, [tol("sandbox", "Exists", effect="NoSchedule")],
                     id="the class node selector and tolerations are copied to a bare pod"),
        pytest.param(pod(runtimeClassName="gvisor", nodeSelector={"zone": "a"}), {"zone": "a", "sandboxed": "true"},
                     [tol("sandbox", "Exists", effect="NoSchedule")], id="node selectors are merged"),
        pytest.param(pod(runtimeClassName="gvisor", nodeSelector={"sandboxed": "true"}), {"sandboxed": "true"},
                     [tol("sandbox", "Exists", effect="NoSchedule")], id="an equal selector value is not a conflict"),
        pytest.param(pod(runtimeClassName="gvisor", tolerations=[tol("a", "Exists")]), {"sandboxed": "true"},
                     [tol("a", "Exists"), tol("sandbox", "Exists", effect="NoSchedule")],
                     id="pod tolerations come first and the class's are merged after"),
        pytest.param(pod(runtimeClassName="gvisor", tolerations=[tol(operator="Exists")]), {"sandboxed": "true"},
                     [tol(operator="Exists")], id="a class toleration covered by a pod superset is dropped"),
        pytest.param(pod(runtimeClassName="gvisor", tolerations=[tol("sandbox", "Equal", "x", "NoSchedule")]),
                     {"sandboxed": "true"}, [tol("sandbox", "Exists", effect="NoSchedule")],
                     id="a pod toleration covered by the class superset is replaced"),
        pytest.param(pod(runtimeClassName="runc", nodeSelector={"zone": "a"}), {"zone": "a"}, None,
                     id="a class without scheduling leaves the pod alone"),
    ],
)  # fmt: skip
def test_set_scheduling(
    requested: dict[str, Any], selector: dict[str, str], tolerations: list[dict[str, Any]] | None
) -> None:
    spec = admit(requested)["spec"]
    assert spec.get("nodeSelector") == selector
    assert spec.get("tolerations") == tolerations


def test_only_pod_creation_is_handled() -> None:
    plugin = RuntimeClass()
    assert [plugin.handles(op) for op in (CREATE, UPDATE, DELETE, CONNECT)] == [True, False, False, False]
    p = pod(runtimeClassName="missing")
    assert plugin.admit(Attributes(CREATE, "pods", p, subresource="status"), lookup()) is p
