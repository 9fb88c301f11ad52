"""`kubetaint COMMAND --help` as users run it: the console program's wall time, several runs of
every command and subcommand, interleaved. Prints the median and the slowest run of each, and the
median CPU time (user and system), which a loaded machine inflates less than wall time.

    .venv/bin/python benchmarks/bench_help.py [--runs 7] [--program .venv/bin/kubetaint]

Target: every `--help` under 0.3 s (tests/cli/test_help.py holds what keeps it so: no help
imports what its command runs).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = [
    [],
    ["validate"],
    ["explain"],
    ["simulate"],
    ["whatif"],
    ["snapshot"],
    ["up"],
    ["clock"],
    ["clock", "now"],
    ["clock", "advance"],
    ["scheduler"],
    ["controllers"],
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--program", default=str(Path(sys.executable).parent / "kubetaint"))
    args = parser.parse_args()
    times: dict[str, list[float]] = {" ".join(c): [] for c in COMMANDS}
    cpu: dict[str, list[float]] = {" ".join(c): [] for c in COMMANDS}
    for _ in range(args.runs):
        for command in COMMANDS:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run([args.program, *command, "--help"], stdout=subprocess.DEVNULL, check=True)
            times[" ".join(command)].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            cpu[" ".join(command)].append(used)
    for name, runs in times.items():
        label = f"kubetaint {name} --help".replace("  ", " ")
        print(
            f"{label:36} median {statistics.median(runs):.3f} s, slowest {max(runs):.3f} s, "
            f"CPU {statistics.median(cpu[name]):.3f} s"
        )


if __name__ == "__main__":
    main()
