"""A writer for the crash test: acknowledged writes to a SQLite store, each printed (flushed) as
`<op> <name> <resourceVersion> [<counter>]` only after the store returned. Runs until killed."""

from __future__ import annotations

import sys

from kubetaint.clock import RealClock
from kubetaint.store.sqlite import SqliteStore


def main(data_dir: str, round_name: str) -> None:
    store = SqliteStore(data_dir, RealClock())
    counter = store.get("configmaps", "default", "counter")
    print("ready", flush=True)
    i = 0
    while True:
        created = store.create(
            "pods",
            {
                "metadata": {"name": f"{round_name}-{i}", "namespace": "default"},
                "spec": {"nodeName": f"n{i % 7}", "containers": [{"name": "c", "image": "pause"}]},
            },
        )
        print("create", created["metadata"]["name"], created["metadata"]["resourceVersion"], flush=True)
        if i % 3 == 0:
            value = int(counter["data"]["n"]) + 1
            counter = store.update("configmaps", {**counter, "data": {"n": str(value)}})
            print("update counter", counter["metadata"]["resourceVersion"], value, flush=True)
        i += 1


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
