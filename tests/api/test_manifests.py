"""Loading manifests: YAML streams, JSON, directories, stdin, Lists, and one-line errors."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from kubetaint.api.manifests import Manifest, ManifestError, check_manifest, load_documents, manifest_name


def load_manifests(paths: list[str]) -> list[Manifest]:
    """Load the documents and check each (what `kubetaint validate` does)."""
    manifests = load_documents(paths)
    for manifest in manifests:
        check_manifest(manifest)
    return manifests


NODES = """\
apiVersion: v1
kind: Node
metadata:
  name: n1
---
# an empty document is skipped
---
apiVersion: v1
kind: Node
metadata:
  name: n2
spec:
  taints:
  - key: dedicated
    effect: NoSchedule
"""


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_multi_document_yaml(tmp_path: Path) -> None:
    path = _write(tmp_path, "nodes.yaml", NODES)
    manifests = load_manifests([path])
    assert [(m.obj["metadata"]["name"], m.document, m.line) for m in manifests] == [
        ("n1", 1, 1),
        ("n2", 3, 8),
    ]
    assert all(m.source == path for m in manifests)


def test_json_file(tmp_path: Path) -> None:
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}
    path = _write(tmp_path, "pod.json", json.dumps(obj))
    assert load_manifests([path]) == [Manifest(obj, path, 1, 1)]


def test_list_kinds_are_expanded(tmp_path: Path) -> None:
    text = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Namespace
  metadata: {name: a}
- apiVersion: v1
  kind: Namespace
  metadata: {name: b}
"""
    path = _write(tmp_path, "list.yaml", text)
    manifests = load_manifests([path])
    assert [(m.obj["metadata"]["name"], m.line) for m in manifests] == [("a", 4), ("b", 7)]


def test_node_list_is_expanded_from_json(tmp_path: Path) -> None:
    items = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"}} for i in range(3)]
    path = _write(
        tmp_path, "nodes.json", json.dumps({"apiVersion": "v1", "kind": "NodeList", "items": items})
    )
    assert [m.obj for m in load_manifests([path])] == items


def test_directory_is_read_sorted_and_filtered(tmp_path: Path) -> None:
    _write(tmp_path, "b.yml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n")
    _write(tmp_path, "a.json", '{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}')
    _write(tmp_path, "notes.txt", "not a manifest")
    names = [m.obj["metadata"]["name"] for m in load_manifests([str(tmp_path)])]
    assert names == ["a", "b"]


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("apiVersion: v1\nkind: Namespace\nmetadata: {name: s}\n"))
    (manifest,) = load_manifests(["-"])
    assert manifest.source == "<stdin>" and manifest.obj["metadata"]["name"] == "s"


def test_load_documents_skips_kind_checks(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.yaml", "apiVersion: kubetaint.dev/v1alpha1\nkind: Scenario\nspec: {}\n")
    assert load_documents([path])[0].obj["kind"] == "Scenario"


ERRORS = [
    pytest.param(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: [unclosed\n",
        "invalid YAML",
        1,
        None,
        id="malformed YAML names document and line",
    ),
    pytest.param(
        "- a\n- b\n",
        "expected a Kubernetes object (a mapping), got a list",
        1,
        None,
        id="a document that is not a mapping",
    ),
    pytest.param(
        "metadata: {name: x}\n", "apiVersion not set, kind not set", 1, None, id="missing apiVersion and kind"
    ),
    pytest.param(
        "apiVersion: v1\nkind: Widget\n",
        'no matches for kind "Widget" in version "v1"',
        1,
        None,
        id="an unknown kind",
    ),
    pytest.param(
        "apiVersion: apps/v1beta1\nkind: Deployment\n",
        'no matches for kind "Deployment" in version "apps/v1beta1"',
        1,
        None,
        id="an unknown apiVersion",
    ),
    pytest.param(
        NODES.replace("key: dedicated", "key: 5"),
        'Node in version "v1" cannot be handled as a Node: json: cannot unmarshal number into Go struct field '
        "Taint.spec.taints.key of type string",
        3,
        "spec.taints[0].key",
        id="a wrong type names the field and its line",
    ),
]


@pytest.mark.parametrize(("text", "problem", "document", "field"), ERRORS)
def test_errors(tmp_path: Path, text: str, problem: str, document: int, field: str | None) -> None:
    path = _write(tmp_path, "bad.yaml", text)
    with pytest.raises(ManifestError) as info:
        load_manifests([path])
    err = info.value
    assert problem in err.problem
    assert err.document == document
    assert "\n" not in str(err)
    assert str(err).startswith(f"{path}, document {document}")
    if field:
        assert err.field == field
        assert err.line == 14
        assert str(err) == f"{path}, document 3, line 14: {field}: {err.problem}"


def test_malformed_yaml_has_a_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "bad.yaml", "apiVersion: v1\nkind: Node\n  bad: indent\n")
    with pytest.raises(ManifestError) as info:
        load_manifests([path])
    assert info.value.line == 3


def test_malformed_json(tmp_path: Path) -> None:
    path = _write(tmp_path, "bad.json", '{"apiVersion": "v1",\n "kind": }')
    with pytest.raises(ManifestError) as info:
        load_manifests([path])
    assert str(info.value) == f"{path}, document 1, line 2: invalid JSON: Expecting value"


def test_missing_path() -> None:
    with pytest.raises(ManifestError, match=r"^nope\.yaml: the path does not exist$"):
        load_manifests(["nope.yaml"])


@pytest.mark.parametrize(
    ("obj", "name"),
    [
        ({"kind": "Node", "metadata": {"name": "gpu-1"}}, "node/gpu-1"),
        ({"kind": "PriorityClass", "metadata": {"generateName": "x-"}}, "priorityclass/x-"),
        ({"kind": "Pod"}, "pod/"),
    ],
)
def test_manifest_name(obj: dict[str, object], name: str) -> None:
    assert manifest_name(obj) == name
