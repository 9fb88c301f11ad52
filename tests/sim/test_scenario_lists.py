"""A List among a scenario's objects (`kubectl get ... -o yaml` pasted as is) stands for its items
in order, as `kubectl apply -f` flattens it; a bad item is named by its place inside the List."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubetaint.sim.api import ScenarioError, simulate
from kubetaint.sim.scenario import load_scenario

HEAD = """apiVersion: kubetaint.dev/v1alpha1
kind: Scenario
metadata: {name: lists}
spec:
  until: 30s
  objects:
"""

NODE_LIST = """  - apiVersion: v1
    kind: List
    items:
    - apiVersion: v1
      kind: Node
      metadata: {name: a, labels: {topology.kubernetes.io/zone: z1}}
    - apiVersion: v1
      kind: Node
      metadata: {name: b, labels: {topology.kubernetes.io/zone: z2}}
"""

POD = """  - apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec: {containers: [{name: c, image: i}], nodeSelector: {topology.kubernetes.io/zone: z2}}
"""


def names(text: str) -> list[str]:
    return [o["metadata"]["name"] for o in load_scenario(text).objects]


@pytest.mark.parametrize(
    ("objects", "expected"),
    [
        pytest.param(NODE_LIST + POD, ["a", "b", "p"], id="a v1 List stands for its items, in order"),
        pytest.param(POD + NODE_LIST, ["p", "a", "b"], id="objects around a List keep their places"),
        pytest.param(
            "  - apiVersion: v1\n    kind: PodList\n    items:\n"
            "    - {apiVersion: v1, kind: Pod, metadata: {name: q}, spec: {containers: [{name: c, image: i}]}}\n",
            ["q"],
            id="a typed list such as PodList is read the same way",
        ),
        pytest.param(
            "  - apiVersion: v1\n    kind: List\n    items:\n    - apiVersion: v1\n      kind: List\n"
            "      items:\n      - {apiVersion: v1, kind: Node, metadata: {name: deep}}\n"
            "    - {apiVersion: v1, kind: Node, metadata: {name: shallow}}\n",
            ["deep", "shallow"],
            id="nested Lists are flattened depth first",
        ),
        pytest.param("  - {apiVersion: v1, kind: List, items: []}\n", [], id="an empty List adds nothing"),
    ],
)
def test_lists_stand_for_their_items(objects: str, expected: list[str]) -> None:
    assert names(HEAD + objects) == expected


def test_objects_from_a_list_run_like_any_others() -> None:
    doc = simulate(HEAD + NODE_LIST + POD)
    scheduled = [r for r in doc["timeline"] if r["reason"] == "Scheduled"]
    assert [(r["name"], r["node"]) for r in scheduled] == [("p", "b")]
    assert sorted(n["metadata"]["name"] for n in doc["final"]["nodes"]) == ["a", "b"]


@pytest.mark.parametrize(
    ("objects", "expected"),
    [
        pytest.param(
            "  - apiVersion: v1\n    kind: List\n    items:\n    - {apiVersion: v1, kind: Node}\n",
            "lists.yaml:10: spec.objects[0].items[0].metadata.name: Node: Required value",
            id="an item without a name is named by its place in the List",
        ),
        pytest.param(
            "  - apiVersion: v1\n    kind: List\n    items:\n    - {apiVersion: v1, kind: Gadget, metadata: {name: g}}\n",
            'lists.yaml:10: spec.objects[0].items[0]: no kind "Gadget" is registered for version "v1"',
            id="an item of an unknown kind is named by its place in the List",
        ),
        pytest.param(
            "  - {apiVersion: v1, kind: List, items: {name: x}}\n",
            "lists.yaml:7: spec.objects[0].items: List: expected a list of objects",
            id="a List whose items is not a list",
        ),
        pytest.param(
            "  - apiVersion: v1\n    kind: List\n    items:\n    - {apiVersion: v1, kind: Pod, metadata: {name: p},"
            " spec: {containers: [{name: c, image: i}], tolerations: [{key: k, operator: Exists, value: v}]}}\n",
            'lists.yaml:10: Pod p: Pod "p" is invalid: spec.tolerations[0].operator: Invalid value: "v"',
            id="an invalid item is refused by validation with its own line",
        ),
    ],
)
def test_bad_items_are_named_by_their_place(tmp_path: Path, objects: str, expected: str) -> None:
    path = tmp_path / "lists.yaml"
    path.write_text(HEAD + objects, encoding="utf-8")
    with pytest.raises(ScenarioError) as err:
        simulate(path)
    assert str(err.value).replace(str(tmp_path) + "/", "").startswith(expected), str(err.value)


def test_a_kind_ending_in_list_without_items_is_not_a_list() -> None:
    with pytest.raises(ScenarioError, match=r'spec\.objects\[0\]: no kind "WatchList"'):
        load_scenario(HEAD + "  - {apiVersion: v1, kind: WatchList, metadata: {name: w}}\n")
