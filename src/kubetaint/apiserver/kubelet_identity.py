"""The hollow kubelets' identity: each writes as `system:node:<name>` (groups system:nodes and
system:authenticated), and each of its writes passes the server's authorizer (Node, RBAC) and,
with Node authorization, the NodeRestriction admission plugin, as a real kubelet's requests do.

The kubelets run in the server's process and write through the control plane's registry; a
`NodeIdentityStore` per kubelet stands between them: it answers reads from the registry and
refuses a write with the 403 a real kubelet would get, logging it (a kubelet write is never
silently dropped). The checks are the server's own: its authorizer, and the NodeRestriction
plugin of the registry's admission chain (`admission/noderestriction.py` owns what a node may
write), asked with the write as HTTP would present it (a kubelet's pod writes and its Node
status posts are status writes). Reads are not authorized (the Node authorizer allows a
kubelet's reads of its own Node, Lease and bound pods, the only ones a hollow kubelet makes).
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable, Sequence

from kubetaint.admission import AdmissionError
from kubetaint.admission.attributes import Attributes
from kubetaint.admission.noderestriction import NodeRestriction, Operation
from kubetaint.api import errors
from kubetaint.api.jsonview import meta_of
from kubetaint.apiserver.authn import AUTHENTICATED_GROUP, NODE_USER_PREFIX, NODES_GROUP, UserInfo
from kubetaint.apiserver.authz import Authorizer, forbidden
from kubetaint.apiserver.requestinfo import RequestInfo
from kubetaint.registry.reads import ReadsPassThrough
from kubetaint.registry.validator import StoreLookup
from kubetaint.store.base import OneOperationWrites
from kubetaint.store.interface import (
    JSON,
    NO_CAPABILITIES,
    Create,
    Delete,
    Result,
    SetField,
    Store,
    Update,
    WriteOp,
)

log = logging.getLogger(__name__)
_VERBS: dict[Operation, str] = {"CREATE": "create", "UPDATE": "update", "DELETE": "delete"}


def node_user(node: str) -> UserInfo:
    """The user a kubelet's client certificate names: system:node:<name> in system:nodes."""
    return UserInfo(f"{NODE_USER_PREFIX}{node}", "", (NODES_GROUP, AUTHENTICATED_GROUP))


def _only_status_differs(obj: JSON, old: JSON | None) -> bool:
    if old is None:
        return False
    keep = {k: v for k, v in obj.items() if k not in ("status", "metadata")}
    before = {k: v for k, v in old.items() if k not in ("status", "metadata")}
    meta = {k: v for k, v in meta_of(obj).items() if k != "resourceVersion"}
    old_meta = {k: v for k, v in meta_of(old).items() if k != "resourceVersion"}
    return keep == before and meta == old_meta


class NodeIdentityStore(ReadsPassThrough, OneOperationWrites):
    """A Store over `store` whose writes are `node`'s requests: authorized by `authorizer` and
    admitted by `node_restriction` (the admission chain's NodeRestriction; None without the
    Node authorizer); refused ones raise the 403. Reads pass through to `store`; it offers no
    capability."""

    capabilities = NO_CAPABILITIES

    def __init__(
        self,
        store: Store,
        node: str,
        authorizer: Callable[[], Authorizer],
        *,
        node_restriction: NodeRestriction | None,
    ) -> None:
        self.store = self._reads = store
        self.node = node
        self.user = node_user(node)
        self.authorizer = authorizer
        self.node_restriction = node_restriction
        self._lookup = StoreLookup(store)  # what NodeRestriction looks up (a mirror pod's Node)
        self.refused = 0
        #: how often each refusal was met (logged the 1st, 10th, 100th... time)
        self._refusals: dict[str, int] = {}

    def close(self) -> None:
        """The registry is the control plane's: closing a kubelet's view leaves it open."""

    # writes ---------------------------------------------------------------------------------

    def _old(self, resource: str, obj: JSON) -> JSON | None:
        meta = meta_of(obj)
        try:
            return self.store.get(resource, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        except errors.StatusError:
            return None

    def check(
        self, operation: Operation, resource: str, subresource: str, obj: JSON, old: JSON | None
    ) -> None:
        """Authorize and admit one write; raise (and log) the 403 of a refused one."""
        plural, _, group = resource.partition(".")
        meta = meta_of(old if operation == "DELETE" else obj)
        name, namespace = str(meta.get("name") or ""), str(meta.get("namespace") or "")
        verb = _VERBS[operation]
        prefix = "apis" if group else "api"
        target = "" if operation == "CREATE" else name  # a create posts to the collection
        info = RequestInfo(True, "", verb, prefix, group, "v1", namespace, plural, subresource, target)
        allowed, reason = self.authorizer().authorize(self.user, info)
        if not allowed:
            self._refuse(forbidden(self.user, info, reason))
        if self.node_restriction is not None:
            new = None if operation == "DELETE" else obj
            attrs = Attributes(operation, resource, new, old, namespace, name, subresource, False, self.user)
            try:
                self.node_restriction.admit(attrs, self._lookup)
            except AdmissionError as err:
                self._refuse(errors.StatusError.from_status(err.status))

    def _refuse(self, err: errors.StatusError) -> None:
        """Count and log (the 1st, 10th, 100th... time each) a refused write, then raise it."""
        self.refused += 1
        seen = self._refusals[err.message] = self._refusals.get(err.message, 0) + 1
        if seen == 1:
            log.warning("kubelet %s: write refused: %s", self.node, err.message)
        elif _is_power_of_ten(seen):
            log.warning("kubelet %s: write refused (%d times): %s", self.node, seen, err.message)
        raise err

    def commit(self, ops: Sequence[WriteOp], *, stop_at_failure: bool = False) -> builtins.list[Result]:
        """`Store.commit` of `node`'s requests: each write is checked (a field write of a Node's or
        Pod's status part is a status write) before the checked run is committed at once; a
        refused write takes its 403 in its place."""
        results: builtins.list[Result] = []
        run: builtins.list[WriteOp] = []  # checked, not yet committed
        for op in ops:
            refusal: errors.StatusError | None = None
            if type(op) is SetField:
                path = op.path
                sub = "status" if path[0] == "status" and op.resource in ("nodes", "pods") else ""
                checked, refusal = self._checked_run(op.resource, op.objects, sub)
                if checked:
                    run.append(SetField(op.resource, checked, path, op.value))
                rest = op.objects[len(checked) + 1 :]
            else:
                rest = []
                try:
                    self._check(op)
                    run.append(op)
                except errors.StatusError as err:
                    refusal = err
            if refusal is None:
                continue
            results.extend(self._commit_run(run, stop_at_failure))
            run = []
            if stop_at_failure and results and isinstance(results[-1], errors.StatusError):
                return results
            results.append(refusal)
            if stop_at_failure:
                return results
            if rest:
                assert type(op) is SetField
                results.extend(self.commit((SetField(op.resource, rest, op.path, op.value),)))
        results.extend(self._commit_run(run, stop_at_failure))
        return results

    def _commit_run(self, run: builtins.list[WriteOp], stop_at_failure: bool) -> builtins.list[Result]:
        if not run:
            return []
        return self.store.commit(run, stop_at_failure=stop_at_failure)

    def _check(self, op: WriteOp) -> None:
        """`check` of one create, update or delete."""
        if type(op) is Create:
            self.check("CREATE", op.resource, "", op.object, None)
        elif type(op) is Update:
            old = self._old(op.resource, op.object)
            self.check("UPDATE", op.resource, self._subresource(op.resource, op.object, old), op.object, old)
        elif type(op) is Delete:
            try:
                old = self.store.get(op.resource, op.namespace, op.name)
            except errors.StatusError:
                old = {"metadata": {"name": op.name, "namespace": op.namespace}}
            self.check("DELETE", op.resource, "", old, old)

    def _subresource(self, resource: str, obj: JSON, old: JSON | None) -> str:
        """A kubelet writes pods' status only, and a Node's status unless it changes more."""
        if resource == "pods" or (resource == "nodes" and _only_status_differs(obj, old)):
            return "status"
        return ""

    def _checked_run(
        self, resource: str, objects: builtins.list[JSON], subresource: str | None
    ) -> tuple[builtins.list[JSON], errors.StatusError | None]:
        """The objects before the first refused update, and its 403 (None when none is)."""
        for index, obj in enumerate(objects):
            old = self._old(resource, obj)
            sub = self._subresource(resource, obj, old) if subresource is None else subresource
            try:
                self.check("UPDATE", resource, sub, obj, old)
            except errors.StatusError as err:
                return objects[:index], err
        return objects, None


def _is_power_of_ten(n: int) -> bool:
    while n >= 10 and n % 10 == 0:
        n //= 10
    return n == 1


def kubelet_stores(
    store: Store,
    authorizer: Callable[[], Authorizer],
    *,
    node_restriction: Callable[[], NodeRestriction | None],
) -> Callable[[str], Store]:
    """The factory the hollow-node pool takes: a NodeIdentityStore per node over `store` (the
    kubelets' writes: the control plane's registry recording kubelet's managedFields). `authorizer` and
    `node_restriction` are asked when a node's store is made (the API server's app and the
    admission chain it completes are built after the control plane)."""

    def store_for(node: str) -> Store:
        return NodeIdentityStore(store, node, authorizer, node_restriction=node_restriction())

    return store_for
