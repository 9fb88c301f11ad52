"""StatefulSets, Jobs and CronJobs on `kubetaint up` with the real kubectl: a StatefulSet's pods
come up in order as `<set>-<n>` and come back under their name after a NoExecute eviction; a
Job's pods run to completion on the hollow runtime and `kubectl wait --for=condition=complete`
returns; on the virtual clock, advancing it through the clock API runs a CronJob's schedule."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from .harness import KUBECTL, UpServer, eventually

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

STATEFUL_SET = """apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: "postgres:16"}]
"""

JOB = """apiVersion: batch/v1
kind: Job
metadata: {name: pi}
spec:
  completions: 3
  parallelism: 2
  template:
    metadata:
      annotations: {kubetaint.io/run-seconds: "1"}
    spec:
      restartPolicy: Never
      containers: [{name: pi, image: perl}]
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpServer]:
    up = UpServer(tmp_path_factory.mktemp("up-workloads"), "--nodes", "2").start()
    yield up
    up.kill()


def _apply(server: UpServer, name: str, text: str) -> str:
    path = server.workdir / name
    path.write_text(text)
    return server.kubectl("apply", "-f", str(path)).stdout.strip()


def _pods(server: UpServer, selector: str) -> list[list[str]]:
    out = server.kubectl("get", "pods", "-l", selector, "--no-headers").stdout
    return [line.split() for line in out.splitlines() if line.strip()]


def test_a_stateful_sets_pods_come_up_in_order(server: UpServer) -> None:
    assert _apply(server, "sts.yaml", STATEFUL_SET) == "statefulset.apps/db created"

    def all_running() -> list[list[str]] | None:
        rows = _pods(server, "app=db")
        return rows if len(rows) == 3 and all(r[2] == "Running" for r in rows) else None

    rows = eventually(all_running, "three running db pods")
    assert [r[0] for r in rows] == ["db-0", "db-1", "db-2"]
    messages = server.kubectl(
        "get",
        "events",
        "--field-selector",
        "involvedObject.kind=StatefulSet,involvedObject.name=db,reason=SuccessfulCreate",
        "--sort-by=.metadata.creationTimestamp",
        "-o",
        "jsonpath={range .items[*]}{.message}{'\\n'}{end}",
    ).stdout.splitlines()
    assert messages == [f"create Pod db-{i} in StatefulSet db successful" for i in range(3)]
    ready = server.kubectl("get", "sts", "db", "--no-headers").stdout.split()
    assert ready[:2] == ["db", "3/3"]


def test_an_evicted_stateful_pod_comes_back_under_its_name(server: UpServer) -> None:
    eventually(lambda: len(_pods(server, "app=db")) == 3 or None, "the db pods")
    node = server.kubectl("get", "pod", "db-1", "-o", "jsonpath={.spec.nodeName}").stdout
    uid = server.kubectl("get", "pod", "db-1", "-o", "jsonpath={.metadata.uid}").stdout
    server.kubectl("taint", "nodes", node, "maintenance=now:NoExecute")
    try:

        def replaced() -> bool | None:
            result = server.kubectl(
                "get",
                "pod",
                "db-1",
                "-o",
                "jsonpath={.metadata.uid} {.spec.nodeName} {.status.phase}",
                ok=False,
            )
            fields = result.stdout.split()
            return (
                len(fields) == 3 and fields[0] != uid and fields[1] != node and fields[2] == "Running"
            ) or None

        eventually(replaced, "db-1 back on the other node")
    finally:
        server.kubectl("taint", "nodes", node, "maintenance=now:NoExecute-")


def test_a_job_completes_on_the_hollow_runtime(server: UpServer) -> None:
    assert _apply(server, "job.yaml", JOB) == "job.batch/pi created"
    waited = server.kubectl("wait", "--for=condition=complete", "job/pi", "--timeout=30s")
    assert waited.stdout.strip() == "job.batch/pi condition met"
    row = server.kubectl("get", "job", "pi", "--no-headers").stdout.split()
    assert row[:3] == ["pi", "Complete", "3/3"]
    rows = _pods(server, "batch.kubernetes.io/job-name=pi")
    assert len(rows) == 3 and {r[2] for r in rows} == {"Completed"}
    conditions = server.kubectl(
        "get", "job", "pi", "-o", "jsonpath={range .status.conditions[*]}{.type}={.reason}{'\\n'}{end}"
    ).stdout.splitlines()
    assert conditions == ["SuccessCriteriaMet=CompletionsReached", "Complete=CompletionsReached"]


CRON_JOB = """apiVersion: batch/v1
kind: CronJob
metadata: {name: report}
spec:
  schedule: "*/10 * * * *"
  successfulJobsHistoryLimit: 2
  jobTemplate:
    spec:
      template:
        metadata:
          annotations: {kubetaint.io/run-seconds: "120"}
        spec:
          restartPolicy: OnFailure
          containers: [{name: report, image: busybox}]
"""


def _advance(server: UpServer, seconds: float) -> None:
    with server.client() as client:
        response = client.post("/kubetaint/v1/clock/advance", json={"seconds": seconds})
    assert response.status_code == 200, response.text


def test_advancing_the_virtual_clock_runs_a_cron_jobs_schedule(virtual_server: UpServer) -> None:
    server = virtual_server
    assert _apply(server, "cronjob.yaml", CRON_JOB) == "cronjob.batch/report created"
    now = server.get("/kubetaint/v1/clock").json()["now"]
    minute = int(now[14:16])
    _advance(server, (10 - minute % 10) * 60 + 1)  # just past the next ten-minute mark

    def jobs() -> list[list[str]] | None:
        out = server.kubectl("get", "jobs", "--no-headers").stdout
        rows = [line.split() for line in out.splitlines() if line.strip()]
        return rows or None

    (row,) = eventually(jobs, "the first job")
    assert row[0].startswith("report-") and row[1] == "Running"
    _advance(server, 121)
    eventually(lambda: (jobs() or [[]])[0][1:3] == ["Complete", "1/1"] or None, "the first job to complete")
    _advance(server, 3 * 600)
    names = eventually(lambda: len(jobs() or []) == 2 and jobs(), "the history limit to keep two jobs")
    assert all(r[0].startswith("report-") for r in names)
    last = server.kubectl("get", "cronjob", "report", "-o", "jsonpath={.status.lastScheduleTime}").stdout
    assert last.endswith("0:00Z")
    created = server.kubectl(
        "get",
        "events",
        "--field-selector",
        "involvedObject.kind=CronJob,involvedObject.name=report,reason=SuccessfulCreate",
        "-o",
        "jsonpath={range .items[*]}{.message}{'\\n'}{end}",
    ).stdout.splitlines()
    assert len(created) == 4 and all(line.startswith("Created job report-") for line in created)


WEB = (
    STATEFUL_SET.replace("name: db", "name: web")
    .replace("app: db", "app: web")
    .replace("replicas: 3", "replicas: 2")
)

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  replicas: 1
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers: [{name: app, image: nginx}]
"""


def test_deleting_a_stateful_set_deletes_its_pods(server: UpServer) -> None:
    assert _apply(server, "web.yaml", WEB) == "statefulset.apps/web created"
    eventually(lambda: len(_pods(server, "app=web")) == 2 or None, "two web pods")
    assert server.kubectl("delete", "statefulset", "web").stdout.strip() == 'statefulset.apps "web" deleted'
    eventually(lambda: _pods(server, "app=web") == [] or None, "the web pods collected")


def test_a_config_map_owned_by_a_deployment_goes_with_it(server: UpServer) -> None:
    assert _apply(server, "app.yaml", DEPLOYMENT) == "deployment.apps/app created"
    uid = server.kubectl("get", "deployment", "app", "-o", "jsonpath={.metadata.uid}").stdout
    owned = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n  ownerReferences:\n"
        f"  - {{apiVersion: apps/v1, kind: Deployment, name: app, uid: {uid}}}\ndata: {{k: v}}\n"
    )
    assert _apply(server, "cm.yaml", owned) == "configmap/app-config created"
    server.kubectl("delete", "deployment", "app")

    def collected() -> bool | None:
        result = server.kubectl("get", "configmap", "app-config", ok=False)
        return ("NotFound" in result.stderr) or None

    eventually(collected, "the config map collected")


def _running(server: UpServer, selector: str, count: int) -> list[list[str]] | None:
    rows = _pods(server, selector)
    return rows if len(rows) == count and all(r[2] == "Running" for r in rows) else None


def test_whatif_on_a_snapshot_has_the_stateful_set_recreate_its_evicted_pod(server: UpServer) -> None:
    rows = eventually(lambda: _running(server, "app=db", 3), "three running db pods")
    assert [r[0] for r in rows] == ["db-0", "db-1", "db-2"]
    node = server.kubectl("get", "pod", "db-1", "-o", "jsonpath={.spec.nodeName}").stdout
    snap = server.workdir / "snap.json"
    result = server.kubetaint("snapshot", "--kubeconfig", str(server.kubeconfig), "-o", str(snap))
    assert result.returncode == 0, result.stderr
    kinds = [o["kind"] for o in json.loads(snap.read_text())["spec"]["objects"]]
    assert kinds.count("StatefulSet") == 1
    result = server.kubetaint(
        "whatif", "taint", node, "maintenance=true:NoExecute", "-f", str(snap), "--for", "5m", "-o", "json"
    )
    assert result.returncode == 0, result.stderr
    evicted = {e["name"]: e for e in json.loads(result.stdout)["evictions"]}
    db = {name: e for name, e in evicted.items() if name.startswith("db-")}
    wide = server.kubectl("get", "pods", "-l", "app=db", "-o", "wide", "--no-headers").stdout
    on_node = {line.split()[0] for line in wide.splitlines() if line.split()[6:7] == [node]}
    assert set(db) == on_node
    entry = db["db-1"]
    assert entry["owner"] == "StatefulSet/db"
    assert entry["replacement"]["name"] == "db-1" and entry["replacement"]["node"] not in (None, node)
