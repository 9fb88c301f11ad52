"""A KubeSchedulerConfiguration is decoded strictly, as kube-scheduler's scheme decodes its
`--config` file (serializer.EnableStrict): a field kubescheduler.config.k8s.io/v1 does not have is
an error listing every such field by path, in document order; fields it has but kubetaint does
not apply stay warnings."""

from __future__ import annotations

import pytest

from kubetaint.clock import VirtualClock
from kubetaint.scheduler.config import ConfigError, load_profiles
from kubetaint.scheduler.scheduler import Scheduler

HEAD = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}

UNKNOWN = [
    pytest.param({"profilez": []}, ['"profilez"'], id="a misspelled top-level field"),
    pytest.param(
        {"healthzBindAddress": "0.0.0.0:10251", "metricsBindAddress": "0.0.0.0:10251"},
        ['"healthzBindAddress"', '"metricsBindAddress"'],
        id="fields of older versions that v1 no longer has",
    ),
    pytest.param(
        {"profiles": [{"schedulerName": "a", "pluginz": {}}]}, ['"profiles[0].pluginz"'], id="a profile field"
    ),
    pytest.param(
        {"profiles": [{"plugins": {"scores": {}, "score": {"enabld": []}}}]},
        ['"profiles[0].plugins.scores"', '"profiles[0].plugins.score.enabld"'],
        id="an extension point and a plugin set field",
    ),
    pytest.param(
        {"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "TaintToleration", "wieght": 3}]}}}]},
        ['"profiles[0].plugins.multiPoint.enabled[0].wieght"'],
        id="a plugin field",
    ),
    pytest.param(
        {"profiles": [{"pluginConfig": [{"name": "NodeAffinity", "arg": {}}]}]},
        ['"profiles[0].pluginConfig[0].arg"'],
        id="a plugin config field",
    ),
]


@pytest.mark.parametrize(("fields", "unknown"), UNKNOWN)
def test_fields_v1_does_not_have_are_a_strict_decoding_error(fields: dict, unknown: list[str]) -> None:
    with pytest.raises(ConfigError) as refused:
        load_profiles({**HEAD, **fields})
    assert str(refused.value) == "strict decoding error: " + ", ".join(f"unknown field {u}" for u in unknown)


def test_every_v1_field_decodes() -> None:
    config = {
        **HEAD,
        "parallelism": 16,
        "leaderElection": {"leaderElect": False},
        "clientConnection": {"qps": 50},
        "enableProfiling": True,
        "enableContentionProfiling": False,
        "percentageOfNodesToScore": 0,
        "podInitialBackoffSeconds": 1,
        "podMaxBackoffSeconds": 10,
        "extenders": [],
        "delayCacheUntilActive": False,
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "percentageOfNodesToScore": 50,
                "plugins": {
                    point: {"enabled": [], "disabled": []}
                    for point in (
                        "preEnqueue",
                        "queueSort",
                        "preFilter",
                        "filter",
                        "postFilter",
                        "preScore",
                        "score",
                        "reserve",
                        "permit",
                        "preBind",
                        "bind",
                        "postBind",
                        "multiPoint",
                    )
                },
                "pluginConfig": [{"name": "NodeAffinity", "args": {}}],
            }
        ],
    }
    scheduler = Scheduler(VirtualClock(), config=config)
    assert sorted(w.split(":")[0] for w in scheduler.warnings) == [
        "extenders",
        "parallelism",
        "podInitialBackoffSeconds",
        "podMaxBackoffSeconds",
    ]
