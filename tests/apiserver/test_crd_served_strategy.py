"""The custom resource strategy's PrepareForUpdate as a table, ported from upstream's
pkg/registry/customresource/strategy_test.go TestStrategyPrepareForUpdate."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.apiserver.crd_served import prepare_for_update

JSON = dict[str, Any]


def _meta(generation: int, **other: str) -> JSON:
    return {"generation": generation, **other}


@pytest.mark.parametrize(
    ("status_enabled", "old", "obj", "expected"),
    [
        pytest.param(
            True,
            {"metadata": _meta(1), "spec": "old", "status": "old"},
            {"metadata": _meta(1), "spec": "new", "status": "old"},
            {"metadata": _meta(2), "spec": "new", "status": "old"},
            id="/status is enabled, spec changes increment generation",
        ),
        pytest.param(
            True,
            {"metadata": _meta(1), "spec": "old", "status": "old"},
            {"metadata": _meta(1), "spec": "old", "status": "new"},
            {"metadata": _meta(1), "spec": "old", "status": "old"},
            id="/status is enabled, status changes do not increment generation, status changes removed",
        ),
        pytest.param(
            True,
            {"metadata": _meta(1, other="old"), "spec": "old", "status": "old"},
            {"metadata": _meta(1, other="new"), "spec": "old", "status": "old"},
            {"metadata": _meta(1, other="new"), "spec": "old", "status": "old"},
            id="/status is enabled, metadata changes do not increment generation",
        ),
        pytest.param(
            False,
            {"metadata": _meta(1), "spec": "old", "status": "old"},
            {"metadata": _meta(1), "spec": "new", "status": "old"},
            {"metadata": _meta(2), "spec": "new", "status": "old"},
            id="/status is disabled, spec changes increment generation",
        ),
        pytest.param(
            False,
            {"metadata": _meta(1), "spec": "old", "status": "old"},
            {"metadata": _meta(1), "spec": "old", "status": "new"},
            {"metadata": _meta(2), "spec": "old", "status": "new"},
            id="/status is disabled, status changes increment generation",
        ),
        pytest.param(
            False,
            {"metadata": _meta(1), "spec": "old", "image": "old", "status": "old"},
            {"metadata": _meta(1), "spec": "old", "image": "new", "status": "old"},
            {"metadata": _meta(2), "spec": "old", "image": "new", "status": "old"},
            id="/status is disabled, other top-level field changes increment generation",
        ),
        pytest.param(
            False,
            {"metadata": _meta(1, other="old"), "spec": "old", "status": "old"},
            {"metadata": _meta(1, other="new"), "spec": "old", "status": "old"},
            {"metadata": _meta(1, other="new"), "spec": "old", "status": "old"},
            id="/status is disabled, metadata changes do not increment generation",
        ),
        pytest.param(
            True,
            {"metadata": _meta(1), "spec": "old"},
            {"metadata": _meta(1), "spec": "old", "status": "new"},
            {"metadata": _meta(1), "spec": "old"},
            id="/status is enabled, a status the old object lacks is dropped",
        ),
    ],
)
def test_prepare_for_update(status_enabled: bool, old: JSON, obj: JSON, expected: JSON) -> None:
    assert prepare_for_update(obj, old, status_subresource=status_enabled) == expected
