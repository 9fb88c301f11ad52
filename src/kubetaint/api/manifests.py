"""Loading Kubernetes manifests from files, directories and stdin, as `kubectl apply -f` reads them
(multi-document YAML or JSON, `kind: List` expanded), with errors naming file, document, line and field.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from kubetaint.api.manifest_lines import DocumentNodes
from kubetaint.api.models import DecodeError, decode
from kubetaint.api.openapi_schemas import cannot_handle, schema_of, strict_decoding_error, strict_errors
from kubetaint.api.resources import SUBRESOURCE_KINDS, by_api_version_kind
from kubetaint.api.strictload import InputError, Parsed, looks_like_json, parse_json, parse_yaml, read_input

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class Manifest:
    """One object and where it came from (document is 1-based within its source)."""

    obj: dict[str, Any]
    source: str
    document: int
    line: int | None = None
    #: keys the text gave twice: JSON by id(dict) of `obj`'s own dicts, YAML as goyaml's messages
    json_duplicates: Mapping[int, tuple[str, ...]] = field(default_factory=dict, compare=False)
    yaml_duplicates: tuple[str, ...] = field(default=(), compare=False)
    from_yaml: bool = field(default=False, compare=False)
    #: the text the manifest was read from (standard input included), for the lines of its
    #: fields; shared by the manifests of one file
    nodes: DocumentNodes | None = field(default=None, compare=False, repr=False)


class ManifestError(ValueError):
    """Input that cannot be loaded; `str()` is one line naming source, document, line and field."""

    def __init__(
        self, problem: str, source: str, document: int | None = None, line: int | None = None, field: str = ""
    ) -> None:
        self.problem, self.source, self.document, self.line, self.field = (
            problem,
            source,
            document,
            line,
            field,
        )
        where = [source]
        if document is not None:
            where.append(f"document {document}")
        if line is not None:
            where.append(f"line {line}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {field + ': ' if field else ''}{problem}")


def expand_paths(paths: Sequence[str]) -> list[str]:
    """Files in argument order; a directory contributes its manifest files, sorted, not recursively."""
    files: list[str] = []
    for path in paths:
        if path == "-":
            files.append(path)
        elif os.path.isdir(path):
            names = sorted(n for n in os.listdir(path) if n.endswith(MANIFEST_SUFFIXES))
            files.extend(os.path.join(path, n) for n in names)
        elif os.path.exists(path):
            files.append(path)
        else:
            raise ManifestError("the path does not exist", path)
    return files


def _read(path: str) -> str:
    try:
        return read_input(path)
    except InputError as exc:
        raise ManifestError(exc.problem, exc.source, None, exc.line) from None


def _docs(text: str, source: str) -> list[Parsed]:
    """Every non-empty document of a file; a parse error names its document and line."""
    if looks_like_json(text, source):
        try:
            return [parse_json(text, source, item_lines=True)]
        except InputError as exc:
            raise ManifestError(exc.problem, source, 1, exc.line) from None
    docs: list[Parsed] = []
    number = 1
    try:
        for doc in parse_yaml(text, source):
            if doc.data is not None:
                docs.append(doc)
            number += 1
    except InputError as exc:
        raise ManifestError(exc.problem, source, number, exc.line) from None
    return docs


def load_documents(paths: Sequence[str]) -> list[Manifest]:
    """Every non-empty document as parsed, with `List` kinds expanded; no kind or type checks."""
    manifests: list[Manifest] = []
    for source in expand_paths(paths):
        shown = "<stdin>" if source == "-" else source
        text = _read(source)
        nodes = DocumentNodes(text)
        for doc in _docs(text, shown):
            manifests.extend(_expand(doc, shown, nodes))
    return manifests


def _expand(doc: Parsed, source: str, nodes: DocumentNodes) -> list[Manifest]:
    obj = doc.data
    if not isinstance(obj, dict):
        kind = type(obj).__name__.replace("str", "string").replace("dict", "mapping")
        raise ManifestError(
            f"expected a Kubernetes object (a mapping), got a {kind}", source, doc.document, doc.line
        )
    list_kind = obj.get("kind")
    if not (isinstance(list_kind, str) and list_kind.endswith("List") and "items" in obj):
        return [_manifest(obj, source, doc, doc.line, doc.node, nodes=nodes)]
    items = obj.get("items") or []
    if not isinstance(items, list):
        raise ManifestError("items must be a list", source, doc.document, doc.line, "items")
    manifests = []
    item_nodes = _child(doc.node, "items")
    for i, item in enumerate(items):
        given = doc.item_lines[i] if i < len(doc.item_lines) else None
        line = _node_line(doc.node, ["items", i]) or given or doc.line
        if not isinstance(item, dict):
            raise ManifestError(
                "expected a Kubernetes object (a mapping)", source, doc.document, line, f"items[{i}]"
            )
        node = _child(item_nodes, i) if item_nodes is not None else None
        manifests.append(_manifest(item, source, doc, line, node, nodes=nodes))
    return manifests


def _manifest(
    obj: dict[str, Any], source: str, doc: Parsed, line: int | None, node: Any, *, nodes: DocumentNodes
) -> Manifest:
    """A manifest with the duplicate keys its part of the document gave."""
    yaml_duplicates: tuple[str, ...] = ()
    if doc.yaml_duplicates:
        first, last = (node.start_mark.line + 1, node.end_mark.line + 1) if node is not None else (0, 0)
        yaml_duplicates = tuple(d.message() for d in doc.yaml_duplicates if first <= d.line <= last)
    return Manifest(
        obj,
        source,
        doc.document,
        line,
        json_duplicates=doc.json_duplicates,
        yaml_duplicates=yaml_duplicates,
        from_yaml=doc.is_yaml,
        nodes=nodes,
    )


def check_manifest(manifest: Manifest) -> None:
    """apiVersion/kind known to the resource table, and field types decodable; else ManifestError."""
    obj = manifest.obj
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    missing = [name for name, value in (("apiVersion", api_version), ("kind", kind)) if not value]
    if missing:
        problem = ", ".join(f"{name} not set" for name in missing)
        raise ManifestError(problem, manifest.source, manifest.document, manifest.line)
    if not isinstance(api_version, str) or not isinstance(kind, str):
        raise ManifestError(
            "apiVersion and kind must be strings", manifest.source, manifest.document, manifest.line
        )
    if by_api_version_kind(api_version, kind) is None and (api_version, kind) not in SUBRESOURCE_KINDS:
        problem = f'no matches for kind "{kind}" in version "{api_version}"'
        raise ManifestError(problem, manifest.source, manifest.document, manifest.line)
    try:
        decode(obj)
    except DecodeError as exc:
        raise ManifestError(
            str(exc), manifest.source, manifest.document, field_line(manifest, exc.path), exc.path
        ) from None
    schema = schema_of(api_version, kind)
    if schema is None:
        return
    errors = [
        *manifest.yaml_duplicates,
        *strict_errors(obj, schema, duplicates=manifest.json_duplicates, sort_keys=manifest.from_yaml),
    ]
    if errors:
        version = api_version.rpartition("/")[2]
        message = cannot_handle(kind, version, strict_decoding_error(errors))
        raise ManifestError(message, manifest.source, manifest.document, _strict_line(manifest, errors[0]))


_STRICT_LINE = re.compile(r"^line (\d+): ")
_STRICT_PATH = re.compile(r'^(?:unknown|duplicate) field "(.*)"$')


def _strict_line(manifest: Manifest, error: str) -> int | None:
    """The line of the first strict error's field (goyaml's own line for a duplicate key)."""
    found = _STRICT_LINE.match(error)
    if found is not None:
        return int(found.group(1))
    found = _STRICT_PATH.match(error)
    return field_line(manifest, found.group(1)) if found is not None else manifest.line


_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def field_line(manifest: Manifest, path: str) -> int | None:
    """The line of `path` in the manifest's YAML when it can be found, else the document's line."""
    if manifest.nodes is None:
        return manifest.line
    node = manifest.nodes.item(manifest.document, manifest.line)
    parts: list[str | int] = [
        m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _PART.finditer(path)
    ]
    return (_node_line(node, parts) if node is not None else None) or manifest.line


def _child(node: Any, part: str | int) -> Any:
    if isinstance(node, yaml.MappingNode) and isinstance(part, str):
        for key, value in node.value:
            if getattr(key, "value", None) == part:
                return value
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
        return node.value[part]
    return None


def _node_line(node: Any, parts: Sequence[str | int]) -> int | None:
    """The line of the field at `parts`: its key's line for a mapping field (the value of
    `tolerationz:` may start on the next line), the item's own line for a list item."""
    line: int | None = None
    for part in parts:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            key = next((k for k, _ in node.value if getattr(k, "value", None) == part), None)
            line = int(key.start_mark.line) + 1 if key is not None else None
        node = _child(node, part)
        if node is None:
            return None
        if not (isinstance(part, str) and line is not None):
            line = int(node.start_mark.line) + 1
    return line


def manifest_name(obj: Mapping[str, Any]) -> str:
    """`kind/name` in kubectl's lower-case resource spelling (`node/gpu-1`)."""
    meta = obj.get("metadata")
    name = (meta.get("name") or meta.get("generateName") or "") if isinstance(meta, Mapping) else ""
    return f"{str(obj.get('kind') or '').lower()}/{name}"
