"""FitError.Error, as data from upstream's TestFitError_Error (pkg/scheduler/framework/types_test.go):
the PreFilter message or the sorted histogram, then the PostFilter message as it is (" %v")."""

from __future__ import annotations

import pytest

from kubetaint.scheduler.fit_error import Diagnosis, FitError
from kubetaint.scheduler.status import Code, Status

PRE = "Node(s) failed PreFilter plugin FalsePreFilter"
F1 = "Node(s) failed Filter plugin FalseFilter-1"
F2 = "Node(s) failed Filter plugin FalseFilter-2"
POST = "Error running PostFilter plugin FailedPostFilter"


def _statuses(*reasons: str) -> dict[str, Status]:
    return {f"node{i + 1}": Status(Code.Unschedulable, r) for i, r in enumerate(reasons)}


@pytest.mark.parametrize(
    ("num_all_nodes", "diagnosis", "want"),
    [
        pytest.param(
            3,
            Diagnosis(_statuses(PRE, PRE, PRE), pre_filter_msg=PRE),
            f"0/3 nodes are available: {PRE}.",
            id="nodes failed a PreFilter plugin",
        ),
        pytest.param(
            3,
            Diagnosis(_statuses(PRE, PRE, PRE), pre_filter_msg=PRE, post_filter_msg=POST),
            f"0/3 nodes are available: {PRE}. {POST}",
            id="nodes failed a PreFilter plugin and the preemption also failed",
        ),
        pytest.param(
            3,
            Diagnosis(_statuses(F1, F1, F1)),
            f"0/3 nodes are available: 3 {F1}.",
            id="nodes failed one Filter plugin with an empty PostFilterMsg",
        ),
        pytest.param(
            3,
            Diagnosis(_statuses(F1, F1, F1), post_filter_msg=POST),
            f"0/3 nodes are available: 3 {F1}. {POST}",
            id="nodes failed one Filter plugin with a non-empty PostFilterMsg",
        ),
        pytest.param(
            3,
            Diagnosis(_statuses(F1, F1, F2)),
            f"0/3 nodes are available: 1 {F2}, 2 {F1}.",
            id="nodes failed two Filter plugins with an empty PostFilterMsg",
        ),
        pytest.param(
            3,
            Diagnosis(_statuses(F1, F1, F2), post_filter_msg=POST),
            f"0/3 nodes are available: 1 {F2}, 2 {F1}. {POST}",
            id="nodes failed two Filter plugins with a non-empty PostFilterMsg",
        ),
        pytest.param(
            1,
            Diagnosis(_statuses("Node failed Permit plugin Permit-1")),
            "0/1 nodes are available: 1 Node failed Permit plugin Permit-1.",
            id="failed to Permit on a node",
        ),
        pytest.param(
            1,
            Diagnosis(_statuses("Node failed Reserve plugin Reserve-1")),
            "0/1 nodes are available: 1 Node failed Reserve plugin Reserve-1.",
            id="failed to Reserve on a node",
        ),
    ],
)
def test_fit_error_message(num_all_nodes: int, diagnosis: Diagnosis, want: str) -> None:
    assert FitError(num_all_nodes, diagnosis).error() == want
