"""DefaultBinder: the binding itself is applied by the host; the plugin only approves it
(mirrors pkg/scheduler/framework/plugins/defaultbinder/default_binder.go)."""

from __future__ import annotations

from kubetaint.scheduler.extension_points import (
    BindPlugin,
    CycleState,
    Plugin,
)
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.podinfo import PodInfo
from kubetaint.scheduler.status import SUCCESS, Status


class DefaultBinder(Plugin, BindPlugin):
    name = names.DEFAULT_BINDER

    def bind(self, state: CycleState, pi: PodInfo, node_name: str) -> Status:
        # The host POSTs pods/binding {target: {kind: Node, name: node_name}}.
        return SUCCESS
