"""An acknowledged write survives kill -9: a writer process is killed with SIGKILL in the middle
of a stream of writes, and after every restart each write it acknowledged is there, unchanged,
and the data-dir lock the dead process held is free again."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

from kubetaint.clock import VirtualClock
from kubetaint.store.sqlite import SqliteStore

WRITER = Path(__file__).with_name("crash_writer.py")
ROUNDS = 4


def run_and_kill(data_dir: Path, round_name: str, acknowledged_before_kill: int) -> list[list[str]]:
    """Start a writer, SIGKILL it after that many acknowledgements, return every line it printed."""
    writer = subprocess.Popen(
        [sys.executable, str(WRITER), str(data_dir), round_name],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None and writer.stderr is not None
    lines: list[list[str]] = []
    try:
        assert writer.stdout.readline().strip() == "ready", writer.stderr.read()
        while len(lines) < acknowledged_before_kill:
            line = writer.stdout.readline()
            assert line, f"writer died: {writer.stderr.read()}"
            lines.append(line.split())
        os.kill(writer.pid, signal.SIGKILL)
        lines.extend(line.split() for line in writer.stdout.read().splitlines() if line.strip())
    finally:
        if writer.poll() is None:
            os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        writer.stdout.close()
        writer.stderr.close()
    assert writer.returncode == -signal.SIGKILL
    return lines


def test_every_acknowledged_write_survives_kill_9(tmp_path: Path) -> None:
    setup = SqliteStore(tmp_path, VirtualClock())
    setup.create("configmaps", {"metadata": {"name": "counter", "namespace": "default"}, "data": {"n": "0"}})
    setup.close()
    rng = random.Random(7)
    acknowledged: dict[str, int] = {}
    counter = 0
    for round_index in range(ROUNDS):
        lines = run_and_kill(tmp_path, f"r{round_index}", rng.randint(40, 400))
        for line in lines:
            if line[0] == "create":
                acknowledged[line[1]] = int(line[2])
            else:
                counter = int(line[3])
        store = SqliteStore(tmp_path, VirtualClock())  # the killed writer's lock is gone
        pods = {
            p["metadata"]["name"]: int(p["metadata"]["resourceVersion"]) for p in store.list("pods").items
        }
        missing = {name for name in acknowledged if name not in pods}
        assert not missing, f"round {round_index}: acknowledged writes lost: {sorted(missing)[:5]}"
        assert all(pods[name] == version for name, version in acknowledged.items())
        stored_counter = int(store.get("configmaps", "default", "counter")["data"]["n"])
        assert stored_counter in (counter, counter + 1)  # the write in flight may or may not have landed
        assert store.current_resource_version() >= max(acknowledged.values())
        store.close()
