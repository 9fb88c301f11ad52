"""The official JavaScript client, @kubernetes/client-node, against `kubetaint up`: the checks of
tests/e2e/js/client-checks.mjs (discovery, CRUD, an informer, a watch resumed from a
resourceVersion, the three patch types, eviction, tainting and cordoning a node, server-side
apply and its conflict), run once with `node` and compared here one by one."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest

from ..harness import UpServer, client_node_package
from .checks import NODE

NS = "client-node"


@pytest.fixture(scope="module")
def results(cluster: UpServer) -> dict[str, Any]:
    package = client_node_package()
    node = shutil.which("node")
    assert node is not None
    with cluster.client() as http:
        created = http.post("/api/v1/namespaces", json={"metadata": {"name": NS}})
    assert created.status_code == 201, created.text
    result = subprocess.run(
        [node, "client-checks.mjs"],
        cwd=package,
        env={**cluster.env, "CHECK_NAMESPACE": NS, "CHECK_NODE": NODE},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed


@pytest.mark.parametrize(
    ("check", "expected"),
    [
        pytest.param(
            "discovery",
            {"groups": ["apps", "policy"], "core": ["nodes", "pods", "pods/eviction"]},
            id="discovery lists the groups and the eviction subresource",
        ),
        pytest.param(
            "crud", {"replaced": {"colour": "green"}, "missing": 404}, id="create read replace delete"
        ),
        pytest.param(
            "informer",
            {
                "seen": [["add", "informer"], ["update", "v"], ["delete", "informer"]],
                "cached": [["informer", "v"]],
            },
            id="an informer sees add update delete and caches the object",
        ),
        pytest.param(
            "watchResumes", ["ADDED", "DELETED"], id="a watch resumes from the last resourceVersion"
        ),
        pytest.param(
            "patchTypes",
            [{"a": "1", "b": "2"}, {"b": "2"}, None],
            id="strategic merge, JSON merge and JSON patches (empty data omitted)",
        ),
        pytest.param("eviction", "gone", id="an evicted pod goes"),
        pytest.param(
            "taintAndCordon",
            {"tainted": True, "cordoned": True, "restored": [None, False]},
            id="a node tainted and cordoned then restored",
        ),
        pytest.param(
            "serverSideApply",
            {"managers": [["client-node", "Apply"]], "conflict": 409},
            id="server-side apply records its manager and reports a conflict",
        ),
    ],
)
def test_client_node(results: dict[str, Any], check: str, expected: Any) -> None:
    assert results[check] == expected
