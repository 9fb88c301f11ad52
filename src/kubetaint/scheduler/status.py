"""Plugin result codes and Status (mirrors k8s.io/kube-scheduler/framework interface.go)."""

from __future__ import annotations

from enum import IntEnum

MAX_NODE_SCORE = 100
MAX_TOTAL_SCORE = 2**63 - 1


class Code(IntEnum):
    """Upstream framework.Code values (same numbering)."""

    Success = 0
    Error = 1
    Unschedulable = 2
    UnschedulableAndUnresolvable = 3
    Wait = 4
    Skip = 5
    Pending = 6


class Status:
    """A plugin verdict: code, reasons and the plugin that produced it."""

    __slots__ = ("code", "plugin", "reasons")

    def __init__(self, code: Code = Code.Success, *reasons: str, plugin: str = "") -> None:
        self.code = code
        self.reasons: tuple[str, ...] = reasons
        self.plugin = plugin

    def is_success(self) -> bool:
        return self.code == Code.Success

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        return Status(self.code, *self.reasons, plugin=plugin)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return self.code == other.code and self.reasons == other.reasons

    def __hash__(self) -> int:
        return hash((self.code, self.reasons))

    def __repr__(self) -> str:
        return f"Status({self.code.name}, {list(self.reasons)!r}, plugin={self.plugin!r})"


SUCCESS = Status()
