"""kubectl's test/cmd/node-management.sh (run_cluster_management_tests), ported with its
assertions unchanged: taint and untaint with dry runs and the `kubectl-taint` field manager,
cordon and drain with dry runs, `drain --pod-selector`, uncordon, drain's selector and chunk-size
requests, and cordon by selector. As in test/cmd, node 127.0.0.1 has no kubelet (it is
registered by the test and stays unready), so evicted pods keep their deletionTimestamp."""

from __future__ import annotations

import json

import pytest

from ..harness import KUBECTL, UpServer
from .kube_test import KubeTest, if_has_not_string, if_has_string

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

ID_FIELD = ".metadata.name"
DEDICATED = '{{range .spec.taints}}{{if eq .key "dedicated"}}{{.key}}={{.value}}:{{.effect}}{{end}}{{end}}'
#: hack/make-rules/test-cmd.sh's create_node: the annotation makes the object non-empty, so its
#: field managers are saved (an object created with no fields is never tracked, as upstream)
NODE = {
    "kind": "Node",
    "apiVersion": "v1",
    "metadata": {"name": "127.0.0.1", "annotations": {"save-managers": "true"}},
    "status": {"capacity": {"memory": "1Gi"}},
}


def _test_pod(name: str, labels: dict[str, str]) -> str:
    return json.dumps(
        {
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"name": name, "labels": labels},
            "spec": {
                "nodeName": "127.0.0.1",
                "containers": [{"name": "container-1", "resources": {}, "image": "test-image"}],
            },
        }
    )


def response_line(t: KubeTest, verb: str, url: str, status: str) -> str:
    """The pattern of a `kubectl --v=6` response log line. Upstream's script (at the version
    kubetaint follows) greps client-go's structured line, `"Response" verb="GET" url="..."
    status="200 OK"`; kubectl before 1.34 logs `GET <url> 200 OK in N milliseconds`, which the
    script of those releases greps as `GET <url> 200 OK`: the same verb, URL and status."""
    if t.kubectl_minor() >= 34:
        return f'"Response" verb="{verb}" url="{url}" status="{status}"'
    return f"{verb} {url} {status}"


def create_test_pods(t: KubeTest) -> None:
    t.kubectl("create", "-f", "-", stdin=_test_pod("test-pod-1", {"e": "f", "type": "test-pod"}))
    t.kubectl("create", "-f", "-", stdin=_test_pod("test-pod-2", {"c": "d", "type": "test-pod"}))


def delete_test_pods(t: KubeTest) -> None:
    # need to use --force because node is unready
    t.kubectl("delete", "pod/test-pod-1", "--force", "--ignore-not-found")
    t.kubectl("delete", "pod/test-pod-2", "--force", "--ignore-not-found")


def test_run_cluster_management_tests(bare_cluster: UpServer) -> None:
    t = KubeTest(bare_cluster)
    t.kubectl("create", "-f", "-", stdin=json.dumps(NODE))
    # create_and_use_new_namespace
    t.kubectl("create", "namespace", "namespace-node-management")
    t.flags = ["--namespace", "namespace-node-management"]

    t.get_object_assert("nodes", f"{{{{range.items}}}}{{{{{ID_FIELD}}}}}:{{{{end}}}}", "127.0.0.1:")

    create_test_pods(t)

    # taint/untaint
    # Pre-condition: node doesn't have dedicated=foo:PreferNoSchedule taint
    t.get_object_assert("nodes 127.0.0.1", DEDICATED, "")  # expect no output
    # Dry-run
    t.kubectl("taint", "node", "127.0.0.1", "--dry-run=client", "dedicated=foo:PreferNoSchedule")
    t.kubectl("taint", "node", "127.0.0.1", "--dry-run=server", "dedicated=foo:PreferNoSchedule")
    t.get_object_assert("nodes 127.0.0.1", DEDICATED, "")  # expect no output
    # taint can add a taint (<key>=<value>:<effect>)
    t.kubectl("taint", "node", "127.0.0.1", "dedicated=foo:PreferNoSchedule")
    t.get_object_assert("nodes 127.0.0.1", DEDICATED, "dedicated=foo:PreferNoSchedule")
    # taint can remove a taint
    t.kubectl("taint", "node", "127.0.0.1", "dedicated-")
    # taint can add a taint (<key>:<effect>)
    t.kubectl("taint", "node", "127.0.0.1", "dedicated:PreferNoSchedule")
    t.get_object_assert("nodes 127.0.0.1", DEDICATED, "dedicated=<no value>:PreferNoSchedule")
    # Node has field manager for kubectl taint
    output_message = t.output(
        "get",
        "node",
        "127.0.0.1",
        "--show-managed-fields",
        "-o=jsonpath={.metadata.managedFields[*].manager}",
    )
    if_has_string(output_message, "kubectl-taint")
    # Dry-run remove a taint
    t.kubectl("taint", "node", "127.0.0.1", "--dry-run=client", "dedicated-")
    t.kubectl("taint", "node", "127.0.0.1", "--dry-run=server", "dedicated-")
    t.get_object_assert("nodes 127.0.0.1", DEDICATED, "dedicated=<no value>:PreferNoSchedule")
    # taint can remove a taint
    t.kubectl("taint", "node", "127.0.0.1", "dedicated-")
    # Post-condition: node doesn't have dedicated=foo:PreferNoSchedule taint
    t.get_object_assert("nodes 127.0.0.1", DEDICATED, "")  # expect no output

    ### kubectl cordon update with --dry-run does not mark node unschedulable
    # Pre-condition: node is schedulable
    t.get_object_assert("nodes 127.0.0.1", "{{.spec.unschedulable}}", "<no value>")
    t.kubectl("cordon", "127.0.0.1", "--dry-run=client")
    t.kubectl("cordon", "127.0.0.1", "--dry-run=server")
    t.get_object_assert("nodes 127.0.0.1", "{{.spec.unschedulable}}", "<no value>")

    ### kubectl drain update with --dry-run does not mark node unschedulable
    # Pre-condition: node is schedulable
    t.get_object_assert("nodes 127.0.0.1", "{{.spec.unschedulable}}", "<no value>")
    t.kubectl("drain", "127.0.0.1", "--dry-run=client", "--force")
    t.kubectl("drain", "127.0.0.1", "--dry-run=server", "--force")
    # Post-condition: node still exists, node is still schedulable
    t.get_object_assert("nodes", f"{{{{range.items}}}}{{{{{ID_FIELD}}}}}:{{{{end}}}}", "127.0.0.1:")
    t.get_object_assert("nodes 127.0.0.1", "{{.spec.unschedulable}}", "<no value>")

    ### kubectl drain with --pod-selector only evicts pods that match the given selector
    # Pre-condition: node is schedulable
    t.get_object_assert("nodes 127.0.0.1", "{{.spec.unschedulable}}", "<no value>")
    # Pre-condition: test-pod-1 and test-pod-2 exist
    t.get_object_assert("pods", "{{range .items}}{{.metadata.name}},{{end}}", "test-pod-1,test-pod-2,")
    # dry-run command
    t.kubectl("drain", "127.0.0.1", "--pod-selector", "e in (f)", "--dry-run=client", "--force")
    t.kubectl("drain", "127.0.0.1", "--pod-selector", "e in (f)", "--dry-run=server", "--force")
    t.get_object_assert("pods", "{{range .items}}{{.metadata.name}},{{end}}", "test-pod-1,test-pod-2,")
    # command - need --force because pod is unmanaged and --skip-wait-for-delete-timeout because node is unready
    response = t.output(
        "drain", "127.0.0.1", "--force", "--pod-selector", "e in (f)", "--skip-wait-for-delete-timeout=1"
    )
    if_has_string(response, "evicting pod .*/test-pod-1")
    # only "test-pod-1" should have been matched and deleted - test-pod-2 should not have a deletion timestamp
    t.get_object_assert("pods/test-pod-2", "{{.metadata.deletionTimestamp}}", "<no value>")
    # Post-condition: recreate test pods -- they have deletionTimestamp set but will not go away because node is unready
    delete_test_pods(t)
    create_test_pods(t)
    # Post-condition: node is schedulable
    t.kubectl("uncordon", "127.0.0.1")
    t.get_object_assert("nodes 127.0.0.1", "{{.spec.unschedulable}}", "<no value>")

    ### kubectl uncordon update with --dry-run is a no-op
    # Pre-condition: node is already schedulable
    t.get_object_assert("nodes 127.0.0.1", "{{.spec.unschedulable}}", "<no value>")
    response = t.output("uncordon", "127.0.0.1", "--dry-run=client")
    if_has_string(response, "already uncordoned")
    response = t.output("uncordon", "127.0.0.1", "--dry-run=server")
    if_has_string(response, "already uncordoned")
    # Post-condition: node is still schedulable
    t.get_object_assert("nodes 127.0.0.1", "{{.spec.unschedulable}}", "<no value>")

    ### kubectl drain command fails when both --selector and a node argument are given
    # Pre-condition: node exists and contains label test=label
    t.kubectl("label", "node", "127.0.0.1", "test=label")
    t.get_object_assert("nodes 127.0.0.1", "{{.metadata.labels.test}}", "label")
    response = t.failing_output("drain", "127.0.0.1", "--selector", "test=label")
    if_has_string(response, "cannot specify both a node name")

    ### Test kubectl drain chunk size
    # Pre-condition: node exists and contains label test=label
    t.get_object_assert("nodes 127.0.0.1", "{{.metadata.labels.test}}", "label")
    # Pre-condition: node is schedulable
    t.get_object_assert("nodes 127.0.0.1", "{{.spec.unschedulable}}", "<no value>")
    # Pre-condition: test-pod-1 and test-pod-2 exist
    t.get_object_assert("pods", "{{range .items}}{{.metadata.name}},{{end}}", "test-pod-1,test-pod-2,")
    # command - need to use force because pods are unmanaged, dry run (or skip-wait) because node is unready
    output_message = t.output(
        "--v=6", "drain", "--force", "--pod-selector", "type=test-pod", "--selector", "test=label",
        "--chunk-size=1", "--dry-run=client",
    )  # fmt: skip
    # Post-condition: Check if we get a limit on node, and both limit and continue on pods
    if_has_string(
        output_message,
        response_line(t, "GET", ".*/v1/nodes?labelSelector=test%3Dlabel&limit=1", "200 OK"),
    )
    if_has_string(
        output_message,
        response_line(
            t,
            "GET",
            ".*/v1/pods?fieldSelector=spec.nodeName%3D127.0.0.1&labelSelector=type%3Dtest-pod&limit=1",
            "200 OK",
        ),
    )
    if_has_string(
        output_message,
        response_line(
            t,
            "GET",
            ".*/v1/pods?continue=.*&fieldSelector=spec.nodeName%3D127.0.0.1&labelSelector=type%3Dtest-pod&limit=1",
            "200 OK",
        ),
    )
    # Post-condition: Check we evict multiple pages worth of pods
    if_has_string(output_message, "evicting pod .*/test-pod-1")
    if_has_string(output_message, "evicting pod .*/test-pod-2")
    # Post-condition: node is schedulable
    t.kubectl("uncordon", "127.0.0.1")
    t.get_object_assert("nodes 127.0.0.1", "{{.spec.unschedulable}}", "<no value>")

    ### Test kubectl drain chunk size defaults to 500
    output_message = t.output("--v=6", "drain", "--force", "--selector", "test=label", "--dry-run=client")
    # Post-condition: Check if we get a limit
    if_has_string(
        output_message,
        response_line(t, "GET", ".*/v1/nodes?labelSelector=test%3Dlabel&limit=500", "200 OK"),
    )
    if_has_string(
        output_message,
        response_line(t, "GET", ".*/v1/pods?fieldSelector=spec.nodeName%3D127.0.0.1&limit=500", "200 OK"),
    )

    ### kubectl cordon command fails when no arguments are passed
    # Pre-condition: node exists
    response = t.failing_output("cordon")
    if_has_string(response, "error\\: USAGE\\: cordon NODE")

    ### kubectl cordon selects no nodes with an empty --selector=
    # Pre-condition: node "127.0.0.1" is uncordoned
    t.kubectl("uncordon", "127.0.0.1")
    response = t.failing_output("cordon", "--selector=")
    if_has_string(response, "must provide one or more resources")
    # test=label matches our node
    response = t.output("cordon", "--selector", "test=label")
    if_has_string(response, "node/127.0.0.1 cordoned")
    # invalid=label does not match any nodes
    response = t.output("cordon", "--selector", "invalid=label")
    if_has_not_string(response, "cordoned")
    # Post-condition: node "127.0.0.1" is cordoned
    t.get_object_assert("nodes 127.0.0.1", "{{.spec.unschedulable}}", "true")

    # Clean up test pods
    delete_test_pods(t)
