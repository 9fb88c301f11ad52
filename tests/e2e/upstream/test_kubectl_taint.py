"""kubectl's pkg/cmd/taint/taint_test.go TestTaint table, as data, run with the real kubectl
against `kubetaint up` instead of a fake REST client: the node starts with `oldTaints`; a case
that expects a taint ends with exactly `newTaints` (equalTaints: the same taints in any order),
one that expects a fatal error exits non-zero, and one that expects no taint leaves the node
unwritten (its resourceVersion unchanged)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ..harness import KUBECTL, UpServer

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")


def taint(key: str, value: str, effect: str) -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect}


CASES = [
    # success cases
    pytest.param([], [taint("foo", "bar", "NoSchedule")], ["foo=bar:NoSchedule"], False, True,
                 id="taints a node with effect NoSchedule"),
    pytest.param([], [taint("foo", "bar", "PreferNoSchedule")], ["foo=bar:PreferNoSchedule"], False, True,
                 id="taints a node with effect PreferNoSchedule"),
    pytest.param([taint("foo", "bar", "NoSchedule")], [taint("foo", "barz", "NoSchedule")],
                 ["foo=barz:NoSchedule", "--overwrite"], False, True,
                 id="update an existing taint on the node, change the value from bar to barz"),
    pytest.param([], [taint("dedicated", "namespaceA", "NoSchedule"), taint("foo", "bar", "PreferNoSchedule")],
                 ["dedicated=namespaceA:NoSchedule", "foo=bar:PreferNoSchedule"], False, True,
                 id="taints a node with two taints"),
    pytest.param([taint("dedicated", "namespaceA", "NoSchedule"), taint("dedicated", "namespaceA", "PreferNoSchedule")],
                 [taint("dedicated", "namespaceA", "PreferNoSchedule")], ["dedicated:NoSchedule-"], False, True,
                 id="node has two taints with the same key but different effect, remove one of them by indicating "
                 "exact key and effect"),
    pytest.param([taint("dedicated", "namespaceA", "NoSchedule"), taint("dedicated", "namespaceA", "PreferNoSchedule")],
                 [], ["dedicated-"], False, True,
                 id="node has two taints with the same key but different effect, remove all of them with wildcard"),
    pytest.param([taint("dedicated", "namespaceA", "NoSchedule"), taint("foo", "bar", "PreferNoSchedule")],
                 [taint("foo", "barz", "PreferNoSchedule")],
                 ["dedicated:NoSchedule-", "foo=barz:PreferNoSchedule", "--overwrite"], False, True,
                 id="node has two taints, update one of them and remove the other"),
    # error cases
    pytest.param([], [], ["nospecialchars^@=banana:NoSchedule"], True, False, id="invalid taint key"),
    pytest.param([], [], ["foo=bar:NoExcute"], True, False, id="invalid taint effect"),
    pytest.param([], [], ["foo=bar:NoExcute", "foo=barz:NoExcute"], True, False,
                 id="duplicated taints with the same key and effect should be rejected"),
    pytest.param([], [], ["foo=:NoExcute", "foo=:NoExcute-"], True, False,
                 id="add and remove taint with same key and effect should be rejected"),
    pytest.param([taint("foo", "bar", "NoSchedule")], [taint("foo", "bar", "NoSchedule")], ["foo=bar:NoSchedule"],
                 True, False, id="can't update existing taint on the node, since 'overwrite' flag is not set"),
]  # fmt: skip


def _node(server: UpServer) -> dict[str, Any]:
    return dict(json.loads(server.kubectl("get", "node", "node-name", "-o", "json").stdout))


def _equal_taints(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    """equalTaints: the same length and every taint of `a` in `b`."""
    return len(a) == len(b) and all(t in b for t in a)


@pytest.mark.parametrize(("old_taints", "new_taints", "args", "expect_fatal", "expect_taint"), CASES)
def test_taint(
    bare_cluster: UpServer,
    old_taints: list[dict[str, str]],
    new_taints: list[dict[str, str]],
    args: list[str],
    expect_fatal: bool,
    expect_taint: bool,
) -> None:
    bare_cluster.kubectl("delete", "node", "node-name", "--ignore-not-found")
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-name"},
        "spec": {"taints": old_taints},
    }
    path = bare_cluster.workdir / "node-name.json"
    path.write_text(json.dumps(node))
    bare_cluster.kubectl("create", "-f", str(path))
    before = _node(bare_cluster)["metadata"]["resourceVersion"]

    result = bare_cluster.kubectl("taint", "node", "node-name", *args, ok=False)

    saw_fatal = result.returncode != 0
    if expect_fatal:
        assert saw_fatal, f"unexpected non-error: {result.stdout}"
    after = _node(bare_cluster)
    tainted = after["metadata"]["resourceVersion"] != before
    if expect_taint:
        assert tainted, f"node not tainted: {result.stderr}"
        taints = [{k: v for k, v in t.items() if k != "timeAdded"} for t in after["spec"].get("taints", [])]
        assert _equal_taints(new_taints, taints), f"expected:\n{new_taints}\nsaw:\n{taints}"
    if not expect_taint:
        assert not tainted, "unexpected taint"
