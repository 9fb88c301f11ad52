"""Clocks: the only source of time for every component (virtual discrete-event and real asyncio)."""

from kubetaint.clock.base import format_micro_time, format_time, parse_time
from kubetaint.clock.real import RealClock
from kubetaint.clock.virtual import VirtualClock

__all__ = ["RealClock", "VirtualClock", "format_micro_time", "format_time", "parse_time"]
