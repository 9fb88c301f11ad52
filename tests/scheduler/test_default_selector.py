"""helper.DefaultSelector (pkg/scheduler/framework/plugins/helper/spread.go) and the default
spread constraints built from it: upstream's spread_test.go TestGetPodServices as data, the
merging rules of DefaultSelector (Services of the pod's namespace whose selector matches it,
then the selector of its controlling ReplicaSet or StatefulSet), and podtopologyspread's
system-defaulting and List-defaulting score cases with a real Service."""

from __future__ import annotations

from itertools import count
from typing import Any

import pytest

from kubetaint.api.selectors import LabelSelector
from kubetaint.scheduler.explain import explain
from kubetaint.scheduler.plugins.default_selector import _RS_SELECTORS, default_selector
from kubetaint.scheduler.scheduler import Scheduler
from kubetaint.scheduler.unmodelled import pod_warnings
from kubetaint.speed.memo import counting, counting_on
from kubetaint.speed.reference import reference_mode_set
from scheduler.pod_affinity_builders import expr, make_node, make_pod, scheduler_with, scores

JSON = dict[str, Any]
PLUGIN = "PodTopologySpread"
HOST = "kubernetes.io/hostname"
#: each object built here is a distinct object (the selector memos key by uid and resourceVersion)
_UIDS = count()


def service(name: str, selector: JSON | None, namespace: str = "default", version: str = "1") -> JSON:
    spec: JSON = {} if selector is None else {"selector": selector}
    meta = {
        "name": name,
        "namespace": namespace,
        "uid": f"svc-{name}-{next(_UIDS)}",
        "resourceVersion": version,
    }
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec}


def workload(kind: str, name: str, selector: Any, version: str = "1") -> JSON:
    meta = {
        "name": name,
        "namespace": "default",
        "uid": f"{kind}-{name}-{next(_UIDS)}",
        "resourceVersion": version,
    }
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": {"selector": selector}}


def owner(kind: str, name: str, api_version: str = "apps/v1", controller: bool = True) -> JSON:
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": "u", "controller": controller}


def pod(labels: JSON, *owners: JSON, namespace: str = "default") -> JSON:
    p = make_pod(labels=labels, namespace=namespace)
    if owners:
        p["metadata"]["ownerReferences"] = list(owners)
    return p


def selects(selector: LabelSelector) -> set[tuple[str, str, tuple[str, ...]]]:
    return set(selector.requirements)


def eq(key: str, value: str) -> tuple[str, str, tuple[str, ...]]:
    return (key, "=", (value,))


# ---- spread_test.go TestGetPodServices: three Services app=test-<i> in namespace "test" ----------
def _get_pod_services_scheduler() -> Scheduler:
    sched = scheduler_with([], [])
    for i in range(3):
        sched.add_service(service(f"service-{i}", {"app": f"test-{i}"}, namespace="test"))
    return sched


@pytest.mark.parametrize(
    ("i", "want"),
    [
        pytest.param(0, {eq("app", "test-0")}, id="GetPodServices for pod-0"),
        pytest.param(1, {eq("app", "test-1")}, id="GetPodServices for pod-1"),
        pytest.param(2, {eq("app", "test-2")}, id="GetPodServices for pod-2"),
        pytest.param(3, set(), id="GetPodServices for pod-3"),
        pytest.param(4, set(), id="GetPodServices for pod-4"),
    ],
)
def test_get_pod_services(i: int, want: set[Any]) -> None:
    sched = _get_pod_services_scheduler()
    p = pod({"app": f"test-{i}", "label": f"label-{i}"}, namespace="test")
    assert selects(default_selector(p, sched)) == want


# ---- DefaultSelector's merging rules (spread.go) ------------------------------------------------
RS_SELECTOR = {"matchLabels": {"app": "web"}, "matchExpressions": [expr("tier", "In", "fe", "be")]}
WEB = {"app": "web", "tier": "fe", "track": "stable"}

SELECTOR_CASES = [
    pytest.param(
        [], [], pod(WEB), set(), id="no services and no owner select nothing: no default constraints"
    ),
    pytest.param(
        [service("a", {"app": "web"}), service("b", {"track": "stable"})],
        [],
        pod(WEB),
        {eq("app", "web"), eq("track", "stable")},
        id="the label sets of every matching service are merged",
    ),
    pytest.param(
        [service("a", {"app": "web", "track": "canary"})],
        [],
        pod(WEB),
        set(),
        id="a service whose selector does not match the pod adds nothing",
    ),
    pytest.param(
        [service("a", None)],
        [],
        pod(WEB),
        set(),
        id="a service with a nil selector matches nothing",
    ),
    pytest.param(
        [service("a", {"app": "web"}, namespace="other")],
        [],
        pod(WEB),
        set(),
        id="services of another namespace are not listed",
    ),
    pytest.param(
        [service("a", {"track": "stable"})],
        [workload("ReplicaSet", "rs", RS_SELECTOR)],
        pod(WEB, owner("ReplicaSet", "rs")),
        {eq("track", "stable"), eq("app", "web"), ("tier", "in", ("fe", "be"))},
        id="a controlling replica set's requirements are added to the services' selector",
    ),
    pytest.param(
        [],
        [workload("StatefulSet", "ss", {"matchLabels": {"app": "web"}})],
        pod(WEB, owner("StatefulSet", "ss")),
        {eq("app", "web")},
        id="a controlling stateful set's requirements are added",
    ),
    pytest.param(
        [service("a", {"app": "web"})],
        [],
        pod(WEB, owner("ReplicaSet", "gone")),
        {eq("app", "web")},
        id="an unknown controller keeps the services' selector",
    ),
    pytest.param(
        [service("a", {"app": "web"})],
        [workload("ReplicaSet", "rs", RS_SELECTOR)],
        pod(WEB, owner("ReplicaSet", "rs", controller=False)),
        {eq("app", "web")},
        id="an owner that is not the controller is not read",
    ),
    pytest.param(
        [],
        [workload("ReplicaSet", "rs", RS_SELECTOR)],
        pod(WEB, owner("ReplicaSet", "rs", api_version="extensions/v1beta1")),
        set(),
        id="a replica set of another group version is not a supported controller",
    ),
    pytest.param(
        [],
        [workload("ReplicaSet", "rs", RS_SELECTOR)],
        pod(WEB, owner("ReplicaSet", "rs", api_version="apps/v1/x")),
        set(),
        id="an owner apiVersion that does not parse leaves the services' selector",
    ),
    pytest.param(
        [service("a", {"app": "web"})],
        [],
        pod(WEB, owner("ReplicationController", "rc", api_version="v1")),
        {eq("app", "web")},
        id="a replication controller is not served: only the services' selector",
    ),
    pytest.param(
        [],
        [workload("ReplicaSet", "rs", None)],
        pod(WEB, owner("ReplicaSet", "rs")),
        set(),
        id="a replica set's nil selector (labels.Nothing) adds no requirement",
    ),
    pytest.param(
        [],
        [workload("ReplicaSet", "rs", {"matchLabels": {"not a key!": "x"}})],
        pod(WEB, owner("ReplicaSet", "rs")),
        set(),
        id="a replica set's selector that does not parse adds no requirement",
    ),
    pytest.param(
        [],
        [workload("ReplicaSet", "rs", {})],
        pod(WEB, owner("ReplicaSet", "rs")),
        set(),
        id="a replica set's empty selector adds no requirement",
    ),
]


def _sched_with(services: list[JSON], workloads: list[JSON]) -> Scheduler:
    sched = scheduler_with([], [])
    for s in services:
        sched.add_service(s)
    for w in workloads:
        if w["kind"] == "ReplicaSet":
            sched.add_replica_set(w)
        else:
            sched.add_stateful_set(w)
    return sched


@pytest.mark.parametrize(("services", "workloads", "p", "want"), SELECTOR_CASES)
def test_default_selector(services: list[JSON], workloads: list[JSON], p: JSON, want: set[Any]) -> None:
    assert selects(default_selector(p, _sched_with(services, workloads))) == want


@pytest.mark.parametrize(("services", "workloads", "p", "want"), SELECTOR_CASES)
def test_default_selector_in_reference_mode(
    services: list[JSON], workloads: list[JSON], p: JSON, want: set[Any]
) -> None:
    with reference_mode_set(True):
        assert selects(default_selector(p, _sched_with(services, workloads))) == want


def test_a_new_resource_version_of_a_service_is_read_afresh() -> None:
    sched = scheduler_with([], [])
    sched.add_service(service("a", {"app": "web"}, version="7"))
    p = pod(WEB)
    assert selects(default_selector(p, sched)) == {eq("app", "web")}
    sched.update_service(service("a", {"app": "db"}, version="8"))
    assert selects(default_selector(p, sched)) == set()
    sched.remove_service(service("a", {"app": "db"}, version="8"))
    assert selects(default_selector(p, sched)) == set()


def test_a_new_resource_version_of_a_stateful_set_is_read_afresh() -> None:
    sched = scheduler_with([], [])
    sched.add_stateful_set(workload("StatefulSet", "ss", {"matchLabels": {"app": "web"}}, version="3"))
    p = pod(WEB, owner("StatefulSet", "ss"))
    assert selects(default_selector(p, sched)) == {eq("app", "web")}
    sched.update_stateful_set(workload("StatefulSet", "ss", {"matchLabels": {"tier": "fe"}}, version="4"))
    assert selects(default_selector(p, sched)) == {eq("tier", "fe")}
    sched.remove_stateful_set(workload("StatefulSet", "ss", None, version="4"))
    assert selects(default_selector(p, sched)) == set()


# ---- the default constraints in PreScore/Score (scoring_test.go) --------------------------------
FOO = {"foo": ""}
ABCD = [make_node(n, {HOST: n}) for n in ("node-a", "node-b", "node-c", "node-d")]


def _foo_pods(spread: dict[str, int]) -> list[JSON]:
    return [make_pod(node=node, labels=FOO) for node, count in spread.items() for _ in range(count)]


def test_system_defaulting_nodes_without_zone_pods_match_service() -> None:
    """scoring_test.go "system defaulting, nodes don't have zone, pods match service"."""
    sched = scheduler_with(ABCD, _foo_pods({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}))
    sched.add_service(service("svc", {"foo": ""}))
    got = scores(sched, PLUGIN, make_pod(labels=FOO))
    assert got == {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100}


def test_pods_selected_by_no_service_and_no_controller_get_no_default_constraints() -> None:
    sched = scheduler_with(ABCD, _foo_pods({"node-a": 4}))
    sched.add_service(service("svc", {"foo": "other"}))
    assert scores(sched, PLUGIN, make_pod(labels=FOO)) == dict.fromkeys(
        ("node-a", "node-b", "node-c", "node-d"), 0
    )


def test_a_pod_with_its_own_constraints_gets_no_default_constraints() -> None:
    """getConstraints/PreScore: the pod's own constraints replace the defaults (here one on a key
    no node has, so every node scores alike, where the service's defaults would spread)."""
    sched = scheduler_with(ABCD, _foo_pods({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}))
    sched.add_service(service("svc", {"foo": ""}))
    own = [{"maxSkew": 1, "topologyKey": "rack", "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {}}]
    got = scores(sched, PLUGIN, make_pod(labels=FOO, spread=own))
    assert len(set(got.values())) == 1


def test_list_defaulting_takes_the_profile_constraints_with_the_service_selector() -> None:
    """defaultingType List: the profile's defaultConstraints (here hostname maxSkew 1) with the
    DefaultSelector's selector, as upstream's "default constraints and a replica set/service"."""
    config = {
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [
                    {
                        "name": PLUGIN,
                        "args": {
                            "defaultingType": "List",
                            "defaultConstraints": [
                                {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway"}
                            ],
                        },
                    }
                ],
            }
        ]
    }
    existing = _foo_pods({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1})
    sched = scheduler_with(ABCD, existing, config)
    sched.add_service(service("svc", {"foo": ""}))
    got = scores(sched, PLUGIN, make_pod(labels=FOO))
    assert got["node-a"] < got["node-b"] < got["node-c"] < got["node-d"] == 100
    bare = scheduler_with(ABCD, existing, config)
    assert set(scores(bare, PLUGIN, make_pod(labels=FOO)).values()) == {0}


# ---- what is not served is reported -------------------------------------------------------------
def test_a_pod_controlled_by_a_replication_controller_is_reported() -> None:
    p = pod(
        WEB, owner("Other", "x", controller=False), owner("ReplicationController", "rc", api_version="v1")
    )
    assert pod_warnings(p) == [
        "metadata.ownerReferences[1]: ReplicationControllers are not served: the controller's selector "
        "is not merged into PodTopologySpread's default constraints"
    ]


def test_a_pod_controlled_by_a_replica_set_has_no_warning() -> None:
    assert pod_warnings(pod(WEB, owner("ReplicaSet", "rs"))) == []


# ---- explain reads the Services of its input ----------------------------------------------------
def test_explain_spreads_a_pod_a_service_of_its_input_selects() -> None:
    def node(name: str) -> JSON:
        return make_node(name, {HOST: name}) | {"status": {"allocatable": {"cpu": "4", "pods": "110"}}}

    objects = [node("a1"), node("b1")]
    objects += [make_pod(f"e{i}", node="a1", labels={"app": "web"}) for i in range(3)]
    objects.append(make_pod("new", labels={"app": "web"}))
    bare = explain(objects)["pods"][0]["nodes"]
    assert all(PLUGIN not in n["scores"] for n in bare)
    served = explain([*objects, service("web", {"app": "web"})])["pods"][0]["nodes"]
    assert {n["name"]: n["scores"][PLUGIN] for n in served} == {"a1": 33, "b1": 100}


def test_a_replica_set_status_write_reuses_its_parsed_selector() -> None:
    """A status write gives the ReplicaSet a new resourceVersion, never a new selector: the
    selector (matchLabels only) parsed for the earlier version answers; a new selector is read."""
    sched = scheduler_with([], [])
    p = pod(WEB, owner("ReplicaSet", "rs"))
    was = counting_on()
    counting(True)
    try:
        with reference_mode_set(False):  # (memos keep nothing in reference mode)
            sched.add_replica_set(workload("ReplicaSet", "rs", {"matchLabels": {"app": "web"}}, version="5"))
            assert selects(default_selector(p, sched)) == {eq("app", "web")}
            hits = _RS_SELECTORS.hits
            web = workload("ReplicaSet", "rs", {"matchLabels": {"app": "web"}}, version="6")
            sched.update_replica_set(web)
            assert selects(default_selector(p, sched)) == {eq("app", "web")}
            assert _RS_SELECTORS.hits == hits + 1
            fe = workload("ReplicaSet", "rs", {"matchLabels": {"tier": "fe"}}, version="7")
            sched.update_replica_set(fe)
            assert selects(default_selector(p, sched)) == {eq("tier", "fe")}
    finally:
        counting(was)


def _default_constraints(sched: Scheduler, p: JSON) -> set[tuple[str, tuple[Any, ...]]]:
    """PodTopologySpread's ScheduleAnyway constraints of `p` (topology key, selector requirements)."""
    from kubetaint.scheduler.plugins.pod_topology_spread.common import SCHEDULE_ANYWAY
    from kubetaint.scheduler.podinfo import make_pod_info

    plugin = next(iter(sched.profiles.values())).plugins[PLUGIN]
    constraints = plugin.constraints(make_pod_info(p), SCHEDULE_ANYWAY)  # type: ignore[attr-defined]
    return {(c.topology_key, c.selector.requirements) for c in constraints}


@pytest.mark.parametrize(
    "reference", [pytest.param(False, id="remembered"), pytest.param(True, id="reference")]
)
def test_the_default_constraints_follow_the_workloads_and_services(reference: bool) -> None:
    """The default constraints of a pod asked again after its ReplicaSet's status write, its
    selector's change, a Service's arrival and the ReplicaSet's removal: each time those
    helper.DefaultSelector gives now."""
    zone = "topology.kubernetes.io/zone"
    with reference_mode_set(reference):
        sched = scheduler_with([], [])
        p = pod(WEB, owner("ReplicaSet", "rs"))
        assert _default_constraints(sched, p) == set()
        sched.add_replica_set(workload("ReplicaSet", "rs", {"matchLabels": {"app": "web"}}, version="5"))
        web = (eq("app", "web"),)
        assert _default_constraints(sched, p) == {(HOST, web), (zone, web)}
        sched.update_replica_set(workload("ReplicaSet", "rs", {"matchLabels": {"app": "web"}}, version="6"))
        assert _default_constraints(sched, p) == {(HOST, web), (zone, web)}
        sched.update_replica_set(workload("ReplicaSet", "rs", {"matchLabels": {"tier": "fe"}}, version="7"))
        fe = (eq("tier", "fe"),)
        assert _default_constraints(sched, p) == {(HOST, fe), (zone, fe)}
        sched.add_service(service("svc", {"track": "stable"}))
        both = (eq("track", "stable"), eq("tier", "fe"))
        assert _default_constraints(sched, p) == {(HOST, both), (zone, both)}
        other = pod({"app": "web"}, owner("ReplicaSet", "rs"))  # (the service does not select it)
        assert _default_constraints(sched, other) == {(HOST, fe), (zone, fe)}
        sched.remove_replica_set(workload("ReplicaSet", "rs", None, version="7"))
        only = (eq("track", "stable"),)
        assert _default_constraints(sched, p) == {(HOST, only), (zone, only)}
        sched.remove_service(service("svc", {"track": "stable"}))
        assert _default_constraints(sched, p) == set()
