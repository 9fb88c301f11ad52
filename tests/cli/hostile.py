"""A corpus of hostile inputs: hand-written files (resource bombs, wrong types, bad bytes) and
seeded mutations of the examples (wrong types, unknown and misspelt keys, truncations)."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEAD = "apiVersion: kubetaint.dev/v1alpha1\nkind: Scenario\nmetadata: {name: hostile}\n"
POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n"


def _alias_bomb() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def _scenario_bomb() -> str:
    """An alias bomb inside a scenario's objects (labels built of aliases)."""
    return (
        HEAD
        + "spec:\n  objects:\n  - &o {apiVersion: v1, kind: Namespace, metadata: {name: n}}\n"
        + _alias_bomb().replace("\n", "\n  # ")
    )


def hand_written() -> Iterator[tuple[str, bytes]]:
    """(id, content) of inputs written to defeat a reader."""
    yield "an empty file", b""
    yield "only a document separator", b"---\n"
    yield "a null document", b"null\n"
    yield "a bare string", b"just some words\n"
    yield "a list at the top", b"- 1\n- 2\n"
    yield "binary noise", bytes(random.Random(7).randrange(256) for _ in range(4096))
    yield "NUL bytes", b"apiVersion: v1\x00\x00kind: Pod\n"
    yield "bad UTF-8", b"apiVersion: v1\nkind: Pod\nmetadata: {name: \xff\xfe}\n"
    yield "a UTF-16 file", (POD).encode("utf-16")
    yield "a YAML alias bomb", _alias_bomb().encode()
    yield "an alias that contains itself", b"a: &a [*a]\n"
    yield "deeply nested JSON", ('{"a":' * 100_000 + "1" + "}" * 100_000).encode()
    yield "deeply nested JSON lists", ("[" * 50_000 + "]" * 50_000).encode()
    yield "deeply nested YAML flow", ("a: " + "[" * 5000 + "]" * 5000 + "\n").encode()
    yield "deeply nested YAML blocks", "".join("  " * i + f"k{i}:\n" for i in range(3000)).encode()
    yield (
        "nesting under the interpreter's limit",
        (
            '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": '
            + "[" * 900
            + "]" * 900
            + "}}"
        ).encode(),
    )
    yield "a 5,000-digit integer in YAML", (HEAD + "spec:\n  seed: " + "9" * 5000 + "\n").encode()
    yield (
        "a 5,000-digit integer in JSON",
        ('{"apiVersion": "v1", "kind": "Pod", "n": ' + "9" * 5000 + "}").encode(),
    )
    yield "a huge integer in a manifest", (POD + "  priority: " + "9" * 400 + "\n").encode()
    yield "a huge float", (POD + "  terminationGracePeriodSeconds: 1e400\n").encode()
    yield "NaN and infinity", b'{"apiVersion": "v1", "kind": "Pod", "spec": {"priority": NaN, "x": Infinity}}'
    yield "a node count of 10^8", (HEAD + "spec:\n  nodeGroups: [{name: n, count: 100000000}]\n").encode()
    yield (
        "replicas of 10^8",
        (
            HEAD
            + "spec:\n  nodeGroups: [{name: n}]\n  objects:\n  - apiVersion: apps/v1\n    kind: ReplicaSet\n"
            "    metadata: {name: r}\n    spec:\n      replicas: 100000000\n      selector: {matchLabels: {a: b}}\n"
            "      template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: i}]}}\n"
        ).encode(),
    )
    yield (
        "a run of a million hours",
        (HEAD + "spec:\n  nodeGroups: [{name: n, count: 100}]\n  until: 1000000h\n").encode(),
    )
    yield "an infinite duration", (HEAD + "spec:\n  until: .inf\n").encode()
    yield "a negative count", (HEAD + "spec:\n  nodeGroups: [{name: n, count: -1}]\n").encode()
    yield (
        "events at the wrong level",
        (HEAD.replace("{name: hostile}", "{name: x, events: []}") + "spec: {}\n").encode(),
    )
    yield (
        "unknown node group keys",
        (HEAD + "spec:\n  nodeGroups: [{name: n, taints: [], zone: a}]\n").encode(),
    )
    yield (
        "a misspelt template field",
        (HEAD + "spec:\n  nodeGroups: [{name: n, template: {spec: {taint: []}}}]\n").encode(),
    )
    yield "duplicate scenario keys", (HEAD + "spec:\n  seed: 1\n  seed: 2\n").encode()
    yield "an unknown pod field", (POD + "  tolerationz: []\n").encode()
    yield "a duplicate pod field", (POD + "  nodeName: a\n  nodeName: b\n").encode()
    yield (
        "a misspelt taint effect",
        (
            "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec:\n  taints: [{key: k, effect: NoSchedul}]\n---\n"
            + POD
        ).encode(),
    )
    yield "a misspelt toleration operator", (POD + "  tolerations: [{key: k, operator: Exist}]\n").encode()
    yield "a key that is not a string", (POD + "  1: x\n").encode()
    yield (
        "an unknown field in each of 3,000 documents",
        "---\n".join(POD.replace("image: i", f"image: i, imag{i}: i") for i in range(3000)).encode(),
    )
    yield (
        "a List of 3,000 objects with an unknown field each",
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "List",
                "items": [
                    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"}, "spec": {"x": i}}
                    for i in range(3000)
                ],
            }
        ).encode(),
    )
    yield "a manifest that is a list", b"apiVersion: v1\nkind: List\nitems: [1, 2]\n"
    yield "a scenario bomb", _scenario_bomb().encode()
    for field, value in [
        ("metadata", '"x"'),
        ("spec", "[1]"),
        ("spec", "{nodeGroups: a}"),
        ("spec", "{nodeGroups: [{name: n, zones: 5}]}"),
        ("spec", "{nodeGroups: [{name: n, template: []}]}"),
        ("spec", "{nodeGroups: [{name: n, count: '3'}]}"),
        ("spec", "{nodeGroups: [5]}"),
        ("spec", "{events: {}}"),
        ("spec", "{events: [{at: [], kubectl: cordon n}]}"),
        ("spec", "{events: [{at: 1s, kubectl: 5}]}"),
        ("spec", "{events: [{at: 1s, fault: stop, node: [1, 2]}]}"),
        ("spec", "{events: [{at: 1s, fault: stop, zone: [a]}]}"),
        ("spec", "{events: [{at: 1s, fault: [stop], node: a}]}"),
        ("spec", "{events: [{at: 1s, delete: x}]}"),
        ("spec", "{events: [{at: 1s, apply: 5}]}"),
        ("spec", "{events: [5]}"),
        ("spec", "{settings: [1]}"),
        ("spec", "{settings: {nodeMonitorPeriod: []}}"),
        ("spec", "{settings: {nodeMonitorPeriod: 1.0e-300}}"),
        ("spec", "{featureGates: [a]}"),
        ("spec", "{seed: x}"),
        ("spec", "{until: {}}"),
        ("spec", "{objects: {}}"),
        ("spec", "{objects: [5, {kind: Pod}]}"),
    ]:
        yield (
            f"{field} as {value}",
            f"{HEAD.replace('metadata: {name: hostile}', '')}{field}: {value}\n".encode(),
        )


# mutations -----------------------------------------------------------------------------------


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*path, index))


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


WRONG_VALUES: list[Any] = ["x", 7, -1, 10**30, 1.5, True, None, [], [1, "a"], {}, {"k": "v"}, "9" * 50]


def mutants(seed: int, count: int) -> Iterator[tuple[str, bytes]]:
    """(id, content) of `count` seeded mutations of the examples."""
    rng = random.Random(seed)
    sources = sorted(EXAMPLES.glob("*.yaml"))
    for number in range(count):
        source = sources[number % len(sources)]
        text = source.read_text(encoding="utf-8")
        doc = yaml.safe_load(text)
        how = rng.choice(["wrong type", "unknown key", "misspelt key", "drop key", "truncate", "byte"])
        if how in ("truncate", "byte"):
            raw = text.encode()
            cut = rng.randrange(1, len(raw))
            content = raw[:cut] if how == "truncate" else raw[:cut] + bytes([rng.randrange(256)]) + raw[cut:]
            yield f"{source.stem} {how} at {cut}", content
            continue
        mutated = copy.deepcopy(doc)
        paths = [p for p in _paths(mutated) if p]
        path = rng.choice(paths)
        parent = _get(mutated, path[:-1])
        last = path[-1]
        if how == "wrong type":
            parent[last] = rng.choice(WRONG_VALUES)
        elif isinstance(parent, dict) and how == "unknown key":
            parent[f"{last}z"] = parent[last]
        elif isinstance(parent, dict) and how == "misspelt key":
            parent[str(last)[:-1] or "x"] = parent.pop(last)
        elif isinstance(parent, dict):
            del parent[last]
        else:
            parent[last] = rng.choice(WRONG_VALUES)
        form = rng.choice(["yaml", "json"])
        content = (json.dumps(mutated) if form == "json" else yaml.safe_dump(mutated)).encode()
        dotted = ".".join(str(p) for p in path)
        yield f"{source.stem} {how} {dotted} ({form})", content
