"""The protobuf schema of the served kinds as data: `schema.json`, generated from upstream's Go
types (k8s.io/api and apimachinery `json`/`protobuf` struct tags) by scripts/gen_proto_schema.py.

A message is a list of fields in Go struct order; each field has its protobuf number, its JSON
name, its type (`string`, `bool`, `int32`, `int64`, `uint32`, `uint64`, `double`, `bytes`, a
special type with its own JSON form — `time`, `microtime`, `duration`, `quantity`, `intstr`,
`fieldsv1`, `rawext` — or another message's name) and flags: `o` omitempty, `p` a Go pointer,
`r` a slice, `m` a map (with its key type), `i` inlined into the parent's JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

SCALARS = frozenset({"string", "bool", "int32", "int64", "uint32", "uint64", "double", "bytes"})
SPECIALS = frozenset({"time", "microtime", "duration", "quantity", "intstr", "fieldsv1", "rawext"})


@dataclass(frozen=True, slots=True)
class Field:
    number: int
    json_name: str
    type: str
    omitempty: bool
    pointer: bool
    repeated: bool
    map_key: str | None
    inline: bool

    @property
    def is_message(self) -> bool:
        return self.type not in SCALARS and self.type not in SPECIALS


@dataclass(frozen=True, slots=True)
class Message:
    name: str
    fields: tuple[Field, ...]
    by_number: dict[int, Field]


@dataclass(frozen=True, slots=True)
class Schema:
    #: "apiVersion/kind" (or "DeleteOptions", in any group version) -> message name.
    kinds: dict[str, str]
    messages: dict[str, Message]

    def kind(self, api_version: str, kind: str) -> Message | None:
        name = self.kinds.get(kind if kind == "DeleteOptions" else f"{api_version}/{kind}")
        return self.messages[name] if name else None


def _field(row: list[object]) -> Field:
    number, json_name, type_, flags = row[:4]
    assert isinstance(number, int) and isinstance(json_name, str)
    assert isinstance(type_, str) and isinstance(flags, str)
    key = row[4] if len(row) > 4 else None
    return Field(
        number=number,
        json_name=json_name,
        type=type_,
        omitempty="o" in flags,
        pointer="p" in flags,
        repeated="r" in flags,
        map_key=str(key) if "m" in flags else None,
        inline="i" in flags,
    )


@cache
def load() -> Schema:
    raw = json.loads(resources.files(__package__).joinpath("schema.json").read_text(encoding="utf-8"))
    messages = {}
    for name, rows in raw["messages"].items():
        fields = tuple(_field(row) for row in rows)
        messages[name] = Message(name, fields, {f.number: f for f in fields})
    return Schema(dict(raw["kinds"]), messages)
