"""pod-template-hash: upstream ComputeHash is FNV-32a over a deep print of the PodTemplateSpec
(plus collisionCount), rendered with rand.SafeEncodeString(fmt.Sprint(sum32)).

The deep print is Go's spew output of the typed struct, which Python cannot reproduce; here the
FNV-32a input is the template's canonical JSON, so hashes are stable and well-formed
(digits mapped onto the alphanumerics) but differ from a real cluster's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kubetaint.core.names import ALPHANUMS

FNV32_OFFSET = 0x811C9DC5
FNV32_PRIME = 0x01000193


def fnv32a(data: bytes) -> int:
    value = FNV32_OFFSET
    for byte in data:
        value ^= byte
        value = (value * FNV32_PRIME) & 0xFFFFFFFF
    return value


def safe_encode(text: str) -> str:
    """rand.SafeEncodeString: each character mapped onto the 27 safe alphanumerics."""
    return "".join(ALPHANUMS[ord(ch) % len(ALPHANUMS)] for ch in text)


def compute_hash(template: Mapping[str, Any], collision_count: int | None = None) -> str:
    payload = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    if collision_count is not None:
        payload += str(collision_count).encode()
    return safe_encode(str(fnv32a(payload)))
