"""StatefulSets, Jobs and CronJobs in a scenario: loaded as kube-apiserver stores them and run by
their controllers on the virtual clock; a NoExecute taint brings a StatefulSet's evicted pods back
under their names on the other node."""

from __future__ import annotations

from kubetaint.sim.api import Simulation

SCENARIO = """apiVersion: kubetaint.dev/v1alpha1
kind: Scenario
metadata: {name: workloads}
spec:
  until: 30m
  nodeGroups:
    - {name: general, count: 2}
  objects:
    - apiVersion: apps/v1
      kind: StatefulSet
      metadata: {name: db}
      spec:
        replicas: 3
        serviceName: db
        selector: {matchLabels: {app: db}}
        template:
          metadata: {labels: {app: db}}
          spec:
            containers: [{name: db, image: postgres}]
    - apiVersion: batch/v1
      kind: Job
      metadata: {name: migrate}
      spec:
        completions: 2
        template:
          metadata: {annotations: {kubetaint.io/run-seconds: "120"}}
          spec:
            restartPolicy: Never
            containers: [{name: m, image: busybox}]
    - apiVersion: batch/v1
      kind: CronJob
      metadata: {name: report}
      spec:
        schedule: "*/10 * * * *"
        jobTemplate:
          spec:
            template:
              metadata: {annotations: {kubetaint.io/run-seconds: "60"}}
              spec:
                restartPolicy: OnFailure
                containers: [{name: r, image: busybox}]
  events:
    - {at: 5m, kubectl: taint nodes general-0 maintenance=now:NoExecute}
"""


def test_a_scenarios_workloads_run_and_their_evicted_pods_come_back() -> None:
    sim = Simulation(SCENARIO)
    sim.run()
    store = sim.cluster.store
    pods = {p["metadata"]["name"]: p for p in store.list("pods", namespace="default").items}
    for name in ("db-0", "db-1", "db-2"):
        assert pods[name]["spec"]["nodeName"] == "general-1"
        assert pods[name]["status"]["phase"] == "Running"
    migrate = store.get("jobs.batch", "default", "migrate")
    assert migrate["status"]["succeeded"] == 2
    assert [c["type"] for c in migrate["status"]["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    assert (
        migrate["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"]
        == migrate["metadata"]["uid"]
    )
    jobs = sorted(j["metadata"]["name"] for j in store.list("jobs.batch", namespace="default").items)
    assert jobs == ["migrate", "report-29453770", "report-29453780"]
    report = store.get("cronjobs.batch", "default", "report")
    assert report["status"]["lastScheduleTime"] == "2026-01-01T00:20:00Z"
