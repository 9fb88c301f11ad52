"""`kubetaint simulate FILE -o FORMAT` as users run it: the console program in a subprocess,
reading the zone-outage scenario of `bench_sim.py` from a JSON file, its output written to a
file. Prints the wall time and peak RSS of each output format; for `html`, the page's size and how
long headless Chromium takes to open it until its table is filled, in real time
(`chromium_open.py`).

    PYTHONPATH=src .venv/bin/python benchmarks/bench_sim_cli.py [--nodes 5000 --pods 150000]
        [--output table json yaml html] [--phases]

With --phases the console program also reports, on its standard error, where its time went:
`import` (the simulator's modules), `load` (reading and checking the scenario, loading its
objects, starting the control plane: the `Simulation` made), `run` (the simulated hour and the
timeline document), `write` (the output written), each as wall and CPU seconds.

With --pending the scenario also ends with pods pending of three kinds: a ReplicaSet pinned to
the failed zone (its replacements refused by the zone's untolerated `unreachable` taint, the
other nodes by node affinity), pods asking for more cpu than any node has (Insufficient cpu) and
pods selecting a label no node carries (node affinity). The HTML report explains each group plugin
by plugin; `--explain` then also times `kubetaint explain` of a snapshot of the final cluster
(the final nodes and pods, written by `-o json`) with each of its output formats, and
`--attempts` counts each kind's scheduling attempts and the events that requeued its pods.

Target: 5,000 nodes / 150,000 pods in ≤ 30 s wall and ≤ 2 GB peak RSS for every format; the
report under ~2 MB and open in under 2 s; explaining the pending pods ≤ 2 s of the run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_sim import scenario
from chromium_open import open_page

KUBETAINT = [sys.executable, "-m", "kubetaint"]

#: `kubetaint ARGS` with its phases timed (hooks on the Simulation class and on the command's
#: exit), reported on standard error as one `phases:` line.
PHASES = """
import os, sys, time
marks = [("start", time.perf_counter(), time.process_time())]
def mark(name):
    marks.append((name, time.perf_counter(), time.process_time()))
import kubetaint.sim.simulation as simulation
import kubetaint.cli.exiting as exiting
import kubetaint.sim.pending_explain as pending_explain
mark("import")
explained, explaining = [], pending_explain.explain_pending
def explain_pending(*args, **kwargs):
    started = time.perf_counter(), time.process_time()
    try:
        return explaining(*args, **kwargs)
    finally:
        explained.append((time.perf_counter() - started[0], time.process_time() - started[1]))
pending_explain.explain_pending = explain_pending
made, ran, leave = simulation.Simulation.__init__, simulation.Simulation.run, exiting.exit_now
def init(self, *args, **kwargs):
    made(self, *args, **kwargs)
    mark("load")
def run(self, *args, **kwargs):
    doc = ran(self, *args, **kwargs)
    mark("run")
    return doc
def exit_now(code):
    mark("write")
    sys.stderr.write("phases: " + " ".join(
        f"{name} {t - marks[i][1]:.2f}s ({cpu - marks[i][2]:.2f}s CPU)"
        for i, (name, t, cpu) in enumerate(marks[1:]))
        + "".join(f" (of which explain {t:.2f}s ({cpu:.2f}s CPU))" for t, cpu in explained) + "\\n")
    leave(code)
simulation.Simulation.__init__, simulation.Simulation.run, exiting.exit_now = init, run, exit_now
if os.environ.get("BENCH_ATTEMPTS"):  # (--attempts) the pending pods' cycles and requeues, by kind
    import collections
    import kubetaint.scheduler.queue as queue
    import kubetaint.scheduler.scheduler as scheduler
    KINDS = ("pinned", "huge", "ssd")
    tried, requeued = collections.Counter(), collections.Counter()
    cycle, requeue = scheduler.Scheduler._cycle, queue.SchedulingQueue._requeue
    def counted_cycle(self, qpi):
        kind = qpi.pod_info.name.split("-")[0]
        if kind in KINDS:
            tried[kind] += 1
        return cycle(self, qpi)
    def counted_requeue(self, qpi, label):
        kind = qpi.pod_info.name.split("-")[0]
        if kind in KINDS:
            requeued[(kind, label)] += 1
        return requeue(self, qpi, label)
    scheduler.Scheduler._cycle, queue.SchedulingQueue._requeue = counted_cycle, counted_requeue
    leave_counting = exiting.exit_now
    def exit_counting(code):
        for kind in KINDS:
            causes = ", ".join(f"{n} {label}" for (k, label), n in sorted(requeued.items()) if k == kind)
            sys.stderr.write(f"attempts: {kind} {tried[kind]} (requeued: {causes or 'never'})\\n")
        leave_counting(code)
    exiting.exit_now = exit_counting
from kubetaint.cli.main import main
sys.argv = ["kubetaint", *sys.argv[1:]]
main()
"""


#: Pods per kind of pending pod (--pending).
PENDING_PODS = 30


def with_pending(doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` (a `bench_sim` scenario) with pods that are still pending at its end, of three kinds."""
    pinned = {"app": "pinned"}
    small = {"containers": [{"name": "app", "image": "app", "resources": {"requests": {"cpu": "100m"}}}]}
    extra: list[dict[str, Any]] = [
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "pinned"},
            "spec": {
                "replicas": PENDING_PODS,
                "selector": {"matchLabels": pinned},
                "template": {
                    "metadata": {"labels": pinned},
                    "spec": {**small, "nodeSelector": {"topology.kubernetes.io/zone": "zone-a"}},
                },
            },
        }
    ]
    for i in range(PENDING_PODS):
        extra.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"huge-{i}"},
                "spec": {
                    "containers": [{"name": "a", "image": "a", "resources": {"requests": {"cpu": "1000"}}}]
                },
            }
        )
        extra.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"ssd-{i}"},
                "spec": {**small, "nodeSelector": {"disktype": "ssd"}},
            }
        )
    doc["spec"]["objects"] = [*doc["spec"]["objects"], *extra]
    return doc


def run_cli(
    args: list[str], out: Path, *, phases: bool = False, attempts: bool = False
) -> tuple[float, float, float, int, str]:
    """(wall seconds, CPU seconds, peak RSS in MB, exit code, the `phases:` line and the
    `attempts:` lines or "") of `kubetaint ARGS > out`. On a busy machine the CPU time is the
    steadier figure."""
    command = [sys.executable, "-c", PHASES, *args] if phases or attempts else [*KUBETAINT, *args]
    env = {**os.environ, "BENCH_ATTEMPTS": "1"} if attempts else None
    started = time.perf_counter()
    with out.open("wb") as sink, tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(command, stdout=sink, stderr=errors, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        errors.seek(0)
        lines = errors.read().decode(errors="replace").splitlines()
    cpu = usage.ru_utime + usage.ru_stime
    found = [line for line in lines if line.startswith("phases: ")][-1:]
    found += [line for line in lines if line.startswith("attempts: ")]
    return wall, cpu, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), "\n  ".join(found)


def open_in_chromium(page: Path) -> int | None:
    """Real milliseconds from navigation until the report's table is filled (`chromium_open`:
    the DevTools protocol, no virtual time, under which the page's own figure is too small)."""
    opened = open_page(page)
    if opened is None:
        return None
    if opened.errors:
        raise SystemExit(f"the report logged script errors: {opened.errors}")
    return round(opened.wall_ms)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150000)
    parser.add_argument("--until", default="1h")
    parser.add_argument("--output", nargs="+", default=["table", "json", "yaml", "html"])
    parser.add_argument("--phases", action="store_true", help="report import, load, run and write times")
    parser.add_argument("--pending", action="store_true", help="end with pending pods of three kinds")
    parser.add_argument("--explain", action="store_true", help="also time `kubetaint explain` of a snapshot")
    parser.add_argument(
        "--attempts",
        action="store_true",
        help="with --pending: count each kind's scheduling attempts and what requeued its pods",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-sim-cli-") as folder:
        source = Path(folder) / "scenario.json"
        doc = scenario(args.nodes, args.pods, args.until)
        source.write_text(json.dumps(with_pending(doc) if args.pending else doc, indent=2))
        for output in args.output:
            out = Path(folder) / f"out.{output}"
            wall, cpu, rss, code, phases = run_cli(
                ["simulate", str(source), "-o", output], out, phases=args.phases, attempts=args.attempts
            )
            line = (
                f"nodes={args.nodes} pods={args.pods} -o {output}: {wall:.1f} s wall ({cpu:.1f} s CPU), "
                f"peak RSS {rss:.0f} MB, exit {code}, output {out.stat().st_size / 1e6:.1f} MB"
            )
            if output == "html":
                opened = open_in_chromium(out)
                line += f", opens in {opened} ms" if opened is not None else ", (no chromium to open it)"
            print(line + (f"\n  {phases}" if phases else ""), flush=True)
            if output == "json" and args.explain:
                explain_snapshot(out, Path(folder))


def explain_snapshot(timeline: Path, folder: Path) -> None:
    """`kubetaint explain` of the run's final nodes and pods (a saved List, as a snapshot holds
    them), in each of its output formats."""
    final = json.loads(timeline.read_text()).get("final") or {}
    objects = [{"kind": "Node", **n} for n in final.get("nodes") or []]
    objects += [{"kind": "Pod", **p} for p in final.get("pods") or []]
    source = folder / "final.json"
    source.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    for output in ("table", "json"):
        out = folder / f"explain.{output}"
        wall, cpu, rss, code, _ = run_cli(["explain", str(source), "-o", output], out)
        print(
            f"  explain of the final cluster ({len(objects)} objects) -o {output}: {wall:.1f} s wall "
            f"({cpu:.1f} s CPU), peak RSS {rss:.0f} MB, exit {code}, output "
            f"{out.stat().st_size / 1e6:.1f} MB",
            flush=True,
        )


if __name__ == "__main__":
    main()
