"""Every memo's hits and misses over one run of the simulator benchmark's scenario (the debug view
of `kubetaint.speed.memo`): which memos answer, and how often.

    PYTHONPATH=src python benchmarks/memo_stats.py                    # 300 nodes / 6,000 pods
    PYTHONPATH=src python benchmarks/memo_stats.py --nodes 1000 --pods 30000 --until 10m
    KUBETAINT_REFERENCE=1 PYTHONPATH=src python benchmarks/memo_stats.py   # reference mode: no hits

Memos made for one run (a load's decode memo, a kubelet's request memo) are counted while they
live: the table is taken before the simulation is dropped.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_sim import scenario
from kubetaint.sim.api import Simulation
from kubetaint.speed.memo import counting, format_memo_table
from kubetaint.speed.reference import reference_mode


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=300)
    parser.add_argument("--pods", type=int, default=6000)
    parser.add_argument("--until", default="10m")
    args = parser.parse_args()
    counting(True)
    sim = Simulation(scenario(args.nodes, args.pods, args.until))
    sim.run()
    mode = "reference mode" if reference_mode() else "default mode"
    print(f"nodes={args.nodes} pods={args.pods} until={args.until}, {mode}:")
    for line in format_memo_table():
        print(line)
    del sim


if __name__ == "__main__":
    main()
