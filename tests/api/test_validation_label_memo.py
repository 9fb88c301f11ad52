"""`validate_labels` remembers each label's errors by its key, value text and path: asked again
and again (a node group's labels, invalid ones too), it must return exactly what checking each
label afresh returns, in sorted key order, for any labels."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.api.validation import field as f
from kubetaint.api.validation.names import is_valid_label_value
from kubetaint.api.validation.objectmeta import validate_label_name, validate_labels


def afresh(labels: Mapping[str, Any], path: str) -> list[f.FieldError]:
    """ValidateLabels worked out label by label, nothing remembered."""
    errs: list[f.FieldError] = []
    for key in sorted(labels):
        value = labels[key]
        errs.extend(validate_label_name(key, path))
        text = "" if value is None else str(value)
        errs.extend(f.invalid(path, text, msg) for msg in is_valid_label_value(text))
    return errs


TABLE = [
    pytest.param({}, id="no labels"),
    pytest.param({"kubernetes.io/hostname": "node-1", "topology.kubernetes.io/zone": "a"}, id="valid labels"),
    pytest.param({"bad key!": "x", "ok": "-bad-value-"}, id="an invalid key and an invalid value"),
    pytest.param({"a": None, "b": 1, "c": "1", "d": True}, id="values that are no strings"),
    pytest.param({"k": "v" * 64, "/": "", "p/": "x"}, id="too long, empty prefix and name"),
]


@pytest.mark.parametrize("labels", TABLE)
@pytest.mark.parametrize("path", ["metadata.labels", "spec.nodeSelector"])
def test_remembered_label_errors_are_the_errors_worked_out_afresh(labels: dict[str, Any], path: str) -> None:
    expected = afresh(labels, path)
    assert validate_labels(labels, path) == expected
    assert validate_labels(dict(labels), path) == expected  # asked again: remembered


def test_a_returned_list_is_the_callers_own() -> None:
    first = validate_labels({"bad key!": "x"}, "metadata.labels")
    first.clear()
    assert validate_labels({"bad key!": "x"}, "metadata.labels") == afresh(
        {"bad key!": "x"}, "metadata.labels"
    )


TEXT = st.sampled_from(["a", "node-1", "zone-b", "-x", "x-", "a/b", "k8s.io/x", "", "bad key", "é", "v" * 64])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(TEXT, st.one_of(st.none(), TEXT, st.integers(-2, 2))), max_size=4))
def test_any_labels_asked_in_turn_get_the_errors_worked_out_afresh(sets: list[dict[str, Any]]) -> None:
    for labels in [*sets, *sets]:
        assert validate_labels(labels, "metadata.labels") == afresh(labels, "metadata.labels")
