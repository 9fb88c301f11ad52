"""Shared helpers for simulator tests: run an example, find records."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from kubetaint.sim.api import simulate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@cache
def run_example(name: str) -> dict[str, Any]:
    return simulate(EXAMPLES / f"{name}.yaml")


def records(doc: dict[str, Any], reason: str, name: str | None = None) -> list[dict[str, Any]]:
    return [r for r in doc["timeline"] if r["reason"] == reason and (name is None or r["name"] == name)]


def final_pod(doc: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((p for p in doc["final"]["pods"] if p["metadata"]["name"] == name), None)
