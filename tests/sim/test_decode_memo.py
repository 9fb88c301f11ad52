"""`DecodeMemo` (objects of one template share their decoding verdict) says exactly what decoding
each object afresh says: the same objects pass, the same are refused with the same message."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.api.models import MODELS
from kubetaint.sim.decoding import DecodeMemo, check_decodable
from kubetaint.sim.scenario import ScenarioError

CONTAINERS: list[Any] = [{"name": "app", "image": "app", "resources": {"requests": {"cpu": "100m"}}}]


def pod(name: str = "p", node: Any = "n-1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "a"}},
        "spec": {"containers": CONTAINERS, "nodeName": node, **spec},
        "status": {"phase": "Running"},
    }


def verdict(check: Any, obj: Any) -> str | None:
    """None when `obj` decodes, else the ScenarioError's message (or whatever else was raised:
    the memo must not change that either)."""
    try:
        check(obj, "f.yaml:3: ")
    except ScenarioError as err:
        return str(err)
    except Exception as err:  # compared, not swallowed
        return f"{type(err).__name__}: {err}"
    return None


def fresh(obj: Any) -> str | None:
    return verdict(check_decodable, obj)


FOLLOWERS = [
    pytest.param(pod("q", "n-2"), id="another name and node decode as the first did"),
    pytest.param(pod("q", 5), id="a number nodeName is refused although the template decoded"),
    pytest.param(pod("q", None), id="a null nodeName decodes"),
    pytest.param(pod("q", True), id="a boolean nodeName is refused"),
    pytest.param(pod("q", ["n"]), id="a list nodeName is refused"),
    pytest.param(pod("q", priority=1), id="an int32 priority in range decodes"),
    pytest.param(pod("q", priority=2**31), id="an int32 priority out of range is refused"),
    pytest.param(pod("q", priority=1.5), id="a float priority is refused"),
    pytest.param(pod("q", priority=True), id="a boolean priority is refused"),
    pytest.param(pod("q", tolerations=[{"key": "k", "tolerationSeconds": "3"}]), id="string seconds"),
    pytest.param(pod("q", tolerations=[{"key": "k", "tolerationSeconds": 3}]), id="int seconds decode"),
    pytest.param(pod("q", node_name=7), id="a python field name is not an alias"),
    pytest.param({**pod("q"), "status": "Running"}, id="a string status is refused"),
    pytest.param({**pod("q"), "apiVersion": "v2"}, id="a version without a model is not decoded"),
    pytest.param({**pod("q"), "kind": "Node"}, id="the same shape as another kind"),
    pytest.param(pod("\ud800", "\udfff"), id="lone surrogates are kept in the key"),
    pytest.param(pod("q", "n\u00e9"), id="a non-ASCII string"),
    pytest.param({**pod("q"), 1: "x"}, id="a non-string key is decoded afresh"),
    pytest.param(pod("q", tolerations={"list": {"key": "k"}}), id="a map where a list belongs"),
    pytest.param(pod("q", nodeSelector=["list", "a"]), id="a list where a map belongs"),
    pytest.param(pod("q", ("n",)), id="a value of no JSON type is decoded afresh"),
]


@pytest.mark.parametrize("follower", FOLLOWERS)
def test_a_pod_after_a_template_pod_gets_the_verdict_decoding_it_afresh_gives(follower: Any) -> None:
    memo = DecodeMemo()
    assert verdict(memo.check, pod()) is None
    assert verdict(memo.check, follower) == fresh(follower)
    assert verdict(memo.check, follower) == fresh(follower)  # and again, with its own entry


def test_a_refused_shape_is_never_remembered() -> None:
    memo = DecodeMemo()
    bad = {**pod(), "status": "Running"}
    message = fresh(bad)
    assert message is not None and "f.yaml:3: Pod p: " in message
    assert verdict(memo.check, bad) == message
    renamed = {**bad, "metadata": {"name": "other"}}
    assert verdict(memo.check, renamed) == fresh(renamed)
    assert "Pod other" in str(verdict(memo.check, renamed))


@pytest.mark.usefixtures("default_mode")
def test_shapes_differ_in_types_and_keys_not_in_ascii_strings() -> None:
    memo = DecodeMemo()
    assert memo.shape(pod("a", "n-1")) == memo.shape(pod("b", "n-2"))
    assert memo.shape(pod(node=1)) != memo.shape(pod(node=True))
    assert memo.shape(pod(node=0.0)) != memo.shape(pod(node=-0.0))
    assert memo.shape(pod(priority=1)) != memo.shape(pod(priority=2))
    assert memo.shape(pod("\u00e9")) != memo.shape(pod("\u00e8"))
    assert memo.shape({"a": "x"}) != memo.shape({"b": "x"})
    assert memo.shape({"list": "x"}) != memo.shape(["x"])
    assert memo.shape({}) != memo.shape([]) != memo.shape(None)
    assert memo.shape({"str": "x"}) != memo.shape("x")


@pytest.mark.usefixtures("default_mode")
def test_a_list_shape_is_held_with_its_list() -> None:
    memo = DecodeMemo()
    listed = [{"name": "c"}]
    first = memo.shape(listed)
    assert memo.shape(listed) is first  # worked out once
    assert memo.shape(copy.deepcopy(listed)) == first


def test_the_memo_starts_afresh_past_its_limit() -> None:
    memo = DecodeMemo(limit=2)
    for i in range(5):
        assert verdict(memo.check, pod(priority=i)) is None
        assert verdict(memo.check, pod(priority=i, tolerations=[])) is None
    assert verdict(memo.check, pod(priority=2**40)) == fresh(pod(priority=2**40))


def test_a_manifest_that_contains_itself_is_decoded_afresh() -> None:
    looped: list[Any] = []
    looped.append(looped)
    obj = pod(tolerations=looped)
    memo = DecodeMemo()
    assert verdict(memo.check, obj) == fresh(obj)


JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=False),
    st.text(max_size=4),
    st.sampled_from(["", "a", "\u00e9", "\ud800"]),
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)
POD_FIELDS = st.sampled_from(
    ["nodeName", "priority", "tolerations", "nodeSelector", "containers", "terminationGracePeriodSeconds"]
)
SPEC_PATCHES = st.dictionaries(POD_FIELDS, JSON_VALUES, max_size=3)
TOLERATIONS = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "key": st.text(max_size=3) | st.integers(),
            "operator": st.sampled_from(["Exists", "Equal"]),
            "tolerationSeconds": st.integers(min_value=-(2**64), max_value=2**64) | st.text(max_size=2),
        },
    ),
    max_size=2,
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(max_size=4), SPEC_PATCHES, st.one_of(st.none(), TOLERATIONS)),
        min_size=1,
        max_size=6,
    )
)
@pytest.mark.usefixtures("default_mode")
def test_a_run_of_pods_gets_the_verdicts_decoding_each_afresh_gives(
    pods: list[tuple[str, dict[str, Any], list[Any] | None]],
) -> None:
    memo = DecodeMemo(limit=3)
    for name, patch, tolerations in pods:
        spec = dict(patch)
        if tolerations is not None:
            spec["tolerations"] = tolerations
        obj = pod(name, **spec)
        assert verdict(memo.check, obj) == fresh(obj)


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES, JSON_VALUES)
def test_any_metadata_and_status_get_the_fresh_verdict(metadata: Any, status: Any) -> None:
    memo = DecodeMemo()
    template = pod()
    memo.check(template, "")
    for obj in ({**template, "metadata": metadata}, {**template, "status": status}):
        assert verdict(memo.check, obj) == fresh(obj)


# the premise: the models check JSON types (and integer ranges) only ------------------------------

#: Schema nodes that check a JSON type and nothing about a string's contents.
TYPE_ONLY_NODES = {
    "model",
    "model-fields",
    "model-field",
    "default",
    "nullable",
    "str",
    "int",
    "bool",
    "float",
    "list",
    "dict",
    "union",
    "any",
    "definitions",
    "definition-ref",
}


def schema_nodes(schema: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("type"), str):
                found.append(node)
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)
    return found


@pytest.mark.parametrize(("api_version", "kind"), sorted(MODELS))
def test_a_model_checks_json_types_and_integer_ranges_only(api_version: str, kind: str) -> None:
    """What DecodeMemo's key leaves out (ASCII string contents) must not decide a decode: no
    pattern, length, enum, literal or validator function anywhere in a model's schema."""
    nodes = schema_nodes(MODELS[api_version, kind].__pydantic_core_schema__)
    assert {node["type"] for node in nodes} <= TYPE_ONLY_NODES
    for node in nodes:
        if node["type"] in ("str", "float", "bool", "any"):
            assert set(node) == {"type"}, node
        if node["type"] == "int":
            assert set(node) <= {"type", "ge", "le", "metadata"}, node
        if node["type"] == "model":
            assert not node.get("custom_init") and not node.get("root_model"), node
            # strict: a string never turns into a number or a boolean (whichever string it is)
            assert node["config"].get("strict") is True, node["cls"]
        if node["type"] == "dict":
            assert node.get("keys_schema", {"type": "str"}) == {"type": "str"}, node


def test_list_numbers_are_never_given_twice_across_the_limit() -> None:
    # limit 1: every new list starts the list memo afresh in the middle of an object; a number
    # given again would let the refused pod below share the accepted one's key
    memo = DecodeMemo(limit=1)
    accepted = pod(tolerations=[{"key": "k", "tolerationSeconds": 3}])
    refused = pod(tolerations=[{"key": "k", "tolerationSeconds": "3"}])
    assert verdict(memo.check, accepted) is None
    assert fresh(refused) is not None
    assert verdict(memo.check, refused) == fresh(refused)


def test_a_flat_shape_reads_back_one_way_only() -> None:
    memo = DecodeMemo()
    # a key that looks like a value, a dict ending early, a list against a dict of the same items
    assert memo.shape({"a": {"b": "x"}, "c": "y"}) != memo.shape({"a": {"b": "x", "c": "y"}})
    assert memo.shape({"a": {}, "b": {}}) != memo.shape({"a": {"b": {}}})
    assert memo.shape({"a": ["x", "y"]}) != memo.shape({"a": ["x"], "y": "x"})
    assert memo.shape([{"a": "x"}, {"b": "y"}]) != memo.shape([{"a": "x", "b": "y"}])


@pytest.mark.parametrize(
    ("one", "other"),
    [
        pytest.param({"a": "x"}, {"a": 0}, id="an ASCII string against the integer 0"),
        pytest.param({"a": {}}, {"a": 1}, id="a dict opening against the integer 1"),
        pytest.param({"a": {}}, {"a": True}, id="a dict opening against true (equal to 1)"),
        pytest.param({"a": {"b": "x"}}, {"a": {"b": 2}}, id="a dict closing against the integer 2"),
        pytest.param({"a": []}, {"a": -1}, id="the first list's token against the integer -1"),
        pytest.param({"a": [], "b": [1]}, {"a": [], "b": -2}, id="the second list's token against -2"),
        pytest.param({"a": "x"}, {"a": False}, id="an ASCII string against false (equal to 0)"),
        pytest.param({"a": "x"}, {"a": 0.0}, id="an ASCII string against 0.0 (equal to 0)"),
    ],
)
def test_marker_tokens_are_told_apart_from_every_value(one: Any, other: Any) -> None:
    """The markers and list tokens are ints: no value's token is equal to one of them."""
    memo = DecodeMemo()
    assert memo.shape(one) != memo.shape(other)
    assert verdict(memo.check, {**pod("m"), "spec": {"x": one}}) == fresh({**pod("m"), "spec": {"x": one}})
    assert verdict(memo.check, {**pod("m"), "spec": {"x": other}}) == fresh(
        {**pod("m"), "spec": {"x": other}}
    )
