"""Request defaulting in bulk (PodAdmissionMemo.default_requests): a pod whose container lists are
the very lists of a pod that needed no defaulting is taken as it is; every result equals what
`default_pod_requests` gives the pod afresh, in bulk or not, whatever the lists hold."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.clock import VirtualClock
from kubetaint.core.defaults import default_pod_requests
from kubetaint.registry import StoreLookup
from kubetaint.registry.bulk import PodAdmissionMemo
from kubetaint.store.memory import MemoryStore

JSON = dict[str, Any]
PLAIN: list[JSON] = [{"name": "a", "image": "a", "resources": {"requests": {"cpu": "100m"}}}]
LIMITED: list[JSON] = [{"name": "a", "image": "a", "resources": {"limits": {"cpu": "1"}}}]
BOTH: list[JSON] = [
    {"name": "a", "image": "a", "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}}
]


def memo() -> PodAdmissionMemo:
    store = MemoryStore(VirtualClock())
    return PodAdmissionMemo(store, StoreLookup(store))


def pod(name: str, containers: Any, init: Any = None, node: str = "n") -> JSON:
    spec: JSON = {"containers": containers, "nodeName": node}
    if init is not None:
        spec["initContainers"] = init
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


SEQUENCES = [
    pytest.param([pod("a", PLAIN), pod("b", PLAIN, node="m")], id="pods of one plain template"),
    pytest.param([pod("a", LIMITED), pod("b", LIMITED)], id="limits only: every pod is defaulted"),
    pytest.param([pod("a", PLAIN), pod("b", PLAIN, LIMITED)], id="the same containers, init needs defaults"),
    pytest.param([pod("a", PLAIN, LIMITED), pod("b", PLAIN)], id="init defaulted first, then none"),
    pytest.param([pod("a", BOTH), pod("b", BOTH)], id="limits with their requests need nothing"),
    pytest.param([pod("a", PLAIN), pod("b", [*PLAIN])], id="an equal list that is another object"),
    pytest.param([pod("a", PLAIN), {"metadata": {"name": "b"}, "spec": None}], id="a pod without a spec"),
    pytest.param([pod("a", "x"), pod("b", "x")], id="containers that are not a list"),
]


@pytest.mark.parametrize("in_bulk", [True, False], ids=["in bulk", "outside bulk"])
@pytest.mark.parametrize("pods", SEQUENCES)
def test_every_result_is_what_defaulting_afresh_gives(pods: list[JSON], in_bulk: bool) -> None:
    subject = memo()
    if in_bulk:
        subject.start_bulk()
    for p in pods:
        got = subject.default_requests(p)
        assert got == default_pod_requests(p)
        assert (got is p) == (default_pod_requests(p) is p)


@pytest.mark.usefixtures("default_mode")
def test_a_pod_sharing_a_plain_template_is_returned_as_it_is_without_defaulting_again() -> None:
    subject = memo()
    subject.start_bulk()
    first = pod("a", PLAIN)
    assert subject.default_requests(first) is first
    assert len(subject._undefaulted) == 1
    second = pod("b", PLAIN)
    assert subject.default_requests(second) is second
    assert len(subject._undefaulted) == 1


def test_the_end_of_a_bulk_forgets_the_lists() -> None:
    subject = memo()
    subject.start_bulk()
    subject.default_requests(pod("a", PLAIN))
    subject.end_bulk()
    assert subject._undefaulted == {}
    # outside bulk the lists may change: a list given limits since is defaulted again
    changed = [{"name": "a", "resources": {"limits": {"cpu": "2"}}}]
    assert subject.default_requests(pod("b", changed)) == default_pod_requests(pod("b", changed))


QUANTITY = st.sampled_from(["1", "100m", "2Gi"])
RESOURCES = st.dictionaries(st.sampled_from(["cpu", "memory"]), QUANTITY, max_size=2)
CONTAINER = st.builds(
    lambda limits, requests: {"name": "c", "resources": {"limits": limits, "requests": requests}},
    RESOURCES,
    RESOURCES,
)
TEMPLATES = st.lists(st.lists(CONTAINER, min_size=1, max_size=2), min_size=1, max_size=3)


@settings(max_examples=60, deadline=None)
@given(TEMPLATES, st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3)), max_size=12), st.randoms())
def test_any_mix_of_templates_defaults_as_afresh(
    templates: list[list[JSON]], picks: list[tuple[int, int]], rng: random.Random
) -> None:
    subject = memo()
    subject.start_bulk()
    for n, (which, init) in enumerate(picks):
        containers = templates[which % len(templates)]
        init_list = None if init >= len(templates) else templates[init]
        p = pod(f"p{n}", containers, init_list, node=f"n{rng.randint(0, 3)}")
        assert subject.default_requests(p) == default_pod_requests(p)
