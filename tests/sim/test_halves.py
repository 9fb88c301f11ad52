"""A long list's text written in two processes (its later part by a forked child) is the text one
process writes, for JSON and YAML, and a child that fails leaves its half to the parent."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from kubetaint.sim import halves
from kubetaint.sim.jsontext import write_indented
from kubetaint.sim.yamltext import reference_text, write_yaml
from kubetaint.speed.reference import reference_mode_set


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Outside reference mode, lists of 8 items or more are split; the children forked are counted."""
    monkeypatch.setattr(halves, "SPLIT_ITEMS", 8)
    monkeypatch.setattr(halves, "_a_cpu_is_idle", lambda: True)  # (however busy the machine is)
    with reference_mode_set(False), halves.two_processes_allowed():
        if not halves.two_processes_help(8):
            pytest.skip("this process runs threads: it does not fork")
        forked: list[int] = []
        fork = os.fork

        def counted() -> int:
            pid = fork()
            if pid:
                forked.append(pid)
            return pid

        monkeypatch.setattr(os, "fork", counted)
        yield forked


def _pod(i: int) -> dict[str, Any]:
    return {
        "metadata": {"name": f"app-{i}", "labels": {"app": "web", "tier": str(i % 3)}},
        "spec": {"nodeName": f"node-{i % 5}", "containers": [{"name": "c", "image": "nginx"}]},
        "status": {"phase": "Running", "ready": i % 2 == 0, "restarts": i, "t": i / 8},
        "note": "a long message with spaces " * (i % 4) + 'é 雪 \u2028 tab\t quote " backslash \\',
    }


def _doc(count: int) -> dict[str, Any]:
    return {
        "scenario": "s",
        "timeline": [{"t": i / 2, "reason": "Created", "name": f"app-{i}"} for i in range(count)],
        "final": {"pods": [_pod(i) for i in range(count)], "empty": []},
    }


@pytest.mark.parametrize("count", [8, 9, 61], ids=["the shortest list split", "an odd count", "more"])
def test_json_written_in_two_processes_is_json_text(forks: list[int], count: int) -> None:
    doc = _doc(count)
    stream = io.StringIO()
    write_indented(doc, stream)
    assert stream.getvalue() == json.dumps(doc, indent=2, ensure_ascii=False)
    assert len(forks) == 2  # the timeline and the pods


@pytest.mark.parametrize("count", [8, 9, 61], ids=["the shortest list split", "an odd count", "more"])
def test_yaml_written_in_two_processes_is_pyyamls_text(forks: list[int], count: int) -> None:
    doc = _doc(count)
    stream = io.StringIO()
    write_yaml(doc, stream)
    assert stream.getvalue() == reference_text(doc)
    assert len(forks) == 2


def test_a_lone_surrogate_comes_back_from_the_child_whole(forks: list[int]) -> None:
    doc = [{"name": f"pod-{i}", "text": "\udcff" if i == 7 else "x"} for i in range(10)]
    stream = io.StringIO()
    write_indented(doc, stream)
    assert stream.getvalue() == json.dumps(doc, indent=2, ensure_ascii=False)
    assert forks


def test_a_value_json_rejects_in_the_second_half_raises_jsons_error_after_the_same_text(
    forks: list[int],
) -> None:
    doc = [{"name": f"pod-{i}", "value": object() if i == 9 else i} for i in range(12)]
    split, whole = io.StringIO(), io.StringIO()
    with pytest.raises(TypeError, match="not JSON serializable"):
        write_indented(doc, split)
    assert forks
    with reference_mode_set(True), pytest.raises(TypeError, match="not JSON serializable"):
        write_indented(doc, whole)
    assert split.getvalue() == whole.getvalue()


def test_a_child_that_fails_leaves_its_half_to_the_parent(
    forks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(halves, "_FileSink", None)  # the child cannot write: it fails at once
    doc = [{"name": f"pod-{i}", "labels": {"n": str(i)}} for i in range(20)]
    stream = io.StringIO()
    write_yaml(doc, stream)
    assert stream.getvalue() == yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=False, allow_unicode=True)
    assert forks


def test_reference_mode_writes_in_one_process(forks: list[int]) -> None:
    doc = _doc(20)
    stream = io.StringIO()
    with reference_mode_set(True):
        write_indented(doc, stream)
        write_yaml(doc, stream)
    assert forks == []


def test_an_error_in_the_parents_half_stops_the_child(forks: list[int]) -> None:
    doc = [{"name": f"pod-{i}", "value": object() if i == 2 else i} for i in range(20)]
    with pytest.raises(TypeError, match="not JSON serializable"):
        write_indented(doc, io.StringIO())
    assert forks
    with pytest.raises(ChildProcessError):
        os.waitpid(forks[0], os.WNOHANG)  # stopped and reaped


def test_the_childs_text_handed_over_in_pieces_that_cut_characters_is_whole(
    forks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(halves, "PIECE", 3)  # most pieces end inside a two- or three-byte character
    doc = [{"name": f"pod-{i}", "text": "é雪\U0001f600" * (i % 3)} for i in range(16)]
    stream = io.StringIO()
    write_indented(doc, stream)
    assert stream.getvalue() == json.dumps(doc, indent=2, ensure_ascii=False)
    assert forks


def test_a_child_whose_parent_is_gone_stops_writing() -> None:
    read, write = os.pipe()
    try:
        sink = halves._FileSink(write, -1)  # (no process has that id: the parent is gone)
        with pytest.raises(halves._OrphanedError):
            sink.write("text")
        halves._FileSink(write, os.getppid()).write("text")
        assert os.read(read, 100) == b"text"
    finally:
        os.close(read)
        os.close(write)


def test_a_library_callers_writes_stay_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside `two_processes_allowed()` (the console program's simulate) nothing forks."""
    monkeypatch.setattr(halves, "SPLIT_ITEMS", 8)
    monkeypatch.setattr(halves, "_a_cpu_is_idle", lambda: True)
    with reference_mode_set(False):
        assert not halves.two_processes_help(8)
