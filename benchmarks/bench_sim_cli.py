"""`kubetaint simulate FILE -o FORMAT` as users run it: the console program in a subprocess,
reading the zone-outage scenario of `bench_sim.py` from a JSON file, its output written to a
file. Prints the wall time and peak RSS of each output format; for `html`, the page's size and how
long headless Chromium takes to open it (until its table is filled).

    PYTHONPATH=src .venv/bin/python benchmarks/bench_sim_cli.py [--nodes 5000 --pods 150000]
        [--output table json html]

Target: 5,000 nodes / 150,000 pods in ≤ 30 s wall and ≤ 2 GB peak RSS for every format; the
report under ~2 MB and open in under 2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_sim import scenario

KUBETAINT = [sys.executable, "-m", "kubetaint"]


def run_cli(args: list[str], out: Path) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak RSS in MB, exit code) of `kubetaint ARGS > out`. On a
    busy machine the CPU time is the steadier figure."""
    started = time.perf_counter()
    with out.open("wb") as sink:
        process = subprocess.Popen([*KUBETAINT, *args], stdout=sink, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    assert process.stderr is not None
    process.stderr.close()
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def open_in_chromium(page: Path) -> int | None:
    """Milliseconds from navigation until the report's table is filled (its `data-ready-ms`)."""
    chromium = shutil.which("chromium")
    if chromium is None:
        return None
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--no-first-run",
                f"--user-data-dir={profile}",
                "--virtual-time-budget=60000",
                "--dump-dom",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
    found = re.search(r'data-ready-ms="(\d+)"', dom)
    return int(found.group(1)) if found else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150000)
    parser.add_argument("--until", default="1h")
    parser.add_argument("--output", nargs="+", default=["table", "json", "html"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-sim-cli-") as folder:
        source = Path(folder) / "scenario.json"
        source.write_text(json.dumps(scenario(args.nodes, args.pods, args.until), indent=2))
        for output in args.output:
            out = Path(folder) / f"out.{output}"
            wall, cpu, rss, code = run_cli(["simulate", str(source), "-o", output], out)
            line = (
                f"nodes={args.nodes} pods={args.pods} -o {output}: {wall:.1f} s wall ({cpu:.1f} s CPU), "
                f"peak RSS {rss:.0f} MB, exit {code}, output {out.stat().st_size / 1e6:.1f} MB"
            )
            if output == "html":
                opened = open_in_chromium(out)
                line += f", opens in {opened} ms" if opened is not None else ", (no chromium to open it)"
            print(line, flush=True)


if __name__ == "__main__":
    main()
