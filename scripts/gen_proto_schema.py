"""Generate src/kubetaint/apiserver/protobuf/schema.json: the protobuf schema of the kinds the
API server serves, as data (message -> field number -> JSON name, type, flags).

Source: the Go type information of a kubectl binary (`kubectl.1.33` by default). Go keeps every
struct's field names, field types and struct tags for reflection, so the binary carries exactly
upstream's `json:"..." protobuf:"..."` tags of k8s.io/api and apimachinery (the same facts as
the generated.proto files, plus what only the Go types say: pointer fields and `omitempty`,
which decide how a protobuf body maps to the JSON object the same request would carry).

    /work/venv/bin/python scripts/gen_proto_schema.py [/path/to/kubectl] > src/.../schema.json

Layout read (Go 1.21+ ABI, amd64): abi.Type (48 bytes: Kind at 23, TFlag at 20, Str nameOff at
40), StructType (PkgPath at 48, Fields slice at 56, UncommonType at 80), StructField (Name,
Typ, Offset), PtrType/SliceType Elem at 48, MapType Key at 48 and Elem at 56; names are
flags + varint length + bytes (+ varint length + tag when flags & 2); `.typelink` lists type
offsets from the start of `.rodata`.
"""

from __future__ import annotations

import json
import re
import struct
import sys
from typing import Any

KUBECTL = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"
META = "k8s.io/apimachinery/pkg/apis/meta/v1"
#: The served kinds (apiVersion/kind -> Go type) and the request-only kinds.
ROOTS = {
    "v1/Binding": "k8s.io/api/core/v1.Binding",
    "v1/Event": "k8s.io/api/core/v1.Event",
    "events.k8s.io/v1/Event": "k8s.io/api/events/v1.Event",
    "v1/Namespace": "k8s.io/api/core/v1.Namespace",
    "v1/Node": "k8s.io/api/core/v1.Node",
    "v1/Pod": "k8s.io/api/core/v1.Pod",
    "apps/v1/DaemonSet": "k8s.io/api/apps/v1.DaemonSet",
    "apps/v1/Deployment": "k8s.io/api/apps/v1.Deployment",
    "apps/v1/ReplicaSet": "k8s.io/api/apps/v1.ReplicaSet",
    "coordination.k8s.io/v1/Lease": "k8s.io/api/coordination/v1.Lease",
    "node.k8s.io/v1/RuntimeClass": "k8s.io/api/node/v1.RuntimeClass",
    "policy/v1/Eviction": "k8s.io/api/policy/v1.Eviction",
    "policy/v1/PodDisruptionBudget": "k8s.io/api/policy/v1.PodDisruptionBudget",
    "scheduling.k8s.io/v1/PriorityClass": "k8s.io/api/scheduling/v1.PriorityClass",
    **{
        f"rbac.authorization.k8s.io/v1/{kind}": f"k8s.io/api/rbac/v1.{kind}"
        for kind in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
    },
    **{
        f"authorization.k8s.io/v1/{kind}": f"k8s.io/api/authorization/v1.{kind}"
        for kind in (
            "SelfSubjectAccessReview",
            "SelfSubjectRulesReview",
            "SubjectAccessReview",
            "LocalSubjectAccessReview",
        )
    },
    "authentication.k8s.io/v1/SelfSubjectReview": "k8s.io/api/authentication/v1.SelfSubjectReview",
    **{
        f"v1/{kind}": f"k8s.io/api/core/v1.{kind}"
        for kind in ("ConfigMap", "Secret", "ServiceAccount", "Service", "Endpoints")
    },
    "discovery.k8s.io/v1/EndpointSlice": "k8s.io/api/discovery/v1.EndpointSlice",
    "apps/v1/StatefulSet": "k8s.io/api/apps/v1.StatefulSet",
    "batch/v1/Job": "k8s.io/api/batch/v1.Job",
    "batch/v1/CronJob": "k8s.io/api/batch/v1.CronJob",
    "DeleteOptions": f"{META}.DeleteOptions",
}
#: Go types with their own JSON form (custom MarshalJSON), decoded specially.
SPECIAL = {
    f"{META}.Time": "time",
    f"{META}.MicroTime": "microtime",
    f"{META}.Duration": "duration",
    f"{META}.FieldsV1": "fieldsv1",
    "k8s.io/apimachinery/pkg/api/resource.Quantity": "quantity",
    "k8s.io/apimachinery/pkg/util/intstr.IntOrString": "intstr",
    "k8s.io/apimachinery/pkg/runtime.RawExtension": "rawext",
}
SCALARS = {
    1: "bool",
    2: "int64",
    5: "int32",
    6: "int64",
    10: "uint32",
    11: "uint64",
    14: "double",
    24: "string",
}
PTR, SLICE, MAP, STRUCT, UINT8 = 22, 23, 21, 25, 8
PROTO_TAG = re.compile(r'protobuf:"(\w+),(\d+),(opt|rep|req)')
JSON_TAG = re.compile(r'json:"([^"]*)"')


class GoBinary:
    def __init__(self, path: str) -> None:
        self.data = open(path, "rb").read()
        shoff = struct.unpack_from("<Q", self.data, 0x28)[0]
        entsize, count, strndx = struct.unpack_from("<HHH", self.data, 0x3A)
        rows = [struct.unpack_from("<IIQQQQ", self.data, shoff + i * entsize) for i in range(count)]
        self.sections = [(r[3], r[4], r[5]) for r in rows]  # address, offset, size
        names_off = rows[strndx][4]
        self.by_name = {self._cstr(names_off + r[0]): (r[3], r[4], r[5]) for r in rows}
        self.types_base = self.by_name[".rodata"][0]

    def _cstr(self, o: int) -> str:
        return self.data[o : self.data.index(b"\0", o)].decode()

    def off(self, va: int) -> int:
        for addr, offset, size in self.sections:
            if addr and addr <= va < addr + size:
                return offset + va - addr
        raise KeyError(hex(va))

    def u64(self, va: int) -> int:
        return int(struct.unpack_from("<Q", self.data, self.off(va))[0])

    def i32(self, va: int) -> int:
        return int(struct.unpack_from("<i", self.data, self.off(va))[0])

    def _varint(self, o: int) -> tuple[int, int]:
        value = shift = 0
        while True:
            b = self.data[o]
            o += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return value, o

    def name(self, va: int) -> tuple[str, str]:
        o = self.off(va)
        flags = self.data[o]
        n, o = self._varint(o + 1)
        name = self.data[o : o + n].decode()
        tag = ""
        if flags & 2:
            t, o2 = self._varint(o + n)
            tag = self.data[o2 : o2 + t].decode()
        return name, tag

    def kind(self, t: int) -> int:
        return self.data[self.off(t + 23)] & 0x1F

    def type_name(self, t: int) -> str:
        name = self.name(self.types_base + self.i32(t + 40))[0]
        return name[1:] if self.data[self.off(t + 20)] & 2 else name

    def full_name(self, t: int) -> str:
        """`pkg/path.Name` of a named struct (the package path is in its uncommon type)."""
        short = self.type_name(t).rpartition(".")[2]
        pkg = self.name(self.types_base + self.i32(t + 80))[0] if self.data[self.off(t + 20)] & 1 else ""
        return f"{pkg}.{short}"

    def elem(self, t: int, at: int = 48) -> int:
        return self.u64(t + at)

    def fields(self, t: int) -> list[tuple[str, str, int]]:
        start, count = self.u64(t + 56), self.u64(t + 64)
        out = []
        for i in range(count):
            entry = start + 24 * i
            name, tag = self.name(self.u64(entry))
            out.append((name, tag, self.u64(entry + 8)))
        return out

    def structs(self) -> dict[str, int]:
        """Every struct type reachable from `.typelink`, by full name."""
        base, offset, size = self.by_name[".typelink"]
        stack = [
            self.types_base + struct.unpack_from("<i", self.data, offset + 4 * k)[0] for k in range(size // 4)
        ]
        seen: set[int] = set()
        found: dict[str, int] = {}
        while stack:
            t = stack.pop()
            if t in seen:
                continue
            seen.add(t)
            try:
                kind = self.kind(t)
            except KeyError:
                continue
            if kind in (PTR, SLICE, 17):
                stack.append(self.elem(t))
            elif kind == MAP:
                stack += [self.elem(t), self.elem(t, 56)]
            elif kind == STRUCT:
                if self.data[self.off(t + 20)] & 4:  # named
                    found.setdefault(self.full_name(t), t)
                stack += [f[2] for f in self.fields(t)]
        return found


class SchemaBuilder:
    def __init__(self, go: GoBinary) -> None:
        self.go = go
        self.types = go.structs()
        self.messages: dict[str, list[list[Any]]] = {}

    def value_type(self, t: int) -> tuple[str, str]:
        """(type, flags) of a field's Go type: scalars, bytes, special or message types."""
        go = self.go
        kind = go.kind(t)
        if kind == PTR:
            inner, flags = self.value_type(go.elem(t))
            return inner, "p" + flags
        if kind == SLICE:
            elem = go.elem(t)
            if go.kind(elem) == UINT8:
                return "bytes", ""
            inner, flags = self.value_type(elem)
            if "r" in flags or "m" in flags:
                raise ValueError(f"nested repeated type {go.type_name(t)}")
            return inner, "r"
        if kind == STRUCT:
            name = go.full_name(t)
            if name in SPECIAL:
                return SPECIAL[name], ""
            self.message(name, t)
            return name, ""
        if kind in SCALARS:
            return SCALARS[kind], ""
        raise ValueError(f"unsupported Go kind {kind} ({go.type_name(t)})")

    def message(self, name: str, t: int) -> None:
        if name in self.messages:
            return
        self.messages[name] = rows = []
        for field_name, tag, ftype in self.go.fields(t):
            proto = PROTO_TAG.search(tag)
            if proto is None:
                continue  # TypeMeta (inline, not in protobuf) and unexported fields
            json_tag = JSON_TAG.search(tag)
            json_name, _, options = (json_tag.group(1) if json_tag else field_name).partition(",")
            if json_name == "-":
                continue
            flags = "o" if "omitempty" in options.split(",") else ""
            if "inline" in options.split(","):
                flags += "i"
            if self.go.kind(ftype) == MAP:
                key, _ = self.value_type(self.go.elem(ftype))
                value, vflags = self.value_type(self.go.elem(ftype, 56))
                rows.append([int(proto.group(2)), json_name, value, flags + "m" + vflags, key])
                continue
            value, vflags = self.value_type(ftype)
            rows.append([int(proto.group(2)), json_name, value, flags + vflags])


def main() -> None:
    go = GoBinary(sys.argv[1] if len(sys.argv) > 1 else KUBECTL)
    builder = SchemaBuilder(go)
    for root in ROOTS.values():
        builder.message(root, builder.types[root])
    # One message per line, so that a regenerated schema diffs readably.
    lines = ['{"source": "Go type information of kubectl 1.33 (k8s.io/api, k8s.io/apimachinery v0.33)",']
    lines.append(f'"kinds": {json.dumps(ROOTS)},')
    lines.append('"messages": {')
    rows = [f"{json.dumps(name)}: {json.dumps(fields)}" for name, fields in sorted(builder.messages.items())]
    lines.append(",\n".join(rows))
    lines.append("}}")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
