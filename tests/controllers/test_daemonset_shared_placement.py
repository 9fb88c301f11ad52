"""A DaemonSet sync counts its status over the nodes and verdicts its manage pass worked out
(the nodes by name; status counts are sums, so any order counts the same) when the DaemonSet is
the object manage saw: the same writes, status and events as counting over the informer's nodes
afresh, for any mix of nodes and pods; a DaemonSet being deleted (no manage pass) or changed
during the sync counts afresh."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controllers.test_daemonset_node_scans import NODE_KINDS, NS, POD_KINDS, _daemon_pod, _setup
from kubetaint.controllers.daemonset import DaemonSetController
from kubetaint.store.changes import each_event
from kubetaint.store.interface import JSON, WatchEvent


def _run(nodes: list[str], pods: list[list[str]], *, shared: bool, deleting: bool = False) -> list[str]:
    """Sync the DaemonSet over `nodes` holding `pods`; every event written, as JSON text, and the
    `placed` each status count was given (whether any)."""
    controller, ds, store, clock = _setup(nodes)
    for i, kinds in enumerate(pods[: len(nodes)]):
        for j, kind in enumerate(kinds):
            store.create("pods", _daemon_pod(ds, f"n{i}", j, kind))
    if deleting:
        ds = store.update("daemonsets.apps", {**ds, "metadata": {**ds["metadata"], "deletionTimestamp": "x"}})
    seen: list[WatchEvent] = []
    store.subscribe(each_event(seen.append))
    given_placed: list[bool] = []
    plain = DaemonSetController.update_status

    def update_status(self: DaemonSetController, obj: JSON, by_node: Any, placed: Any = None) -> None:
        given_placed.append(placed is not None)
        plain(self, obj, by_node, placed if shared else None)

    controller.update_status = update_status.__get__(controller)  # type: ignore[method-assign]
    controller.sync((NS, "agent"))
    clock.run_pending()
    shown = [json.dumps([e.type, e.resource, e.resource_version, e.object], sort_keys=True) for e in seen]
    return [*shown, json.dumps(given_placed)]


def _assert_same(nodes: list[str], pods: list[list[str]], *, deleting: bool = False) -> None:
    assert _run(nodes, pods, shared=True, deleting=deleting) == _run(
        nodes, pods, shared=False, deleting=deleting
    )


@settings(max_examples=40, deadline=None)
@given(
    nodes=st.lists(st.sampled_from(list(NODE_KINDS)), min_size=1, max_size=6),
    pods=st.lists(st.lists(st.sampled_from(POD_KINDS), max_size=2), max_size=6),
)
def test_a_sync_counts_over_its_manage_pass_what_counting_afresh_counts(
    nodes: list[str], pods: list[list[str]]
) -> None:
    _assert_same(nodes, pods)


@pytest.mark.parametrize(
    ("nodes", "pods"),
    [
        pytest.param(["plain", "plain", "plain"], [[], ["running"], []], id="pods to create on two nodes"),
        pytest.param(
            ["no-execute", "other-zone", "plain"],
            [["running"], ["running"], ["failed"]],
            id="misscheduled pods, a failed one",
        ),
        pytest.param(["plain", "no-schedule"], [["running", "running"], []], id="a duplicate pod"),
    ],
)
def test_sync_cases(nodes: list[str], pods: list[list[str]]) -> None:
    _assert_same(nodes, pods)
    given_placed = json.loads(_run(nodes, pods, shared=True)[-1])
    assert given_placed[0] is True  # the first count of the sync took the manage pass's verdicts


def test_a_daemonset_being_deleted_is_neither_synced_nor_counted() -> None:
    """syncDaemonSet returns for a DaemonSet being deleted without updating its status."""
    _assert_same(["plain", "plain"], [["running"], []], deleting=True)
    shown = _run(["plain"], [[]], shared=True, deleting=True)
    assert shown == [json.dumps([])]  # no write, no status count


def test_a_daemonset_changed_during_its_sync_counts_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    controller, _ds, store, _ = _setup(["plain", "plain"])
    placed_given: list[bool] = []
    plain_status = controller.update_status
    monkeypatch.setattr(
        controller,
        "update_status",
        lambda obj, by_node, placed=None: (
            placed_given.append(placed is not None),
            plain_status(obj, by_node, placed),
        ),
    )
    plain_manage = controller._manage

    def manage(obj: JSON, by_node: Any, placed: Any) -> None:
        plain_manage(obj, by_node, placed)
        store.update("daemonsets.apps", {**obj, "metadata": {**obj["metadata"], "labels": {"x": "y"}}})

    monkeypatch.setattr(controller, "_manage", manage)
    controller.sync((NS, "agent"))
    assert placed_given == [False]
