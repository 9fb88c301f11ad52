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


def _in_args(at: str, plugin: str, *unknown: str) -> str:
    """PluginConfig.decodeNestedObjects' error, as KubeSchedulerConfiguration.DecodeNestedObjects
    wraps it."""
    fields = ", ".join(f"unknown field {u}" for u in unknown)
    return (
        f"decoding .{at}: strict decoding error: decoding args for plugin {plugin}: "
        f"strict decoding error: {fields}"
    )


UNKNOWN_IN_ARGS = [
    pytest.param(
        [
            {
                "name": "NodeResourcesFit",
                "args": {"scoringStrategy": {"resources": [{"name": "cpu", "wieght": 2}]}},
            }
        ],
        [
            _in_args(
                "profiles[0].pluginConfig[0]", "NodeResourcesFit", '"scoringStrategy.resources[0].wieght"'
            )
        ],
        id="a field of a list item inside the arguments",
    ),
    pytest.param(
        [
            {"name": "DefaultPreemption", "args": {"minCandidateNodesPercent": 5}},
            {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 1}},
            {"name": "NodeAffinity", "args": {"addedAffinity": {"requiredDuringScheduling": {}}}},
        ],
        [
            _in_args("profiles[0].pluginConfig[0]", "DefaultPreemption", '"minCandidateNodesPercent"'),
            _in_args(
                "profiles[0].pluginConfig[2]", "NodeAffinity", '"addedAffinity.requiredDuringScheduling"'
            ),
        ],
        id="each plugin's arguments on their own, in order",
    ),
    pytest.param(
        [
            {
                "name": "PodTopologySpread",
                "args": {
                    "defaultingType": "List",
                    "defaultConstraints": [
                        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "skew": 1}
                    ],
                    "default": [],
                },
            }
        ],
        [
            _in_args(
                "profiles[0].pluginConfig[0]",
                "PodTopologySpread",
                '"defaultConstraints[0].skew"',
                '"default"',
            )
        ],
        id="a core type inside the arguments (TopologySpreadConstraint)",
    ),
]


@pytest.mark.parametrize(("plugin_config", "errors"), UNKNOWN_IN_ARGS)
def test_unknown_fields_in_plugin_arguments_are_a_strict_decoding_error(
    plugin_config: list[dict], errors: list[str]
) -> None:
    with pytest.raises(ConfigError) as refused:
        load_profiles({**HEAD, "profiles": [{"pluginConfig": plugin_config}]})
    assert str(refused.value) == "strict decoding error: " + ", ".join(errors)


def test_the_configuration_s_own_unknown_fields_come_before_those_in_arguments() -> None:
    config = {
        **HEAD,
        "profiles": [
            {"pluginConfig": [{"name": "VolumeBinding", "args": {"bindTimeout": 5}}], "pluginz": {}}
        ],
        "profilez": [],
    }
    with pytest.raises(ConfigError) as refused:
        load_profiles(config)
    assert str(refused.value) == (
        'strict decoding error: unknown field "profilez", unknown field "profiles[0].pluginz", '
        + _in_args("profiles[0].pluginConfig[0]", "VolumeBinding", '"bindTimeout"')
    )


def test_every_v1_argument_field_decodes() -> None:
    term = {"matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]}], "matchFields": []}
    shape = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
    plugin_config = [
        {
            "name": "DefaultPreemption",
            "args": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
        },
        {
            "name": "InterPodAffinity",
            "args": {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False},
        },
        {
            "name": "NodeResourcesFit",
            "args": {
                "ignoredResources": [],
                "ignoredResourceGroups": [],
                "scoringStrategy": {
                    "type": "RequestedToCapacityRatio",
                    "resources": [{"name": "cpu", "weight": 1}],
                    "requestedToCapacityRatio": {"shape": shape},
                },
            },
        },
        {
            "name": "PodTopologySpread",
            "args": {
                "defaultingType": "List",
                "defaultConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "topology.kubernetes.io/zone",
                        "whenUnsatisfiable": "ScheduleAnyway",
                        "minDomains": None,
                        "nodeAffinityPolicy": "Honor",
                        "nodeTaintsPolicy": "Ignore",
                    }
                ],
            },
        },
        {"name": "NodeResourcesBalancedAllocation", "args": {"resources": [{"name": "cpu", "weight": 1}]}},
        {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 600, "shape": shape}},
        {
            "name": "NodeAffinity",
            "args": {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "NodeAffinityArgs",
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]},
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": term}],
                },
            },
        },
    ]
    load_profiles({**HEAD, "profiles": [{"pluginConfig": plugin_config}]})


def test_an_out_of_tree_plugin_s_arguments_are_not_looked_at() -> None:
    specs, _ = load_profiles(
        {**HEAD, "profiles": [{"pluginConfig": [{"name": "Coscheduling", "args": {"x": 1}}]}]}
    )
    assert specs[0].plugin_args["Coscheduling"] == {"x": 1}


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
