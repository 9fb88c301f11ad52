"""A Secret as kube-apiserver stores it: `stringData` merged into `data` (base64) and dropped,
`type` defaulted to Opaque (mirrors Convert_v1_Secret_To_core_Secret and SetDefaults_Secret)."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

JSON = dict[str, Any]
OPAQUE = "Opaque"


def stored_secret(secret: JSON) -> JSON:
    """`secret` with each `stringData` entry written over `data` (as base64 of its UTF-8 bytes),
    `stringData` removed and an empty `type` set to Opaque; the same object when nothing changes."""
    out = secret
    if "stringData" in secret:
        out = {k: v for k, v in secret.items() if k != "stringData"}
        strings = secret.get("stringData")
        if isinstance(strings, Mapping) and strings:
            data = secret.get("data")
            merged = dict(data) if isinstance(data, Mapping) else {}
            for key, value in strings.items():
                merged[key] = base64.b64encode(str(value).encode()).decode()
            out["data"] = merged
    if not secret.get("type"):
        out = {**out, "type": OPAQUE}
    return out
