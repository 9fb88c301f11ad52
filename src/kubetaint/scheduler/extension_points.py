"""The scheduling framework's extension points, one Protocol each, and the optional capabilities
(mirrors k8s.io/kube-scheduler/framework interface.go: PreFilterPlugin, FilterPlugin, ...).

A plugin says which points it implements by naming their Protocols among its bases
(`class TaintToleration(Plugin, FilterPlugin, FilterBatch, ScorePlugin, ...)`); mypy checks that
its methods have the Protocols' signatures, and the framework finds a plugin's points by those
declared bases (`declares`), never by looking for a method of some name. The batch
capabilities (`FilterBatch`, `ScoreBatch`) are kubetaint's: the same verdicts and scores,
vectorised over the cache's node slots.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeGuard

from kubetaint.scheduler.events import ClusterEventWithHint
from kubetaint.scheduler.listers import ClusterListers
from kubetaint.scheduler.nodeinfo import NodeInfo
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import Status

if TYPE_CHECKING:
    from kubetaint.scheduler.cache import BoolArray, Cache, IntArray
    from kubetaint.scheduler.framework import Framework
    from kubetaint.scheduler.storage_listers import StorageListers


class CycleState:
    """Per-cycle plugin data plus the plugins PreFilter/PreScore asked to skip."""

    __slots__ = ("data", "skip_filter", "skip_score")

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()


@dataclass
class PostFilterResult:
    nominated_node_name: str = ""
    victims: list[Mapping[str, Any]] = field(default_factory=list)


class Plugin:
    """Base class of every plugin: its name."""

    name: ClassVar[str] = ""


def declares(plugin: object, point: type) -> bool:
    """Whether the plugin's class names the extension point's (or capability's) Protocol among
    its bases."""
    return point in type(plugin).__mro__


class Named(Protocol):
    """What every extension point's plugin has: its name (a ClassVar of `Plugin`)."""

    name: ClassVar[str]


class Handle(ClusterListers, Protocol):
    """framework.Handle: what a plugin may read of the scheduler that runs it."""

    cache: Cache
    rng: random.Random
    storage: StorageListers

    def framework_for(self, pi: PodInfo) -> Framework: ...

    def pdbs(self) -> Sequence[Mapping[str, Any]]: ...


class UsesHandle(Protocol):
    """A plugin given the scheduler's Handle when its profile is built."""

    def use_handle(self, handle: Handle) -> None: ...


class EnqueueExtensions(Named, Protocol):
    """EventsToRegister: the cluster events (with their QueueingHintFns) that may make a pod the
    plugin rejected schedulable."""

    def events_to_register(self) -> list[ClusterEventWithHint]: ...


class PreEnqueuePlugin(Named, Protocol):
    def pre_enqueue(self, pi: PodInfo) -> Status: ...


class QueueSortPlugin(Named, Protocol):
    def sort_key(self, q: Any) -> tuple[int, float]: ...


class PreFilterPlugin(Named, Protocol):
    """PreFilter: Skip leaves the plugin's Filter out of this cycle."""

    def pre_filter(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status: ...


class PreFilterResultPlugin(Named, Protocol):
    """The PreFilterResult of a PreFilter plugin: the only node names worth filtering (None: all)."""

    def pre_filter_result(self, state: CycleState, pi: PodInfo) -> frozenset[str] | None: ...


class FilterPlugin(Named, Protocol):
    def filter(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> Status: ...


class FilterBatch(Named, Protocol):
    """`filter` of every cache slot at once: a pass mask over the slots (None: every slot passes).
    The array may be shared: read-only to the caller."""

    def filter_batch(self, state: CycleState, pi: PodInfo, cache: Cache) -> BoolArray | None: ...


class PostFilterPlugin(Named, Protocol):
    def post_filter(
        self,
        state: CycleState,
        pi: PodInfo,
        node_to_status: Mapping[str, Status],
        absent_status: Status | None = None,
    ) -> tuple[PostFilterResult | None, Status]: ...


class PreScorePlugin(Named, Protocol):
    """PreScore: Skip leaves the plugin's Score out of this cycle."""

    def pre_score(self, state: CycleState, pi: PodInfo, nodes: Sequence[NodeInfo]) -> Status: ...


class ScorePlugin(Named, Protocol):
    def score(self, state: CycleState, pi: PodInfo, ni: NodeInfo) -> int: ...


class ScoreExtensions(Named, Protocol):
    """NormalizeScore of a Score plugin: the raw scores of the nodes scored, mapped to [0, 100]."""

    def normalize_score(self, state: CycleState, pi: PodInfo, scores: IntArray) -> IntArray: ...


class ScoreBatch(Named, Protocol):
    """`score` of the given cache slots at once."""

    def score_batch(self, state: CycleState, pi: PodInfo, cache: Cache, slots: IntArray) -> IntArray: ...


class ReservePlugin(Named, Protocol):
    def reserve(self, state: CycleState, pi: PodInfo, node_name: str) -> Status: ...

    def unreserve(self, state: CycleState, pi: PodInfo, node_name: str) -> None: ...


class PermitPlugin(Named, Protocol):
    def permit(self, state: CycleState, pi: PodInfo, node_name: str) -> tuple[Status, float]: ...


class PreBindPlugin(Named, Protocol):
    def pre_bind(self, state: CycleState, pi: PodInfo, node_name: str) -> Status: ...


class BindPlugin(Named, Protocol):
    def bind(self, state: CycleState, pi: PodInfo, node_name: str) -> Status: ...


class PostBindPlugin(Named, Protocol):
    def post_bind(self, state: CycleState, pi: PodInfo, node_name: str) -> None: ...


#: Extension points in upstream getExtensionPoints order (the configuration's names), each with
#: its Protocol.
EXTENSION_POINTS: dict[str, type] = {
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "postFilter": PostFilterPlugin,
    "reserve": ReservePlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
    "preBind": PreBindPlugin,
    "bind": BindPlugin,
    "postBind": PostBindPlugin,
    "permit": PermitPlugin,
    "preEnqueue": PreEnqueuePlugin,
    "queueSort": QueueSortPlugin,
}
#: Go interface names, for upstream's "<Type> \"name\" does not exist" messages.
INTERFACE_NAMES: dict[str, str] = {
    "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin",
    "postFilter": "PostFilterPlugin",
    "reserve": "ReservePlugin",
    "preScore": "PreScorePlugin",
    "score": "ScorePlugin",
    "preBind": "PreBindPlugin",
    "bind": "BindPlugin",
    "postBind": "PostBindPlugin",
    "permit": "PermitPlugin",
    "preEnqueue": "PreEnqueuePlugin",
    "queueSort": "QueueSortPlugin",
}


def implements(plugin: object, point: str) -> bool:
    """Whether the plugin declares the extension point named as in the configuration."""
    return declares(plugin, EXTENSION_POINTS[point])


# ---- the optional capabilities, as type guards (by the declared bases) -------------------------
def has_pre_filter_result(plugin: object) -> TypeGuard[PreFilterResultPlugin]:
    return declares(plugin, PreFilterResultPlugin)


def has_filter_batch(plugin: object) -> TypeGuard[FilterBatch]:
    return declares(plugin, FilterBatch)


def has_score_batch(plugin: object) -> TypeGuard[ScoreBatch]:
    return declares(plugin, ScoreBatch)


def has_score_extensions(plugin: object) -> TypeGuard[ScoreExtensions]:
    return declares(plugin, ScoreExtensions)


def has_enqueue_extensions(plugin: object) -> TypeGuard[EnqueueExtensions]:
    return declares(plugin, EnqueueExtensions)


def uses_handle(plugin: object) -> TypeGuard[UsesHandle]:
    return declares(plugin, UsesHandle)
