"""The DaemonSet controller's pods: CreatePodTemplate (util/daemonset_util.go) with the node-name
affinity of syncNodes, the revision hash and generation labels, and the pod creations and
deletions of syncNodes through the shared pod control. Mixed into
`kubetaint.controllers.daemonset.controller.DaemonSetController`, whose state it reads (the
attributes declared below)."""

from __future__ import annotations

import random
from typing import Any

from kubetaint.controllers.daemonset import update
from kubetaint.controllers.daemonset.placement import daemon_pod_spec_copy, node_name_affinity
from kubetaint.controllers.deployment.hashing import compute_hash
from kubetaint.controllers.replicaset.podcontrol import create_owned_pod, delete_owned_pod
from kubetaint.speed.memo import Memo
from kubetaint.store.events import EventRecorder
from kubetaint.store.interface import Store

JSON = dict[str, Any]


class DaemonPodControl:
    """A DaemonSet's pod templates, creations and deletions (the attributes below are the
    controller's)."""

    store: Store
    recorder: EventRecorder
    rng: random.Random
    #: id(template) -> (template, collisionCount, hash) of the last template hashed
    _hash_memo: Memo[int, tuple[JSON, int | None, str]]

    def init_pod_control(self) -> None:
        """The memo of the last template hashed."""
        self._hash_memo = Memo("controllers.daemonset.controller.template_hash", limit=1)

    def pod_template(self, ds: JSON, node_name: str) -> JSON:
        """CreatePodTemplate plus the node-name affinity of syncNodes."""
        template = (ds.get("spec") or {}).get("template") or {}
        meta = dict(template.get("metadata") or {})
        hash_ = self._template_hash(template, (ds.get("status") or {}).get("collisionCount"))
        generation = update.template_generation(ds)
        meta["labels"] = self._pod_labels(template, hash_, generation)
        spec = daemon_pod_spec_copy(ds)
        spec["affinity"] = node_name_affinity(spec.get("affinity"), node_name)
        return {"metadata": meta, "spec": spec}

    def _pod_labels(self, template: JSON, hash_: str, generation: str | None) -> JSON:
        """The labels of a pod of `template` at revision `hash_` (and template generation): the
        template's with the revision hash and generation labels."""
        labels = dict((template.get("metadata") or {}).get("labels") or {})
        labels["controller-revision-hash"] = hash_
        if generation is not None:
            labels[update.GENERATION_LABEL] = generation
        return labels

    def _template_hash(self, template: JSON, collision_count: int | None) -> str:
        """compute_hash(template, collision_count), remembered for the last very same template
        object (stored templates are read-only: the same object hashes the same) and count."""
        memo = self._hash_memo.get(id(template))
        if (
            memo is not None
            and memo[0] is template
            and type(memo[1]) is type(collision_count)
            and memo[1] == collision_count
        ):
            return memo[2]
        result = compute_hash(template, collision_count)
        self._hash_memo.put(id(template), (template, collision_count, result))
        return result

    def _create_pod(self, ds: JSON, node_name: str) -> None:
        template = self.pod_template(ds, node_name)
        create_owned_pod(self.store, self.recorder, self.rng, ds, kind="DaemonSet", template=template)

    def _delete_pod(self, ds: JSON, pod: JSON) -> None:
        delete_owned_pod(self.store, self.recorder, ds, pod)
