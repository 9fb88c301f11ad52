"""A scenario text's pods get their equal spec parts shared (sim.sharing), as a document given as
data shares its templates': the objects are equal to the parsed text's, values that differ in
any way (type, key order) stay apart, and a run from the text is the run from the data."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.sim.api import simulate
from kubetaint.sim.scenario import load_scenario
from kubetaint.sim.sharing import PartSharing

JSON = dict[str, Any]
TEMPLATE = {"containers": [{"name": "app", "image": "app", "resources": {"requests": {"cpu": "100m"}}}]}


def scenario(pods: list[JSON], extra: list[JSON] | None = None) -> JSON:
    return {
        "apiVersion": "kubetaint.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "sharing"},
        "spec": {
            "seed": 3,
            "until": "2m",
            "nodeGroups": [{"name": "node", "count": 3, "zones": ["a", "b"]}],
            "objects": [*(extra or []), *pods],
            "events": [{"at": "10s", "zone": "a", "fault": "stop"}],
        },
    }


def pod(name: str, spec: JSON, kind: str = "Pod") -> JSON:
    return {
        "apiVersion": "v1",
        "kind": kind,
        "metadata": {"name": name, "labels": {"app": "a"}},
        "spec": spec,
        "status": {"phase": "Running"},
    }


def stamped(count: int) -> list[JSON]:
    return [pod(f"p{i}", {**TEMPLATE, "nodeName": f"node-{i % 3}"}) for i in range(count)]


def loaded(document: JSON) -> list[JSON]:
    return load_scenario(json.dumps(document, indent=2)).objects


@pytest.mark.usefixtures("default_mode")
def test_the_pods_of_a_json_text_share_their_equal_spec_parts() -> None:
    objects = loaded(scenario(stamped(4)))
    assert objects == json.loads(json.dumps(stamped(4)))
    first = objects[0]["spec"]["containers"]
    assert all(o["spec"]["containers"] is first for o in objects)
    assert len({id(o["spec"]) for o in objects}) == 4  # each pod keeps its own spec object


@pytest.mark.parametrize(
    ("a", "b"),
    [
        pytest.param({"x": 1}, {"x": 1.0}, id="an integer and a float stay apart"),
        pytest.param({"x": 1}, {"x": True}, id="an integer and a boolean stay apart"),
        pytest.param({"x": "1"}, {"x": 1}, id="a string and a number stay apart"),
        pytest.param({"x": 1, "y": 2}, {"y": 2, "x": 1}, id="the same keys in another order stay apart"),
        pytest.param([{"x": 1}], {"x": 1}, id="a list and an object stay apart"),
        pytest.param([], {}, id="an empty list and an empty object stay apart"),
    ],
)
def test_values_that_differ_in_any_way_are_not_shared(a: Any, b: Any) -> None:
    sharing = PartSharing()
    first, second = pod("a", {"part": a}), pod("b", {"part": b})
    sharing.share(first)
    sharing.share(second)
    assert first["spec"]["part"] is a and second["spec"]["part"] is b


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(pod("d", {"template": TEMPLATE}, kind="Deployment"), id="an object of another kind"),
        pytest.param({"kind": "Pod", "spec": "text"}, id="a pod whose spec is not an object"),
        pytest.param(["kind", "Pod"], id="a value that is not an object"),
    ],
)
def test_only_the_spec_values_of_pods_are_shared(obj: Any) -> None:
    sharing = PartSharing()
    sharing.share(pod("a", {"template": json.loads(json.dumps(TEMPLATE))}))
    before = json.dumps(obj)
    inner = (
        obj.get("spec", {}).get("template") if type(obj) is dict and type(obj.get("spec")) is dict else None
    )
    sharing.share(obj)
    assert json.dumps(obj) == before
    if inner is not None:
        assert obj["spec"]["template"] is inner


@pytest.mark.usefixtures("default_mode")
def test_values_marshal_cannot_write_are_compared_by_repr() -> None:
    """A YAML text's timestamps parse to dates (no JSON value): equal ones are shared, the
    others stay apart, and none meets a value compared by its marshal bytes."""
    sharing = PartSharing()
    first = pod("a", {"part": [datetime.date(2024, 1, 2)]})
    equal = pod("b", {"part": [datetime.date(2024, 1, 2)]})
    other = pod("c", {"part": [datetime.date(2024, 1, 3)]})
    text = pod("d", {"part": ["datetime.date(2024, 1, 2)"]})
    for p in (first, equal, other, text):
        sharing.share(p)
    assert equal["spec"]["part"] is first["spec"]["part"]
    assert other["spec"]["part"] is not first["spec"]["part"]
    assert text["spec"]["part"] == ["datetime.date(2024, 1, 2)"]


def test_the_table_starts_afresh_at_its_limit() -> None:
    sharing = PartSharing(limit=2)
    pods = [pod(f"p{i}", {"part": [i]}) for i in range(3)]
    for p in pods:
        sharing.share(p)
    again = pod("q", {"part": [0]})
    sharing.share(again)
    assert again["spec"]["part"] is not pods[0]["spec"]["part"]  # forgotten at the limit
    assert again["spec"]["part"] == [0]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False) | st.text(max_size=2),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["a", "b", "c"]), JSON_VALUES, max_size=3), max_size=6))
def test_shared_pods_equal_the_parsed_ones_with_types_kept(specs: list[JSON]) -> None:
    parsed = [pod(f"p{i}", spec) for i, spec in enumerate(json.loads(json.dumps(specs)))]
    sharing = PartSharing()
    for p in parsed:
        sharing.share(p)
    assert repr(parsed) == repr([pod(f"p{i}", spec) for i, spec in enumerate(specs)])


def test_a_run_from_the_text_is_the_run_from_the_data() -> None:
    pods = stamped(9)
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "app"},
        "spec": {
            "replicas": 9,
            "selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}}, "spec": TEMPLATE},
        },
    }
    document = scenario(pods, [rs])
    assert simulate(json.dumps(document, indent=2)) == simulate(document)
