"""What InterPodAffinity's filtering and scoring share: the pods an affinity term matches
(podMatchesAllAffinityTerms, the index's per-node counters), per-topology-value count arrays
(topologyToMatchedTermCount, as numpy arrays by value id) and `AffinityPlugin`, what the filtering
and scoring halves read of the plugin (plugin.py's InterPodAffinity).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from kubetaint.scheduler.affinity_terms import AffinityTerm
from kubetaint.scheduler.cache import IntArray
from kubetaint.scheduler.listers import ClusterListers
from kubetaint.scheduler.pod_index import Counter, PodIndex, required_pair
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import Code, Status

SKIP = Status(Code.Skip)


class AffinityPlugin(Protocol):
    """What filtering.py and scoring.py read of the plugin."""

    hard_pod_affinity_weight: int
    ignore_preferred_terms_of_existing_pods: bool

    def listers(self) -> ClusterListers: ...

    def merge_namespaces(self, term: AffinityTerm) -> AffinityTerm: ...


def pod_labels(pod: Mapping[str, Any]) -> Mapping[str, str]:
    return (pod.get("metadata") or {}).get("labels") or {}


def matches_all(terms: Sequence[AffinityTerm], pi: PodInfo) -> bool:
    """podMatchesAllAffinityTerms (the incoming pod's namespaceSelector is merged: no labels)."""
    if not terms:
        return False
    labels = pod_labels(pi.pod)
    return all(t.matches(pi.namespace, labels, None) for t in terms)


def term_counter(index: PodIndex, term: AffinityTerm) -> Counter:
    """The index's counter of the pods the incoming pod's term matches (its namespaceSelector
    merged), per slot."""

    def match(p: PodInfo) -> bool:
        return term.matches(p.namespace, pod_labels(p.pod), None)

    return index.counter(("one", term), match, required_pair(term.selector))


def add_sums(counts: dict[str, IntArray], key: str, sums: IntArray) -> None:
    """Add per-value `sums` to `counts[key]` (topologyToMatchedTermCount.append), extending it
    for values first seen since."""
    known = counts.get(key)
    if known is None:
        counts[key] = sums
    else:
        if len(known) < len(sums):
            known = np.concatenate([known, np.zeros(len(sums) - len(known), np.int64)])
        known[: len(sums)] += sums
        counts[key] = known


def nonzero(counts: dict[str, IntArray]) -> dict[str, IntArray]:
    """The keys of `counts` with some matching pod."""
    return {k: v for k, v in counts.items() if v.any()}


def count_at(counts: dict[str, IntArray], key: str, vid: int) -> int:
    """The count of topology pair (key, value id `vid`); 0 for a value without one."""
    arr = counts.get(key)
    if arr is None or vid < 0 or vid >= len(arr):
        return 0
    return int(arr[vid])


def lookup(counts: IntArray | None, ids: IntArray) -> IntArray:
    """counts[ids] with 0 for ids -1 or beyond the counts (values first seen after they were summed)."""
    if counts is None:
        return np.zeros(len(ids), np.int64)
    n = len(counts)
    extended: IntArray = np.zeros(n + 1, np.int64)  # (id -1 and ids clipped to n read the 0 at n)
    extended[:n] = counts
    out: IntArray = extended[np.minimum(ids, n)]
    return out
