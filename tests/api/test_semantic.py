"""apimachinery's semantic equality on JSON (kubetaint.api.semantic): zero values equal absent
fields, quantities compare by value; anything else still tells objects apart."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.semantic import semantic
from kubetaint.controllers.deployment.util import equal_ignore_hash

EQUAL = [
    pytest.param({"a": None}, {}, id="null equals absent"),
    pytest.param({"a": ""}, {}, id="the empty string equals absent"),
    pytest.param({"hostNetwork": False}, {}, id="false equals absent"),
    pytest.param({"priority": 0}, {}, id="zero equals absent"),
    pytest.param({"tolerations": [], "nodeSelector": {}}, {}, id="empty lists and maps equal absent"),
    pytest.param({"requests": {"cpu": "1"}}, {"requests": {"cpu": "1000m"}}, id="quantities by value"),
    pytest.param({"limits": {"memory": "1Gi"}}, {"limits": {"memory": "1073741824"}}, id="binary suffixes"),
    pytest.param({"x": [{"a": {}}]}, {"x": [{}]}, id="nested inside lists"),
]

DIFFERENT = [
    pytest.param({"a": 1}, {}, id="a non-zero value"),
    pytest.param({"requests": {"cpu": "1"}}, {"requests": {"cpu": "2"}}, id="different quantities"),
    pytest.param({"x": [1, 2]}, {"x": [2, 1]}, id="list order matters"),
    pytest.param({"image": "a"}, {"image": "b"}, id="different strings"),
]


@pytest.mark.parametrize(("a", "b"), EQUAL)
def test_semantically_equal(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert semantic(a) == semantic(b)


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_semantically_different(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert semantic(a) != semantic(b)


def _template(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "web"}, "creationTimestamp": None},
        "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {}}], **spec},
    }


def test_deployment_templates_differing_only_in_zero_values_are_the_same_template() -> None:
    stored = _template()
    stored["metadata"]["labels"]["pod-template-hash"] = "abc"
    assert equal_ignore_hash(stored, _template(hostNetwork=False, terminationGracePeriodSeconds=30)) is False
    assert equal_ignore_hash(stored, _template(hostNetwork=False, tolerations=[]))
