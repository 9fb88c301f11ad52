"""The DaemonSet controller's ClaimPods (getDaemonPods, pkg/controller/controller_ref_manager.go):
a DaemonSet not being deleted releases each pod it controls that its selector no longer matches
and adopts each orphan of its namespace that it matches, before it places any pod. Mixed into
`kubetaint.controllers.daemonset.controller.DaemonSetController`, whose state it reads (the
attributes declared below)."""

from __future__ import annotations

import logging
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.api.selectors import LabelSelector, label_selector_from_dict
from kubetaint.controllers.replicaset import podutil
from kubetaint.controllers.replicaset.claim import commit_owners, with_controller
from kubetaint.controllers.replicaset.index import PodOwnerIndex
from kubetaint.controllers.replicaset.workqueue import WorkQueue
from kubetaint.speed.reference import reference_mode
from kubetaint.store.informer import Informer
from kubetaint.store.interface import Store

JSON = dict[str, Any]
Key = tuple[str, str]
RESOURCE = "daemonsets.apps"
#: Stands for "nothing read yet" where None is a value.
UNSET = object()
log = logging.getLogger("kubetaint.controllers.daemonset.controller")


def labels_of(pod: JSON) -> Any:
    """The pod's labels (None when its metadata holds none)."""
    meta = pod.get("metadata")
    return meta.get("labels") if type(meta) is dict else None


class PodClaims:
    """ClaimPods over a DaemonSet controller's state (the attributes and method below are its)."""

    store: Store
    pods: Informer
    index: PodOwnerIndex
    queue: WorkQueue[Key]
    #: the orphan pods of each namespace, by key
    _orphans: dict[str, set[Key]]
    #: the orphans each DaemonSet's selector matched when they changed (adopted at its next sync)
    _wanted: dict[Key, set[Key]]
    #: the DaemonSets whose next sync looks at every orphan of their namespace
    _rescan: set[Key]
    #: each DaemonSet's owned-pods version and selector at which every owned pod matched
    _claim_checked: dict[str, tuple[int, object]]

    def _pods_by_node(self, ds: JSON) -> dict[str, list[JSON]]:
        raise NotImplementedError

    def nodes_to_daemon_pods(self, ds: JSON) -> dict[str, list[JSON]] | None:
        """getNodesToDaemonPods: the DaemonSet's pods by target node once it claimed them (READ-ONLY);
        None when the claim failed (the DaemonSet is synced again in a second) or its selector
        is nil."""
        selector = label_selector_from_dict((ds.get("spec") or {}).get("selector"))
        if selector is None:
            return None
        if not (ds.get("metadata") or {}).get("deletionTimestamp") and not self._claim_pods(ds, selector):
            return None
        return self._pods_by_node(ds)

    def _claim_pods(self, ds: JSON, selector: LabelSelector) -> bool:
        """ClaimPods of getDaemonPods for a DaemonSet not being deleted: release each owned pod
        `selector` no longer matches, adopt each orphan of its namespace it matches. False when a
        write failed (other than for a pod gone) or the adoption found the DaemonSet gone or being
        deleted: the sync stops there and the DaemonSet is synced again in a second (upstream's
        sync returns the error and is requeued)."""
        key = podutil.key_of(ds)
        uid = str(ds["metadata"].get("uid") or "")
        ok = self._release_unmatched(ds, uid, selector)
        if reference_mode() or key in self._rescan:
            self._rescan.discard(key)
            keys = self._orphans.get(key[0], set())
        else:
            keys = self._wanted.get(key, set())
        self._wanted.pop(key, None)
        candidates = self._adoption_candidates(keys, selector)
        if candidates and not self._adopt(ds, candidates):
            ok = False
            self._rescan.add(key)  # the candidates are looked for again at the retry
        if not ok:
            self.queue.add_after(key, 1.0)
        return ok

    def _release_unmatched(self, ds: JSON, uid: str, selector: LabelSelector) -> bool:
        """ReleasePod of each owned pod `selector` does not match; whether every release held."""
        raw = (ds.get("spec") or {}).get("selector")
        version = self.index.version(uid)
        checked = self._claim_checked.get(uid)
        if not reference_mode() and checked is not None and checked[0] == version and checked[1] is raw:
            return True  # no owned pod changed since every one matched this very selector
        released: list[JSON] = []
        last_labels: object = UNSET
        last_match = True
        for pod in self.index.pods_owned_by(uid):
            labels = labels_of(pod)
            if labels is not last_labels:
                last_labels, last_match = labels, selector.matches(labels)
            if not last_match:
                released.append(with_controller(pod, None, None))
        if not released:
            self._claim_checked[uid] = (version, raw)
            return True
        return self._write_owners(ds, released, "release")

    def _adoption_candidates(self, keys: set[Key], selector: LabelSelector) -> list[JSON]:
        """The pods under `keys` that are orphans `selector` matches and not being deleted, in
        key order."""
        if not keys:
            return []
        found: list[JSON] = []
        for pod_key in sorted(keys):
            pod = self.pods.get(*pod_key)
            if pod is None or podutil.controller_ref_of(pod) is not None:
                continue
            meta = pod.get("metadata") or {}
            if not meta.get("deletionTimestamp") and selector.matches(labels_of(pod)):
                found.append(pod)
        return found

    def _adopt(self, ds: JSON, candidates: list[JSON]) -> bool:
        """AdoptPod of each candidate, after RecheckDeletionTimestamp (a fresh read of the
        DaemonSet: the same uid and no deletion timestamp); whether every adoption held."""
        key = podutil.key_of(ds)
        uid = ds["metadata"].get("uid")
        try:
            fresh = self.store.get(RESOURCE, *key)
        except StatusError as err:
            log.info("daemonset controller: adopting pods for %s/%s: %s", *key, err.message)
            return False
        fresh_meta = fresh.get("metadata") or {}
        if fresh_meta.get("uid") != uid:
            log.info(
                "daemonset controller: original DaemonSet %s/%s is gone: got uid %s, wanted %s",
                *key,
                fresh_meta.get("uid"),
                uid,
            )
            return False
        if fresh_meta.get("deletionTimestamp"):
            log.info(
                "daemonset controller: %s/%s has just been deleted at %s",
                *key,
                fresh_meta.get("deletionTimestamp"),
            )
            return False
        ref = podutil.controller_ref(ds, "apps/v1", "DaemonSet")
        only_ref = [ref]
        return self._write_owners(ds, [with_controller(pod, ref, only_ref) for pod in candidates], "adopt")

    def _write_owners(self, ds: JSON, patched: list[JSON], action: str) -> bool:
        """The owner writes of `patched`, committed together; whether each held or found its pod
        gone (each other refusal logged)."""
        ok = True
        for pod, result in zip(patched, commit_owners(self.store, patched), strict=True):
            if isinstance(result, StatusError) and result.code != 404:
                ok = False
                log.info(
                    "daemonset controller: could not %s pod %s for %s/%s: %s",
                    action,
                    pod["metadata"].get("name"),
                    *podutil.key_of(ds),
                    result.message,
                )
        return ok


def string_labels(labels: dict[Any, Any]) -> bool:
    """Whether every label key and value is a string (equal labels are then the same labels to
    a selector: no other JSON value equals a string)."""
    return all(type(k) is str and type(v) is str for k, v in labels.items())
