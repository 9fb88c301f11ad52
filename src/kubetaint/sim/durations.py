"""Go-style durations (moved to `kubetaint.controlplane.durations`; re-exported for scenarios)."""

from kubetaint.api.goquote import go_quote
from kubetaint.controlplane.durations import (
    DurationError,
    format_duration,
    parse_duration,
    parse_go_duration,
)

__all__ = ["DurationError", "format_duration", "go_quote", "parse_duration", "parse_go_duration"]
