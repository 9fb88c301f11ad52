"""Loading Kubernetes manifests from files, directories and stdin, as `kubectl apply -f` reads them
(multi-document YAML or JSON, `kind: List` expanded), with errors naming file, document, line and field.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from kubetaint.api.models import DecodeError, decode
from kubetaint.api.resources import SUBRESOURCE_KINDS, by_api_version_kind

try:  # the C loader is several times faster on large snapshots
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class Manifest:
    """One object and where it came from (document is 1-based within its source)."""

    obj: dict[str, Any]
    source: str
    document: int
    line: int | None = None


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


@dataclass(frozen=True)
class _Doc:
    obj: Any
    document: int
    line: int | None
    node: Any  # the YAML node, for field line numbers


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
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(str(exc.strerror if isinstance(exc, OSError) else exc), path) from None


def _yaml_docs(text: str, source: str) -> Iterator[_Doc]:
    loader = _Loader(text)
    number = 0  # the document being read, for error messages
    try:
        while True:
            number += 1
            if not loader.check_node():
                break
            node = loader.get_node()
            obj = loader.construct_document(node)
            if obj is not None:
                yield _Doc(obj, number, node.start_mark.line + 1, node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = " ".join(p for p in (exc.context, exc.problem) if p) or str(exc)
        raise ManifestError(f"invalid YAML: {problem}", source, number, line) from None
    except yaml.YAMLError as exc:
        raise ManifestError(f"invalid YAML: {exc}", source, number) from None
    finally:
        loader.dispose()


def _json_docs(text: str, source: str) -> Iterator[_Doc]:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ManifestError(f"invalid JSON: {exc.msg}", source, 1, exc.lineno) from None
    yield _Doc(obj, 1, 1, None)


def _docs(text: str, source: str) -> Iterator[_Doc]:
    if source.endswith(".json") or text.lstrip().startswith("{"):
        return _json_docs(text, source)
    return _yaml_docs(text, source)


def load_documents(paths: Sequence[str]) -> list[Manifest]:
    """Every non-empty document as parsed, with `List` kinds expanded; no kind or type checks."""
    manifests: list[Manifest] = []
    for source in expand_paths(paths):
        shown = "<stdin>" if source == "-" else source
        for doc in _docs(_read(source), shown):
            manifests.extend(_expand(doc, shown))
    return manifests


def _expand(doc: _Doc, source: str) -> list[Manifest]:
    obj = doc.obj
    if not isinstance(obj, dict):
        kind = type(obj).__name__.replace("str", "string").replace("dict", "mapping")
        raise ManifestError(
            f"expected a Kubernetes object (a mapping), got a {kind}", source, doc.document, doc.line
        )
    list_kind = obj.get("kind")
    if not (isinstance(list_kind, str) and list_kind.endswith("List") and "items" in obj):
        return [Manifest(obj, source, doc.document, doc.line)]
    items = obj.get("items") or []
    if not isinstance(items, list):
        raise ManifestError("items must be a list", source, doc.document, doc.line, "items")
    manifests = []
    for i, item in enumerate(items):
        line = _node_line(doc.node, ["items", i]) or doc.line
        if not isinstance(item, dict):
            raise ManifestError(
                "expected a Kubernetes object (a mapping)", source, doc.document, line, f"items[{i}]"
            )
        manifests.append(Manifest(item, source, doc.document, line))
    return manifests


def load_manifests(paths: Sequence[str]) -> list[Manifest]:
    """Load manifests and check each is a kind kubetaint serves, with JSON types that fit its schema."""
    manifests = load_documents(paths)
    for manifest in manifests:
        check_manifest(manifest)
    return manifests


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
            str(exc), manifest.source, manifest.document, _field_line(manifest, exc.path), exc.path
        ) from None


_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _field_line(manifest: Manifest, path: str) -> int | None:
    """The line of `path` in the manifest's YAML when it can be found, else the document's line."""
    try:
        loader = _Loader(_read(manifest.source)) if manifest.source not in ("-", "<stdin>") else None
    except ManifestError:
        loader = None
    if loader is None:
        return manifest.line
    try:
        number = 0
        while loader.check_node():
            number += 1
            node = loader.get_node()
            if number == manifest.document:
                parts: list[str | int] = [
                    m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _PART.finditer(path)
                ]
                found = _node_line(_item_node(node, manifest.line), parts)
                return found or manifest.line
    except yaml.YAMLError:
        return manifest.line
    finally:
        loader.dispose()
    return manifest.line


def _item_node(node: Any, line: int | None) -> Any:
    """For a List document, the item node starting at `line`; else the document node."""
    items = _child(node, "items")
    if isinstance(items, yaml.SequenceNode):
        for item in items.value:
            if item.start_mark.line + 1 == line:
                return item
    return node


def _child(node: Any, part: str | int) -> Any:
    if isinstance(node, yaml.MappingNode) and isinstance(part, str):
        for key, value in node.value:
            if getattr(key, "value", None) == part:
                return value
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
        return node.value[part]
    return None


def _node_line(node: Any, parts: Sequence[str | int]) -> int | None:
    for part in parts:
        node = _child(node, part)
        if node is None:
            return None
    return int(node.start_mark.line) + 1 if node is not None else None


def manifest_name(obj: Mapping[str, Any]) -> str:
    """`kind/name` in kubectl's lower-case resource spelling (`node/gpu-1`)."""
    meta = obj.get("metadata")
    name = (meta.get("name") or meta.get("generateName") or "") if isinstance(meta, Mapping) else ""
    return f"{str(obj.get('kind') or '').lower()}/{name}"
