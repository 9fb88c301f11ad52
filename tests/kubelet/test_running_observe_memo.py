"""`RunningPods.observe` of a pod whose spec, status and uid are those of the object it replaces
(an owner or other metadata change) skips the recount; the tally, the members and the usage are
those of a recount after every step."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.kubelet.resources import pod_requests
from kubetaint.kubelet.running import RunningPods

JSON = dict[str, Any]
NAMES = ["a", "b"]
SPECS: list[JSON] = [
    {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
    {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "250m"}}}]},
    {"nodeName": "n2", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
]
STATUSES: list[JSON] = [{"phase": "Running"}, {"phase": "Succeeded"}, {}]


def _reference_refresh_all(tally: RunningPods, admitted: dict[tuple[str, str], str]) -> RunningPods:
    """A tally rebuilt from the same objects with a recount of every key."""
    fresh = RunningPods(tally.node_name, pod_requests)
    for key, obj in tally.objects.items():
        fresh.objects[key] = obj
        fresh.refresh(key, admitted.get(key))
    return fresh


step = st.one_of(
    # (observe, name, spec, status, uid, owner-only copy of the current object)
    st.tuples(
        st.just("observe"),
        st.sampled_from(NAMES),
        st.integers(0, len(SPECS) - 1),
        st.integers(0, len(STATUSES) - 1),
        st.sampled_from(["u1", "u2"]),
        st.booleans(),
    ),
    st.tuples(
        st.sampled_from(["admit", "drop", "delete"]),
        st.sampled_from(NAMES),
        st.just(0),
        st.just(0),
        st.sampled_from(["u1", "u2"]),
        st.just(False),
    ),
)


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(step, max_size=30))
def test_observing_owner_only_changes_keeps_what_a_full_recount_keeps(
    steps: list[tuple[str, str, int, int, str, bool]],
) -> None:
    tally = RunningPods("n1", pod_requests)
    admitted: dict[tuple[str, str], str] = {}
    for version, (op, name, spec, status, uid, metadata_only) in enumerate(steps):
        key = ("default", name)
        if op == "observe":
            prior = tally.objects.get(key)
            if metadata_only and prior is not None:  # the same spec, status and uid objects
                meta = {**prior["metadata"], "ownerReferences": [{"uid": f"o{version}"}]}
                obj = {**prior, "metadata": meta}
            else:
                meta = {"name": name, "namespace": "default", "uid": uid}
                obj = {"metadata": meta, "spec": SPECS[spec], "status": STATUSES[status]}
            tally.observe(key, obj, admitted.get(key))
        elif op == "admit":
            admitted[key] = uid
            tally.refresh(key, uid)
        elif op == "drop":
            admitted.pop(key, None)
            tally.refresh(key, None)
        else:
            tally.deleted(key)
        fresh = _reference_refresh_all(tally, admitted)
        assert tally.member_keys() == fresh.member_keys()
        assert {k: v for k, v in tally.used().items() if v} == {k: v for k, v in fresh.used().items() if v}
        for k in tally.member_keys():
            assert tally.usage_without(k, admitted.get(k)) == fresh.usage_without(k, admitted.get(k))


def test_an_owner_change_of_an_admitted_pod_keeps_it_counted_once() -> None:
    tally = RunningPods("n1", pod_requests)
    key = ("default", "a")
    pod = {"metadata": {"name": "a", "namespace": "default", "uid": "u1"}, "spec": SPECS[0], "status": {}}
    tally.observe(key, pod, "u1")
    adopted = {**pod, "metadata": {**pod["metadata"], "ownerReferences": [{"uid": "rs"}]}}
    tally.observe(key, adopted, "u1")
    assert tally.objects[key] is adopted
    assert len(tally) == 1
    assert tally.used() == {"cpu": 1000}


def test_an_owner_change_seen_with_a_new_admitted_uid_is_recounted() -> None:
    tally = RunningPods("n1", pod_requests)
    key = ("default", "a")
    pod = {"metadata": {"name": "a", "namespace": "default", "uid": "u1"}, "spec": SPECS[0], "status": {}}
    tally.observe(key, pod, None)
    assert len(tally) == 0
    adopted = {**pod, "metadata": {**pod["metadata"], "ownerReferences": [{"uid": "rs"}]}}
    tally.observe(key, adopted, "u1")
    assert len(tally) == 1
    tally.observe(key, {**adopted, "metadata": {**adopted["metadata"]}}, "u2")
    assert len(tally) == 0
