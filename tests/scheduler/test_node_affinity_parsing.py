"""NodeAffinity as upstream parses node selectors (component-helpers nodeaffinity and
nodeaffinity/node_affinity_test.go): unparsable required terms match nothing, preferred terms with
parse errors fail PreScore, weight-0 terms are skipped, and the plugin's addedAffinity applies."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.scheduler.cache import Cache
from kubetaint.scheduler.config import ConfigError
from kubetaint.scheduler.extension_points import CycleState
from kubetaint.scheduler.plugins.node_affinity import ERR_REASON_ENFORCED, ERR_REASON_POD, NodeAffinity
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import Code
from scheduler.builders import node, pod, scheduler


def _required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}


def _expr(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, "values": list(values)}


def _fields(*reqs: dict[str, Any]) -> dict[str, Any]:
    return {"matchFields": list(reqs)}


def _exprs(*reqs: dict[str, Any]) -> dict[str, Any]:
    return {"matchExpressions": list(reqs)}


FILTER_CASES = [
    pytest.param(
        None,
        _required(_exprs(_expr("foo", "In", "invalid value: ___@#$%^"))),
        {"foo": "bar"},
        ERR_REASON_POD,
        id="an In value that is no label value makes the term match nothing",
    ),
    pytest.param(
        None,
        _required(_exprs(_expr("foo", "NotIn", "invalid value: ___@#$%^"))),
        {"foo": "bar"},
        ERR_REASON_POD,
        id="a NotIn value that is no label value makes the term match nothing",
    ),
    pytest.param(
        None,
        _required(
            _exprs(_expr("foo", "NotIn", "invalid value: ___@#$%^")), _exprs(_expr("foo", "In", "bar"))
        ),
        {"foo": "bar"},
        None,
        id="an unparsable term leaves the other terms to match",
    ),
    pytest.param(
        None,
        _required(_fields(_expr("metadata.name", "In", "node1", "node2"))),
        {},
        ERR_REASON_POD,
        id="a metadata.name requirement with two values matches nothing",
    ),
    pytest.param(
        None,
        _required(_fields(_expr("metadata.name", "In", "node1"))),
        {},
        None,
        id="a metadata.name requirement with the node's name matches",
    ),
    pytest.param(
        None,
        _required(_fields(_expr("metadata.name", "NotIn", "node1"))),
        {},
        ERR_REASON_POD,
        id="a metadata.name NotIn the node's name does not match",
    ),
    pytest.param(
        None,
        _required({**_fields(_expr("metadata.name", "In", "node2")), **_exprs(_expr("foo", "In", "bar"))}),
        {"foo": "bar"},
        ERR_REASON_POD,
        id="one term whose matchFields fail and matchExpressions match does not match",
    ),
    pytest.param(
        None,
        _required(_fields(_expr("metadata.name", "In", "node2")), _exprs(_expr("foo", "In", "bar"))),
        {"foo": "bar"},
        None,
        id="two terms, matchFields failing and matchExpressions matching, match",
    ),
    pytest.param(
        None,
        _required(_exprs(_expr("foo", "Gt", "1", "2"))),
        {"foo": "3"},
        ERR_REASON_POD,
        id="Gt with two values matches nothing",
    ),
    pytest.param(
        None,
        _required(_exprs(_expr("foo", "Exists", "bar"))),
        {"foo": "bar"},
        ERR_REASON_POD,
        id="Exists with values matches nothing",
    ),
    pytest.param(
        None,
        _required(_exprs(_expr("foo", "Matches", "bar"))),
        {"foo": "bar"},
        ERR_REASON_POD,
        id="an unknown operator matches nothing",
    ),
    pytest.param(
        _required(_exprs(_expr("zone", "In", "foo"))),
        None,
        {"zone": "foo"},
        None,
        id="a pod without affinity on a node matching the added affinity fits",
    ),
    pytest.param(
        _required(_exprs(_expr("zone", "In", "foo"))),
        None,
        {"zone": "bar"},
        ERR_REASON_ENFORCED,
        id="a node the added affinity does not match is rejected as scheduler-enforced",
    ),
    pytest.param(
        _required(_exprs(_expr("zone", "In", "foo"))),
        _required(_exprs(_expr("foo", "In", "bar"))),
        {"zone": "bar", "foo": "bar"},
        ERR_REASON_ENFORCED,
        id="the added affinity is checked before the pod's own",
    ),
    pytest.param(
        _required(_exprs(_expr("zone", "In", "foo"))),
        _required(_exprs(_expr("foo", "In", "bar"))),
        {"zone": "foo"},
        ERR_REASON_POD,
        id="the pod's own affinity still applies under an added affinity",
    ),
]


@pytest.mark.parametrize(("added", "affinity", "labels", "reason"), FILTER_CASES)
def test_filter(added: dict | None, affinity: dict | None, labels: dict, reason: str | None) -> None:
    plugin = NodeAffinity({"addedAffinity": added} if added else {})
    pi = PodInfo(pod("p", affinity=affinity))
    cache = Cache()
    ni = cache.add_node(node("node1", labels=labels))
    state = CycleState()
    pre = plugin.pre_filter(state, pi, [ni])
    if pre.code == Code.Skip:
        state.skip_filter.add(plugin.name)
    status = plugin.filter(state, pi, ni)
    assert status.reasons == (() if reason is None else (reason,))
    if reason is not None:
        assert status.code == Code.UnschedulableAndUnresolvable
    mask = plugin.filter_batch(state, pi, cache)
    assert (True if mask is None else bool(mask[ni.slot])) == (reason is None)


def _preferred(*terms: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    return {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": w, "preference": pref} for w, pref in terms
        ]
    }


def _score(plugin: NodeAffinity, affinity: dict | None, labels: dict) -> tuple[Code, int]:
    pi = PodInfo(pod("p", affinity=affinity))
    ni = Cache().add_node(node("node1", labels=labels))
    state = CycleState()
    status = plugin.pre_score(state, pi, [ni])
    if not status.is_success():
        return status.code, 0
    return status.code, plugin.score(state, pi, ni)


@pytest.mark.parametrize(
    ("affinity", "labels", "code", "score"),
    [
        pytest.param(
            _preferred((0, _exprs(_expr("foo", "In", "bar")))),
            {"foo": "bar"},
            Code.Success,
            0,
            id="a weight-0 preferred term is skipped",
        ),
        pytest.param(
            _preferred((3, _exprs(_expr("foo", "In", "bar"))), (5, {})),
            {"foo": "bar"},
            Code.Success,
            3,
            id="an empty preference is skipped",
        ),
        pytest.param(
            _preferred((2, _exprs(_expr("foo", "In", "bar"))), (4, _exprs(_expr("baz", "Exists")))),
            {"foo": "bar", "baz": "x"},
            Code.Success,
            6,
            id="matching preferred terms add their weights",
        ),
        pytest.param(None, {"foo": "bar"}, Code.Skip, 0, id="a pod without preferred terms skips scoring"),
    ],
)
def test_preferred_scores(affinity: dict | None, labels: dict, code: Code, score: int) -> None:
    assert _score(NodeAffinity(), affinity, labels) == (code, score)


def test_a_broken_preferred_key_is_a_pre_score_error() -> None:
    pi = PodInfo(pod("p", affinity=_preferred((1, _exprs(_expr("invalid key!", "In", "bar"))))))
    ni = Cache().add_node(node("node1"))
    status = NodeAffinity().pre_score(CycleState(), pi, [ni])
    assert status.code == Code.Error
    assert status.message().startswith('[0].matchExpressions[0].key: Invalid value: "invalid key!": ')


def test_a_pre_score_error_fails_the_cycle_with_scheduler_error() -> None:
    broken = pod("p", affinity=_preferred((1, _exprs(_expr("invalid key!", "In", "bar")))))
    s = scheduler([node("a"), node("b")], [broken])
    result = s.schedule_one()
    assert result is not None and result.node is None
    assert result.message.startswith('running PreScore plugin "NodeAffinity": [0].matchExpressions[0].key')
    assert result.condition is not None and result.condition["reason"] == "SchedulerError"
    assert s.queue.where["uid-p"] == "backoffQ"


def test_added_preferred_terms_add_to_the_score() -> None:
    plugin = NodeAffinity({"addedAffinity": _preferred((5, _exprs(_expr("zone", "In", "foo"))))})
    assert _score(plugin, None, {"zone": "foo"}) == (Code.Success, 5)
    assert _score(plugin, _preferred((2, _exprs(_expr("a", "Exists")))), {"zone": "foo", "a": "1"}) == (
        Code.Success,
        7,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            {"addedAffinity": _required(_exprs(_expr("foo", "In")))},
            "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            ".matchExpressions[0].values: Invalid value: []string{}: for 'in', 'notin' operators, "
            "values set can't be empty",
            id="an added required term without In values",
        ),
        pytest.param(
            {"addedAffinity": _preferred((1, _exprs(_expr("foo", "Exists", "x"))))},
            "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0].values: "
            'Invalid value: []string{"x"}: values set must be empty for exists and does not exist',
            id="an added preferred Exists term with values",
        ),
    ],
)
def test_invalid_added_affinity_is_refused(args: dict, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        scheduler(
            [],
            config={"profiles": [{"pluginConfig": [{"name": "NodeAffinity", "args": args}]}]},
        )
    assert str(err.value) == f'initializing plugin "NodeAffinity": {message}'


def test_a_profile_added_affinity_places_pods() -> None:
    config = {
        "profiles": [
            {
                "pluginConfig": [
                    {
                        "name": "NodeAffinity",
                        "args": {"addedAffinity": _required(_exprs(_expr("pool", "In", "batch")))},
                    }
                ]
            }
        ]
    }
    s = scheduler(
        [node("a", labels={"pool": "web"}), node("b", labels={"pool": "batch"})], [pod("p")], config=config
    )
    result = s.schedule_one()
    assert result is not None and result.node == "b"
