"""Each scenario object keeps where it came from (`Scenario.object_where`), for messages: `file:line: `
of the object in a YAML/JSON text, and `<scenario>: ` for a document given as data (which has no
lines: one shared string then, whatever the object's place)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.sim.api import ScenarioError, Simulation
from kubetaint.sim.scenario import load_scenario

TEXT = """apiVersion: kubetaint.dev/v1alpha1
kind: Scenario
metadata: {name: where}
spec:
  objects:
  - apiVersion: v1
    kind: Namespace
    metadata: {name: a}
  - apiVersion: v1
    kind: List
    items:
    - apiVersion: v1
      kind: Namespace
      metadata: {name: b}
"""


def _document(objects: list[Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kubetaint.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "where"},
        "spec": {"objects": objects},
    }


def _namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def test_a_text_names_each_object_by_its_line() -> None:
    # (worked out when shown: str() of each)
    assert [str(where) for where in load_scenario(TEXT).object_where] == ["<scenario>:6: ", "<scenario>:12: "]


@pytest.mark.parametrize("count", [1, 3], ids=["one object", "several objects"])
def test_a_document_given_as_data_names_every_object_alike(count: int) -> None:
    document = _document([_namespace(f"n{i}") for i in range(count - 1)])
    document["spec"]["objects"].append({"apiVersion": "v1", "kind": "List", "items": [_namespace("last")]})
    wheres = load_scenario(document).object_where
    assert wheres == ["<scenario>: "] * count


def test_a_refused_object_of_a_data_document_is_named_without_a_line() -> None:
    bad = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "Bad_Name"}}
    with pytest.raises(ScenarioError) as caught:
        Simulation(_document([_namespace("fine"), bad]))
    assert str(caught.value).startswith("<scenario>: Namespace Bad_Name: ")
