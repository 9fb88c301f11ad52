"""Pods' topology spread constraints and pod affinity label keys through the real kubectl against
`kubetaint up`: a created pod reads back with its matchLabelKeys/mismatchLabelKeys merged into its
selectors (the pod strategy's PrepareForCreate), and an invalid constraint gets kube-apiserver's
error text."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from .harness import KUBECTL, UpServer

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

SPREAD_POD = """apiVersion: v1
kind: Pod
metadata:
  name: spread
  labels: {app: web, pod-template-hash: abc123}
spec:
  containers: [{name: c, image: pause}]
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: ScheduleAnyway
    labelSelector: {matchLabels: {app: web}}
    matchLabelKeys: [pod-template-hash]
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: kubernetes.io/hostname
        labelSelector: {matchLabels: {app: web}}
        mismatchLabelKeys: [pod-template-hash]
"""

SKEWED_POD = """apiVersion: v1
kind: Pod
metadata: {name: skewed}
spec:
  containers: [{name: c, image: pause}]
  topologySpreadConstraints:
  - maxSkew: 0
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: web}}
"""

KEY_TWICE_POD = """apiVersion: v1
kind: Pod
metadata:
  name: twice
  labels: {app: web}
spec:
  containers: [{name: c, image: pause}]
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: web}}
    matchLabelKeys: [app]
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    minDomains: 2
    labelSelector: {matchLabels: {app: web}}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    up = UpServer(tmp_path_factory.mktemp("up-spread"), "--nodes", "1").start()
    yield up
    up.kill()


def _create(server: UpServer, name: str, manifest: str, *, ok: bool = True) -> tuple[str, str]:
    path = server.workdir / f"{name}.yaml"
    path.write_text(manifest)
    result = server.kubectl("create", "-f", str(path), ok=ok)
    return result.stdout.strip(), result.stderr.strip()


def test_a_created_pod_reads_back_with_its_label_keys_merged(server: UpServer) -> None:
    assert _create(server, "spread", SPREAD_POD)[0] == "pod/spread created"
    spec = json.loads(server.kubectl("get", "pod", "spread", "-o", "json").stdout)["spec"]
    (constraint,) = spec["topologySpreadConstraints"]
    assert constraint["matchLabelKeys"] == ["pod-template-hash"]
    assert constraint["labelSelector"] == {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "pod-template-hash", "operator": "In", "values": ["abc123"]}],
    }
    (term,) = spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["labelSelector"] == {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "pod-template-hash", "operator": "NotIn", "values": ["abc123"]}],
    }


def test_a_zero_max_skew_gets_kube_apiservers_error(server: UpServer) -> None:
    _, stderr = _create(server, "skewed", SKEWED_POD, ok=False)
    assert stderr == (
        'The Pod "skewed" is invalid: spec.topologySpreadConstraints[0].maxSkew: '
        "Invalid value: 0: must be greater than zero"
    )


def test_a_key_both_matched_and_selected_and_a_repeated_pair_are_rejected(server: UpServer) -> None:
    _, stderr = _create(server, "twice", KEY_TWICE_POD, ok=False)
    assert stderr == (
        'The Pod "twice" is invalid: \n'
        "* spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: "
        'Duplicate value: "{topology.kubernetes.io/zone, DoNotSchedule}"\n'
        '* spec.topologySpreadConstraints[0][0]: Invalid value: "app": '
        "exists in both matchLabelKeys and labelSelector"
    )
    assert server.kubectl("get", "pod", "twice", ok=False).returncode != 0
