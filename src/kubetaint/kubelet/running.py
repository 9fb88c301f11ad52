"""Keeps a kubelet's pods from its informer instead of reading the store (off with `KUBETAINT_REFERENCE=1`).

The stored pods bound to one hollow kubelet as its pod informer delivers them, and the running
tally of its admitted pods (how many, and their summed requests) that admission checks against.

Mirrors the kubelet's pod manager (pkg/kubelet/pod/pod_manager.go), which keeps the pods its
config source watches so that admission (HandlePodAdditions: the active pods) reads no API. A
kubelet uses it only where every committed pod change has reached its informer by the time the
write returns (`Store.delivers_synchronously`): then `objects` holds exactly what a store read
would return, and the tally exactly what summing the admitted pods read back from the store
gives, admission after admission, in O(1) instead of O(pods on the node).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.kubelet.admission import Others, PodUsage
from kubetaint.kubelet.resources import RequestsOf
from kubetaint.kubelet.runtime import RUN_TO_COMPLETION
from kubetaint.store.interface import Store

JSON = dict[str, Any]
Key = tuple[str, str]
_TERMINAL = ("Succeeded", "Failed")


class AdmittedPods:
    """The pods admitted to run here (key -> uid), with the pod view and tally kept alongside
    while `view` is on (see `use_view`)."""

    def __init__(self, node_name: str, requests_of: RequestsOf) -> None:
        self.node_name = node_name
        self._requests_of = requests_of
        self.uids: dict[Key, str] = {}
        self.view: RunningPods | None = None

    def use_view(self, enabled: bool) -> None:
        self.view = RunningPods(self.node_name, self._requests_of) if enabled else None

    def get(self, key: Key) -> str | None:
        return self.uids.get(key)

    def set(self, key: Key, uid: str) -> None:
        self.uids[key] = uid
        if self.view is not None:
            self.view.refresh(key, uid)

    def drop(self, key: Key) -> None:
        if self.uids.pop(key, None) is not None and self.view is not None:
            self.view.refresh(key, None)

    def start_running(self, pods: list[JSON]) -> bool:
        """Speeds up a kubelet's first look at the pods already running on its node (a
        scenario's or a snapshot's: 150,000 at 5,000 nodes) by admitting them at once, unordered,
        their requests tallied once per requests object (off without the pod view, as in
        reference mode: False).

        When no pod is admitted here yet and each of `pods` (distinct keys, as the view holds
        them) is bound here, Running, not being deleted, has a uid and runs until stopped (no
        restartPolicy Never or OnFailure: no container exit to schedule), looking at each in
        creation order admits each as it is (`set(key, uid)`) and does nothing else: the order
        shows nowhere (admission counts the admitted pods and sums their requests). Returns
        whether they were admitted; False leaves everything as it was."""
        view = self.view
        if view is None or self.uids:
            return False
        node_name = self.node_name
        admitted: list[tuple[Key, str, JSON]] = []
        for pod in pods:
            meta, spec, status = pod.get("metadata"), pod.get("spec"), pod.get("status")
            if type(meta) is not dict or type(spec) is not dict or type(status) is not dict:
                return False
            name, uid = meta.get("name"), meta.get("uid")
            if (
                type(name) is not str
                or uid is None
                or spec.get("nodeName") != node_name
                or status.get("phase") != "Running"
                or meta.get("deletionTimestamp")
                or spec.get("restartPolicy") in RUN_TO_COMPLETION
            ):
                return False
            admitted.append(((str(meta.get("namespace") or ""), name), str(uid), pod))
        view.admit_all(admitted)
        uids = self.uids
        for key, uid, _ in admitted:
            uids[key] = uid
        return True

    def deleted(self, key: Key) -> None:
        if self.view is not None:
            self.view.deleted(key)

    def read(self, store: Store, keys: Iterable[Key]) -> list[JSON]:
        """The stored pods of `keys` (from the view while on: what reading the store returns);
        a key no longer stored is no longer admitted."""
        view = self.view
        batch: list[JSON] = []
        for key in keys:
            if view is not None:
                known = view.objects.get(key)
                if known is not None:
                    batch.append(known)
                else:
                    self.drop(key)
                continue
            try:
                batch.append(store.get("pods", key[0], key[1]))
            except StatusError:
                self.drop(key)
        return batch

    def pods(self, store: Store) -> list[JSON]:
        """The admitted pods, unordered, read back from the store: the admitted keys still stored
        with the admitted uid, still bound here and not terminal (the kubelet's active pods)."""
        result = []
        for (namespace, name), uid in self.uids.items():
            try:
                pod = store.get("pods", namespace, name)
            except StatusError:
                continue
            if (
                pod["metadata"].get("uid") == uid
                and (pod.get("spec") or {}).get("nodeName") == self.node_name
                and (pod.get("status") or {}).get("phase") not in _TERMINAL
            ):
                result.append(pod)
        return result

    def others(self, store: Store, key: Key, uid: object) -> Others:
        """What admission of the pod `uid` at `key` counts: the other admitted pods (their order
        does not matter: admission only counts them and sums their requests)."""
        if self.view is not None:
            return self.view.usage_without(key, uid)
        return [p for p in self.pods(store) if p["metadata"].get("uid") != uid]


class RunningPods:
    """`objects`: the latest stored object of every pod observed bound to the node (a pod bound
    here has every later change routed here, since spec.nodeName never changes once set).
    The tally counts each admitted key whose object is stored with the admitted uid, still bound
    here and not terminal (the kubelet's `running_pods`), with the requests of that object."""

    def __init__(self, node_name: str, requests_of: RequestsOf) -> None:
        self.node_name = node_name
        self._requests_of = requests_of
        self.objects: dict[Key, JSON] = {}
        self._members: dict[Key, tuple[str, dict[str, int]]] = {}  # key -> (uid, its requests)
        self._used: dict[str, int] = {}

    # the view ---------------------------------------------------------------------------------

    def observe(self, key: Key, pod: JSON, admitted_uid: str | None) -> None:
        """A pod bound here was added or changed (`admitted_uid`: the kubelet's uid for the key)."""
        objects = self.objects
        prior = objects.get(key)
        objects[key] = pod
        if prior is not None and _same_tally_inputs(prior, pod):
            member = self._members.get(key)
            if member is None if admitted_uid is None else member is not None and member[0] == admitted_uid:
                # refresh would find what it found for `prior` (members are refreshed with their
                # object): leave a non-member out, or keep the member with the same requests
                return
        self.refresh(key, admitted_uid)

    def observe_unadmitted(self, pods: list[JSON]) -> list[Key]:
        """`observe(key, pod, None)` of each pod (none admitted here), with its key
        ((namespace, name) as the kubelet makes it) returned in order."""
        objects, members = self.objects, self._members
        keys: list[Key] = []
        for pod in pods:
            meta = pod.get("metadata") or {}
            key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
            objects[key] = pod
            if members:
                self._leave(key)  # what refresh(key, None) does; a non-member stays out
            keys.append(key)
        return keys

    def observe_unadmitted_keyed(self, pairs: list[tuple[Key, JSON]]) -> list[Key]:
        """`observe_unadmitted` of the pods of `pairs`, each with its key as observe_unadmitted
        makes it ((namespace, name), both strings): the keys returned in order."""
        objects = self.objects
        if self._members:
            for key, pod in pairs:
                objects[key] = pod
                self._leave(key)  # what refresh(key, None) does; a non-member stays out
        else:
            objects.update(pairs)
        return [key for key, _ in pairs]

    def deleted(self, key: Key) -> None:
        self.objects.pop(key, None)
        self._leave(key)

    # the tally ---------------------------------------------------------------------------------

    def admit_all(self, admitted: list[tuple[Key, str, JSON]]) -> None:
        """`refresh(key, uid)` of each (key, uid, pod) in turn, where no key is a member and each
        pod is the object held for its key, bound here and not terminal (`AdmittedPods.start_running`):
        each becomes a member, its requests summed once per requests object (integer sums: the
        same tally)."""
        members, requests_of = self._members, self._requests_of
        groups: dict[int, list[Any]] = {}  # id(requests) -> [requests, how many]
        for key, uid, pod in admitted:
            requests = requests_of(pod)
            members[key] = (uid, requests)
            group = groups.get(id(requests))
            if group is None:
                groups[id(requests)] = [requests, 1]
            else:
                group[1] += 1
        used = self._used
        for requests, count in groups.values():
            for name, amount in requests.items():
                used[name] = used.get(name, 0) + amount * count

    def refresh(self, key: Key, admitted_uid: str | None) -> None:
        """Recount `key` after its object or its admitted uid changed."""
        pod = self.objects.get(key)
        if (
            admitted_uid is None
            or pod is None
            or pod["metadata"].get("uid") != admitted_uid
            or (pod.get("spec") or {}).get("nodeName") != self.node_name
            or (pod.get("status") or {}).get("phase") in _TERMINAL
        ):
            self._leave(key)
            return
        requests = self._requests_of(pod)
        member = self._members.get(key)
        if member is not None:
            if member[1] is requests:
                self._members[key] = (admitted_uid, requests)
                return
            self._subtract(member[1])
        self._members[key] = (admitted_uid, requests)
        used = self._used
        for name, amount in requests.items():
            used[name] = used.get(name, 0) + amount

    def _leave(self, key: Key) -> None:
        member = self._members.pop(key, None)
        if member is not None:
            self._subtract(member[1])

    def _subtract(self, requests: dict[str, int]) -> None:
        used = self._used
        for name, amount in requests.items():
            used[name] -= amount

    def usage_without(self, key: Key, uid: object) -> PodUsage:
        """The admitted pods other than the pod `uid` (stored uids are unique, so only the member
        at its own key can carry it) as admission counts them."""
        member = self._members.get(key)
        if member is not None and member[0] == uid:
            used = dict(self._used)
            for name, amount in member[1].items():
                used[name] -= amount
            return PodUsage(len(self._members) - 1, used)
        return PodUsage(len(self._members), self._used)

    def __len__(self) -> int:
        return len(self._members)

    def member_keys(self) -> set[Key]:
        return set(self._members)

    def used(self) -> dict[str, int]:
        """The summed requests of the admitted pods (names no longer requested may remain at 0)."""
        return dict(self._used)


def _same_tally_inputs(prior: JSON, pod: JSON) -> bool:
    """Whether `refresh` reads the same from `pod` as from `prior`: the very same spec and status
    objects (read-only: nodeName, phase and the requests are the same) and the same uid."""
    return (
        prior.get("spec") is pod.get("spec")
        and prior.get("status") is pod.get("status")
        and prior["metadata"].get("uid") == pod["metadata"].get("uid")
    )
