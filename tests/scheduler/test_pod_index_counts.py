"""PodIndex's per-slot pod counts (InterPodAffinity and PodTopologySpread read them), kept up to
date from the cache's pod and node changes, against counting every node's pods afresh: through
pods bound, moved, relabelled (a new version of the same spec: refreshed in place) and deleted,
assumed and forgotten, and nodes added, relabelled and removed, a predicate first asked for at any point (its counts then built from the
pods carrying its label pair, or from every pod without one) counts exactly what a full count
finds; and its per-zone sums, kept up to date through nodes relabelled as well, equal the counts
summed per zone afresh."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubetaint.scheduler.cache import Cache
from kubetaint.scheduler.pod_index import pod_index
from kubetaint.scheduler.podinfo import PodInfo, make_pod_info
from scheduler.builders import node

JSON = dict[str, Any]
APPS = ("a", "b", "c")
ZONE = "topology.kubernetes.io/zone"


def _pod(i: int, app: str, tier: str, node_name: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"p{i}",
            "namespace": "default",
            "uid": f"u{i}",
            "labels": {"app": app, "tier": tier},
        },
        "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "x"}]},
    }


def _predicate(app: str, tier: str | None) -> Any:
    def match(p: PodInfo) -> bool:
        labels = (p.pod.get("metadata") or {}).get("labels") or {}
        return labels.get("app") == app and (tier is None or labels.get("tier") == tier)

    return match


def _full_count(cache: Cache, app: str, tier: str | None) -> dict[str, int]:
    match = _predicate(app, tier)
    return {name: sum(1 for p in ni.pods.values() if match(p)) for name, ni in cache.nodes.items()}


def _zoned(name: str, zone: str | None) -> JSON:
    return node(name, labels={ZONE: zone} if zone is not None else None)


_ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("bind"),
            st.integers(0, 12),
            st.sampled_from(APPS),
            st.sampled_from("xy"),
            st.integers(0, 5),
        ),
        st.tuples(st.just("delete"), st.integers(0, 12)),
        st.tuples(st.just("node"), st.integers(0, 6)),
        st.tuples(st.just("drop"), st.integers(0, 6)),
        st.tuples(st.just("relabel"), st.integers(0, 6), st.sampled_from(["z0", "z1", "z2", None])),
        st.tuples(st.just("relabel_pod"), st.integers(0, 12), st.sampled_from(APPS)),
        st.tuples(st.just("assume"), st.integers(13, 15), st.sampled_from(APPS), st.integers(0, 5)),
        st.tuples(st.just("forget"), st.integers(13, 15)),
        st.tuples(st.just("ask"), st.sampled_from(APPS), st.sampled_from(["x", "y", None]), st.booleans()),
    ),
    max_size=40,
)


@settings(max_examples=80, deadline=None)
@given(_ops)
@example([("bind", 1, "a", "x", 0), ("ask", "a", None, True), ("relabel", 0, "z2"), ("ask", "a", None, True)])
@example(
    [("ask", "b", None, False), ("bind", 2, "b", "y", 1), ("relabel", 1, None), ("drop", 1), ("node", 1)]
)
def test_counts_equal_a_full_count(ops: list[Any]) -> None:
    cache = Cache()
    for n in range(4):
        cache.add_node(_zoned(f"n{n}", f"z{n % 2}"))
    asked: list[tuple[str, str | None, bool]] = []
    bound: dict[int, JSON] = {}
    summed = False
    for op in ops:
        if op[0] == "bind":
            _, i, app, tier, n = op
            bound[i] = _pod(i, app, tier, f"n{n}")
            cache.add_pod(bound[i])
        elif op[0] == "relabel_pod":
            known = bound.get(op[1])
            if known is not None:  # the same spec object: the cache refreshes the pod in place
                meta = {**known["metadata"], "labels": {**known["metadata"]["labels"], "app": op[2]}}
                bound[op[1]] = {**known, "metadata": meta}
                cache.add_pod(bound[op[1]])
        elif op[0] == "assume":
            _, i, app, n = op
            if f"n{n}" in cache.nodes:
                cache.assume_pod(make_pod_info(_pod(i, app, "x", "")), f"n{n}")
        elif op[0] == "forget":
            cache.forget_pod(f"u{op[1]}")
        elif op[0] == "delete":
            cache.remove_pod(f"u{op[1]}")
        elif op[0] == "node":
            cache.add_node(_zoned(f"n{op[1]}", "z0"))
        elif op[0] == "relabel":
            if f"n{op[1]}" in cache.nodes:
                cache.update_node(_zoned(f"n{op[1]}", op[2]))
        elif op[0] == "drop":
            cache.remove_node(f"n{op[1]}")
        else:
            asked.append(op[1:])
        index = pod_index(cache)
        for app, tier, with_pair in asked:
            pair = ("app", app) if with_pair else None
            counter = index.counter(("test", app, tier, with_pair), _predicate(app, tier), pair)
            got = {name: int(counter.counts[ni.slot]) for name, ni in cache.nodes.items()}
            full = _full_count(cache, app, tier)
            assert got == full
            if summed or with_pair:  # (sums asked from a point on, then kept up to date)
                summed = True
                d = index.domains(ZONE)
                sums = index.sums(counter, ZONE)
                per_zone = {value: int(sums[vid]) for vid, value in enumerate(d.values) if sums[vid]}
                expected: dict[str, int] = {}
                for name, count in full.items():
                    zone = cache.nodes[name].labels.get(ZONE)
                    if zone is not None and count:
                        expected[zone] = expected.get(zone, 0) + count
                assert per_zone == expected
