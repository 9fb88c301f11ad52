"""A ReplicaSet's owned-pod view refreshed with newly owned pods (an adoption's, marked dirty)
makes their facts inline when a pod carries the template's labels and is not being deleted,
reusing the active and ready answers of an equal status: the facts and counts are those of a
view built afresh from the same pods, whatever their statuses (equal but distinct objects,
terminal, not ready, missing), labels (the template's, others, none) and deletions, and with
pods already counted among them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.api.selectors import LabelSelector, label_selector_from_dict
from kubetaint.controllers.replicaset.view import OwnedPodsView, PodFacts

JSON = dict[str, Any]
TEMPLATE = {"app": "a", "tier": "x"}
LABELS: list[Any] = [dict(TEMPLATE), {"app": "a"}, {"app": "b"}, None, {"tier": "x", "app": "a"}]
READY = [{"type": "Ready", "status": "True"}]
STATUSES: list[Any] = [
    {"phase": "Running", "conditions": READY},
    {"phase": "Running", "conditions": READY},  # equal to the first, another object
    {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]},
    {"phase": "Running"},
    {"phase": "Failed", "conditions": READY},
    {"phase": "Succeeded"},
    {},
    None,
]


def _pod(i: int, labels: int, status: int, deleting: bool) -> JSON:
    meta: JSON = {"name": f"p{i}", "namespace": "default", "labels": LABELS[labels]}
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    pod: JSON = {"metadata": meta}
    if STATUSES[status] is not None:
        pod["status"] = dict(STATUSES[status])  # each pod its own (equal) status object
    return pod


def _selector(spec: JSON) -> LabelSelector:
    selector = label_selector_from_dict(spec)
    assert selector is not None
    return selector


SELECTORS = [{"matchLabels": {"app": "a"}}, {"matchLabels": {"app": "b"}}]


def _state(view: OwnedPodsView) -> tuple[Any, ...]:
    facts = {key: tuple(f) for key, f in view.facts.items()}
    return facts, view.unmatched, view.active, view.active_matched, view.labeled, view.ready


def _compare(counted: list[JSON], adopted: list[JSON], selector_spec: JSON) -> None:
    selector = _selector(selector_spec)
    view = OwnedPodsView(selector, dict(TEMPLATE))
    current: dict[tuple[str, str], JSON] = {}
    for pod in counted:
        key = ("default", pod["metadata"]["name"])
        current[key] = pod
        view.put(key, pod)
    for pod in adopted:
        key = ("default", pod["metadata"]["name"])
        current[key] = pod
        view.dirty.add(key)
    view.refresh(current.get)
    fresh = OwnedPodsView(selector, dict(TEMPLATE))
    for key, pod in current.items():
        fresh.put(key, pod)
    assert _state(view) == _state(fresh)
    assert all(type(f) is PodFacts for f in view.facts.values())


pods = st.builds(
    lambda labels, status, deleting: (labels, status, deleting),
    st.integers(0, len(LABELS) - 1),
    st.integers(0, len(STATUSES) - 1),
    st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(
    counted=st.lists(pods, max_size=4),
    adopted=st.lists(pods, max_size=8),
    selector=st.sampled_from(SELECTORS),
)
def test_adopted_pods_count_as_in_a_view_built_afresh(
    counted: list[tuple[int, int, bool]], adopted: list[tuple[int, int, bool]], selector: JSON
) -> None:
    before = [_pod(i, *p) for i, p in enumerate(counted)]
    # adopted pods after the counted ones; some of them change a counted pod (the same name)
    after = [_pod(i if i % 3 == 2 else 100 + i, *p) for i, p in enumerate(adopted)]
    _compare(before, after, selector)


@pytest.mark.parametrize(
    "statuses",
    [
        pytest.param([0, 1, 4, 0], id="ready, equal ready, failed, ready again"),
        pytest.param([3, 2, 7, 6], id="not ready, not ready by condition, no status, empty"),
        pytest.param([5, 5, 0], id="succeeded twice then ready"),
    ],
)
@pytest.mark.parametrize("selector", SELECTORS)
def test_runs_of_statuses(statuses: list[int], selector: JSON) -> None:
    _compare([], [_pod(i, 0, s, False) for i, s in enumerate(statuses)], selector)


def test_a_pod_being_deleted_among_template_labelled_pods_is_not_active() -> None:
    _compare([], [_pod(0, 0, 0, False), _pod(1, 0, 0, True), _pod(2, 0, 0, False)], SELECTORS[0])
