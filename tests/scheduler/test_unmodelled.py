"""What the scheduler does not model comes back as warnings naming the field: pod fields upstream's
scheduler reads (volumes, resource claims, pod-level resources) and configuration settings and
plugin arguments kubetaint does not apply. The usual pod and configuration have none."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.scheduler.unmodelled import config_warnings, pod_warnings
from scheduler.builders import node, pod, scheduler

KNOWN = frozenset({"NodeResourcesFit", "NodeAffinity", "DefaultPreemption"})


def _with(**spec: Any) -> dict[str, Any]:
    p = pod("p")
    p["spec"].update(spec)
    return p


@pytest.mark.parametrize(
    ("p", "warnings"),
    [
        pytest.param(pod("p", cpu="1"), [], id="a pod with containers only has no warning"),
        pytest.param(
            _with(volumes=[{"name": "tmp", "emptyDir": {}}]), [], id="an emptyDir needs nothing from the node"
        ),
        pytest.param(
            _with(
                volumes=[
                    {"name": "cfg", "configMap": {"name": "c"}},
                    {"name": "d", "gcePersistentDisk": {"pdName": "x"}},
                ]
            ),
            [
                "spec.volumes[1].gcePersistentDisk: not modelled (CSI migration): NodeVolumeLimits does not "
                "count the volume against its CSI driver's attach limit"
            ],
            id="an in-tree disk is named by its index",
        ),
        pytest.param(
            _with(
                volumes=[
                    {"name": "d", "csi": {"driver": "x"}},
                    {"name": "c", "persistentVolumeClaim": {"claimName": "c"}},
                ]
            ),
            [],
            id="inline CSI volumes and claims are judged as upstream",
        ),
        pytest.param(
            _with(volumes=[{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]),
            [
                "spec.volumes[0].ephemeral: not modelled (ephemeral volume controller): the claim p-scratch is "
                "not created for the pod; VolumeBinding waits for it"
            ],
            id="a generic ephemeral volume's claim is not created",
        ),
        pytest.param(
            _with(resourceClaims=[{"name": "gpu"}]),
            ["spec.resourceClaims: not modelled (DynamicResources): device allocation is not judged"],
            id="resource claims",
        ),
        pytest.param(
            _with(resources={"requests": {"cpu": "2"}}),
            ["spec.resources: pod-level resources are not modelled: the containers' requests are used"],
            id="pod-level resources",
        ),
    ],
)
def test_pod_warnings(p: dict[str, Any], warnings: list[str]) -> None:
    assert pod_warnings(p) == warnings


@pytest.mark.parametrize(
    ("config", "warnings"),
    [
        pytest.param(None, [], id="no configuration"),
        pytest.param(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "leaderElection": {"leaderElect": False},
                "percentageOfNodesToScore": 50,
                "profiles": [{"schedulerName": "a", "pluginConfig": [{"name": "NodeAffinity", "args": {}}]}],
            },
            [],
            id="what the scheduler reads and process settings have no warning",
        ),
        pytest.param(
            {"extenders": [{"urlPrefix": "http://x"}], "podInitialBackoffSeconds": 2},
            [
                "extenders: not modelled: kubetaint's scheduler does not apply this setting",
                "podInitialBackoffSeconds: not modelled: kubetaint's scheduler does not apply this setting",
            ],
            id="extenders and backoff settings",
        ),
        pytest.param(
            {
                "profiles": [
                    {
                        "pluginConfig": [
                            {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 5}},
                            {
                                "name": "NodeResourcesFit",
                                "args": {"apiVersion": "x", "kind": "NodeResourcesFitArgs", "unknown": 1},
                            },
                        ]
                    }
                ]
            },
            [
                "profiles[0].pluginConfig[0]: plugin VolumeBinding is not implemented: its arguments are not "
                "applied",
                "profiles[0].pluginConfig[1].args.unknown: not modelled: NodeResourcesFit does not read this "
                "argument",
            ],
            id="arguments of a plugin not implemented and arguments no plugin reads",
        ),
    ],
)
def test_config_warnings(config: dict[str, Any] | None, warnings: list[str]) -> None:
    assert config_warnings(config, KNOWN) == warnings


def test_a_cycle_carries_the_pods_warnings() -> None:
    s = scheduler([node("a")], [_with(resourceClaims=[{"name": "gpu"}])])
    result = s.schedule_one()
    assert result is not None and result.node == "a"
    assert result.warnings == [
        "spec.resourceClaims: not modelled (DynamicResources): device allocation is not judged"
    ]
