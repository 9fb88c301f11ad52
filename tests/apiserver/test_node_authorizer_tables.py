"""Upstream's Node authorizer table as data (plugin/pkg/auth/authorizer/node/
node_authorizer_test.go TestNodeAuthorizer, the cases about what kubetaint serves: leases, pods
and nodes, with AuthorizeNodeWithSelectors on, as in v1.32). Pod relationships come from the
sample data's naming: pod<i>-node<j> is bound to node<j>."""

from __future__ import annotations

import pytest

from kubetaint.apiserver.authn import UserInfo
from kubetaint.apiserver.authz import NodeAuthorizer
from kubetaint.apiserver.requestinfo import RequestInfo

NODE0 = UserInfo("system:node:node0", "", ("system:nodes",))
UNREGISTERED = UserInfo("system:node:nodeunregistered", "", ("system:nodes",))
LEASES = "coordination.k8s.io"


def pod_node(namespace: str, name: str) -> str | None:
    if namespace != "ns0" or "-node" not in name:
        return None
    return name.rsplit("-", 1)[1]


def attrs(
    verb: str,
    resource: str,
    name: str = "",
    namespace: str = "",
    *,
    group: str = "",
    subresource: str = "",
    fields: str = "",
) -> RequestInfo:
    return RequestInfo(True, "", verb, "apis", group, "", namespace, resource, subresource, name, fields)


CASES = [
    # leases
    *(
        pytest.param(
            attrs(verb, "leases", "node0", "foo", group=LEASES),
            False,
            id=f"disallowed {verb} lease outside kube-node-lease",
        )
        for verb in ("get", "create", "update", "patch", "delete")
    ),
    *(
        pytest.param(
            attrs(verb, "leases", "node1", "kube-node-lease", group=LEASES),
            False,
            id=f"disallowed {verb} another node's lease",
        )
        for verb in ("get", "update", "patch", "delete")
    ),
    pytest.param(
        attrs("list", "leases", "", "kube-node-lease", group=LEASES), False, id="disallowed list node leases"
    ),
    pytest.param(
        attrs("watch", "leases", "", "kube-node-lease", group=LEASES),
        False,
        id="disallowed watch node leases",
    ),
    *(
        pytest.param(
            attrs(verb, "leases", "node0", "kube-node-lease", group=LEASES),
            True,
            id=f"allowed {verb} node lease",
        )
        for verb in ("get", "create", "update", "patch", "delete")
    ),
    # pods
    pytest.param(attrs("get", "pods", "pod0-node0", "ns0"), True, id="get related pod"),
    pytest.param(attrs("get", "pods", "pod0-node1", "ns0"), False, id="get unrelated pod"),
    pytest.param(attrs("list", "pods", fields="spec.nodeName=node0"), True, id="list related pods"),
    pytest.param(
        attrs("list", "pods", fields="spec.nodeName==node0"),
        True,
        id="list related pods - alternate selector",
    ),
    pytest.param(attrs("list", "pods", "pod0-node0", "ns0"), True, id="list single related pod"),
    pytest.param(attrs("list", "pods"), False, id="list unrelated pods"),
    pytest.param(attrs("watch", "pods", fields="spec.nodeName=node0"), True, id="watch related pods"),
    pytest.param(
        attrs("watch", "pods", fields="spec.nodeName==node0"),
        True,
        id="watch related pods - alternate selector",
    ),
    pytest.param(attrs("watch", "pods", "pod0-node0", "ns0"), True, id="watch single related pod"),
    pytest.param(attrs("watch", "pods"), False, id="watch unrelated pods"),
    pytest.param(attrs("create", "pods", "", "ns0"), True, id="create unnamed pod"),
    pytest.param(
        attrs("create", "pods", "", "ns0", subresource="proxy"),
        False,
        id="create pod proxy subresource forbidden",
    ),
    pytest.param(attrs("delete", "pods", "pod0-node0", "ns0"), True, id="delete related pod"),
    pytest.param(
        attrs("delete", "pods", "pod0-node1", "ns0"),
        True,
        id="delete unrelated pod (NodeRestriction guards it)",
    ),
    pytest.param(
        attrs("delete", "pods", "pod0-node0", "ns0", subresource="proxy"),
        False,
        id="delete pod proxy subresource forbidden",
    ),
    pytest.param(
        attrs("update", "pods", "pod0-node0", "ns0", subresource="status"),
        True,
        id="update related pod status",
    ),
    pytest.param(
        attrs("update", "pods", "pod0-node1", "ns0", subresource="status"),
        True,
        id="update unrelated pod status (NodeRestriction)",
    ),
    pytest.param(
        attrs("patch", "pods", "pod0-node0", "ns0", subresource="status"), True, id="patch related pod status"
    ),
    pytest.param(
        attrs("patch", "pods", "pod0-node1", "ns0", subresource="status"),
        True,
        id="patch unrelated pod status (NodeRestriction)",
    ),
    pytest.param(attrs("get", "pods", "pod0-node0", "ns0", subresource="status"), False, id="get pod status"),
    pytest.param(
        attrs("create", "pods", "pod0-node0", "ns0", subresource="eviction"),
        True,
        id="create related pod eviction",
    ),
    pytest.param(
        attrs("create", "pods", "pod0-node1", "ns0", subresource="eviction"),
        True,
        id="create unrelated pod eviction (NodeRestriction)",
    ),
    # nodes
    pytest.param(attrs("get", "nodes", "node0"), True, id="get related node"),
    pytest.param(attrs("get", "nodes", "node1"), False, id="get unrelated node"),
    pytest.param(attrs("list", "nodes", "node0"), True, id="list single related node"),
    pytest.param(attrs("list", "nodes", "node1"), False, id="list single unrelated node"),
    pytest.param(attrs("list", "nodes"), False, id="list all nodes"),
    pytest.param(attrs("watch", "nodes", "node0"), True, id="watch single related node"),
    pytest.param(attrs("watch", "nodes", "node1"), False, id="watch single unrelated node"),
    pytest.param(attrs("watch", "nodes"), False, id="watch all nodes"),
]


@pytest.mark.parametrize(("request_", "allowed"), CASES)
def test_node_authorizer(request_: RequestInfo, allowed: bool) -> None:
    assert NodeAuthorizer(pod_node).authorize(NODE0, request_)[0] is allowed


def test_an_unregistered_node_reads_its_own_node() -> None:
    assert (
        NodeAuthorizer(pod_node).authorize(UNREGISTERED, attrs("get", "nodes", "nodeunregistered"))[0] is True
    )
