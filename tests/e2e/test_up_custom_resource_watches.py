"""Watches of custom resources end when kube-apiserver would tear down their CRD's storage
(customresource_handler.go: the CRD deleted, or its spec changed, such as a version no longer
served), on `kubetaint up` with the memory, SQLite and etcd stores: the official Python client's
CustomObjectsApi watch sees the custom resource's DELETED event, then the end of the stream, and
watching again is a 404; `kubectl get -w` returns; a watch of another CRD goes on."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .harness import KUBECTL, UpServer, eventually
from .test_up_custom_resources import CRD, CRONTAB, ETCD, _apply, established

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

GROUP, VERSION, PLURAL = "stable.example.com", "v1", "crontabs"
#: The CronTab CRD with a second served version, v1beta1.
TWO_VERSIONS = CRD.replace(
    "  versions:\n  - name: v1\n",
    "  versions:\n  - name: v1beta1\n    served: true\n    storage: false\n"
    "    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n"
    "  - name: v1\n",
)
OTHER_CRD = CRD.replace("crontabs.stable.example.com", "widgets.stable.example.com").replace(
    "plural: crontabs, singular: crontab, kind: CronTab, shortNames: [ct]", "plural: widgets, kind: Widget"
)


@pytest.fixture(
    params=[
        pytest.param("memory", id="on the memory store"),
        pytest.param("sqlite", id="on SQLite"),
        pytest.param(
            "etcd", id="on etcd", marks=pytest.mark.skipif(ETCD.ETCD_BINARY is None, reason=ETCD.SKIP_REASON)
        ),
    ]
)
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[UpServer]:
    etcd = None
    store = request.param
    if store == "etcd":
        (tmp_path / "etcd").mkdir()
        etcd = ETCD.EtcdServer(tmp_path / "etcd")
        store = "etcd://" + etcd.url.removeprefix("http://")
    try:
        up = UpServer(tmp_path, "--nodes", "0", "--store", store).start()
        try:
            yield up
        finally:
            up.kill()
    finally:
        if etcd is not None:
            etcd.stop()


def _install(server: UpServer, crd: str = CRD) -> None:
    _apply(server, crd)
    eventually(lambda: established(server), "the CRD to be established")


class PythonWatch:
    """The official client's watch of CronTabs in a thread, recording (type, name) events."""

    def __init__(self, server: UpServer, version: str = VERSION, plural: str = PLURAL) -> None:
        from kubernetes import client, config, watch

        self.api_client = config.new_client_from_config(config_file=str(server.kubeconfig))
        self.api = client.CustomObjectsApi(self.api_client)
        self.version, self.plural = version, plural
        self.events: list[tuple[str, str]] = []
        self.ended_at: float | None = None
        self.error: BaseException | None = None
        listed = self.api.list_namespaced_custom_object(GROUP, version, "default", plural)
        self._watch = watch.Watch()
        self._rv = listed["metadata"]["resourceVersion"]
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for event in self._watch.stream(
                self.api.list_namespaced_custom_object,
                GROUP,
                self.version,
                "default",
                self.plural,
                resource_version=self._rv,
                timeout_seconds=120,
            ):
                self.events.append((event["type"], event["object"]["metadata"]["name"]))
        except BaseException as exc:  # recorded for the test to report
            self.error = exc
        self.ended_at = time.monotonic()

    def join(self, timeout: float) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def close(self) -> None:
        self._watch.stop()
        self.api_client.close()


def _delete_crd(server: UpServer, name: str = "crontabs.stable.example.com") -> float:
    server.kubectl("delete", "crd", name)
    return time.monotonic()


def test_a_python_client_watch_sees_the_deletions_then_ends_and_watching_again_is_404(
    server: UpServer,
) -> None:
    from kubernetes import client

    _install(server)
    _apply(server, CRONTAB.replace("NS", "default"))
    crontabs = PythonWatch(server)
    try:
        assert server.kubectl("get", "ct", "-o", "name").stdout.strip()
        time.sleep(0.5)  # the watch is established
        deleted = _delete_crd(server)
        assert crontabs.join(30), "the watch went on after its CRD was deleted"
        assert crontabs.error is None, crontabs.error
        assert crontabs.events == [("DELETED", "my-cron")]
        assert crontabs.ended_at is not None and crontabs.ended_at - deleted < 15
        with pytest.raises(client.ApiException) as again:
            crontabs.api.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, watch=True)
        assert again.value.status == 404
    finally:
        crontabs.close()


def test_kubectl_get_watch_returns_when_the_crd_is_deleted(server: UpServer) -> None:
    _install(server)
    _apply(server, CRONTAB.replace("NS", "default"))
    assert KUBECTL is not None
    watcher = subprocess.Popen(
        [
            KUBECTL,
            "get",
            "crontabs",
            "--watch",
            "--output-watch-events",
            "-o",
            'jsonpath={.type} {.object.metadata.name}{"\\n"}',
        ],
        env=server.env,
        cwd=server.workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(2)  # kubectl lists, then watches
        _delete_crd(server)
        out, err = watcher.communicate(timeout=30)
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.communicate()
    assert out.splitlines() == ["ADDED my-cron", "DELETED my-cron"], err
    assert watcher.returncode == 0, err
    missing = server.kubectl("get", "crontabs", ok=False)
    assert missing.returncode == 1
    # (kubectl's discovery cache still names crontabs: the list itself is the 404)
    assert missing.stderr.strip() == (
        'Error from server (NotFound): Unable to list "stable.example.com/v1, Resource=crontabs": '
        "the server could not find the requested resource"
    )


def test_a_version_no_longer_served_ends_the_crds_watches_and_is_404(server: UpServer) -> None:
    from kubernetes import client

    _install(server, TWO_VERSIONS)
    _install_other = _apply(server, OTHER_CRD)
    assert _install_other.returncode == 0
    eventually(
        lambda: server.get(f"/apis/{GROUP}/{VERSION}/namespaces/default/widgets").status_code == 200 or None,
        "the Widget CRD to be served",
    )
    beta = PythonWatch(server, "v1beta1")
    stable = PythonWatch(server, VERSION)
    widgets = PythonWatch(server, VERSION, "widgets")
    try:
        time.sleep(0.5)
        server.kubectl(
            "patch",
            "crd",
            "crontabs.stable.example.com",
            "--type=json",
            "-p",
            '[{"op": "replace", "path": "/spec/versions/0/served", "value": false}]',
        )
        assert beta.join(30) and stable.join(30), "the watches went on after the CRD's storage changed"
        assert beta.error is None and stable.error is None
        assert not widgets.join(2), "the watch of another CRD ended"
        with pytest.raises(client.ApiException) as gone:
            beta.api.list_namespaced_custom_object(GROUP, "v1beta1", "default", PLURAL)
        assert gone.value.status == 404
        served: Any = stable.api.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL)
        assert served["items"] == []
    finally:
        for watch in (beta, stable, widgets):
            watch.close()
