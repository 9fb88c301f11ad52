"""The shortcuts of the metadata and name checks give exactly what the full checks give: a valid
name told by one match (names.name_is_dns_subdomain/label, is_valid_label_value), names checked at
once (objectmeta._valid_names_at_once) and the content key of metadata holding names and labels
only (objectmeta._labels_only_key). Each is compared with the path it stands for, on tables and
on generated values close to the boundaries (lengths 63/64 and 253/254, dots, dashes, case)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.api.validation import names
from kubetaint.api.validation.objectmeta import (
    _content_key,
    _labels_only_key,
    _valid_names_at_once,
    _validate_meta_content,
    _validate_names,
    validate_object_meta,
)

JSON = dict[str, Any]

NAME_CHARS = st.sampled_from(list("ab9-.Z_ /\n"))
NAMES = st.one_of(
    st.text(NAME_CHARS, max_size=12),
    st.builds(
        lambda n, s: "a" * n + s,
        st.sampled_from([62, 63, 64, 252, 253, 254]),
        st.sampled_from(["", "b", "-", ".c"]),
    ),
    st.text(max_size=6),
)


@settings(max_examples=400, deadline=None)
@given(NAMES, st.booleans())
def test_a_name_check_gives_what_the_remembered_check_gives(name: str, prefix: bool) -> None:
    masked = names._mask_trailing_dash(name) if prefix else name
    assert names.name_is_dns_subdomain(name, prefix) == names.is_dns1123_subdomain(masked)
    assert names.name_is_dns_label(name, prefix) == names.is_dns1123_label(masked)


@settings(max_examples=300, deadline=None)
@given(NAMES)
def test_a_label_value_check_gives_what_the_remembered_check_gives(value: str) -> None:
    assert names.is_valid_label_value(value) == names._label_value_errors(value)


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        pytest.param("node-1", True, id="a plain label value is valid"),
        pytest.param("", True, id="an empty label value is valid"),
        pytest.param("a" * 63, True, id="63 characters are allowed"),
        pytest.param("a" * 64, False, id="64 characters are too long"),
        pytest.param("-a", False, id="a leading dash is refused"),
        pytest.param("a\n", False, id="a trailing newline is refused (Go's $)"),
    ],
)
def test_label_values_at_the_boundaries(value: str, valid: bool) -> None:
    assert (names.is_valid_label_value(value) == []) is valid


def _names_by_hand(meta: JSON, namespaced: bool, dns_label: bool) -> list[str]:
    name_fn = names.name_is_dns_label if dns_label else names.name_is_dns_subdomain
    return [str(e) for e in _validate_names(meta, namespaced=namespaced, name_fn=name_fn, path="metadata")]


METAS = st.fixed_dictionaries(
    {},
    optional={
        "name": st.one_of(NAMES, st.none(), st.integers(0, 3)),
        "generateName": st.one_of(st.sampled_from(["", "web-", "Web-"]), st.none()),
        "namespace": st.one_of(
            st.sampled_from(["", "default", "kube-system", "a.b", "A", "x" * 64]), st.none(), st.just(7)
        ),
        "labels": st.one_of(
            st.dictionaries(
                st.sampled_from(["app", "a/b", "-x", "k"]), st.one_of(NAMES, st.integers(0, 2)), max_size=2
            ),
            st.none(),
            st.just("labels"),
        ),
        "annotations": st.one_of(
            st.dictionaries(st.sampled_from(["n", "-"]), st.just("v"), max_size=1), st.none()
        ),
        "generation": st.one_of(st.integers(-2, 2), st.none()),
        "finalizers": st.one_of(
            st.lists(st.sampled_from(["kubernetes", "a/b", "bad name"]), max_size=2), st.none()
        ),
        "ownerReferences": st.one_of(st.just([]), st.none()),
    },
)


@settings(max_examples=500, deadline=None)
@given(METAS, st.booleans(), st.booleans())
def test_names_checked_at_once_are_what_the_name_checks_find(
    meta: JSON, namespaced: bool, dns_label: bool
) -> None:
    name_fn = names.name_is_dns_label if dns_label else names.name_is_dns_subdomain
    at_once = _valid_names_at_once(meta, namespaced, name_fn)
    if at_once is not None:
        assert at_once == [] and _names_by_hand(meta, namespaced, dns_label) == []


@settings(max_examples=500, deadline=None)
@given(METAS)
def test_the_labels_only_key_is_the_content_key(meta: JSON) -> None:
    try:
        expected: Any = _content_key(meta, "metadata")
    except TypeError:
        expected = TypeError
    try:
        fast: Any = _labels_only_key(meta, "metadata")
    except TypeError:
        fast = TypeError
    assert fast is None or fast == expected


@settings(max_examples=500, deadline=None)
@given(METAS, st.booleans(), st.booleans())
def test_validate_object_meta_reports_what_every_check_reports(
    meta: JSON, namespaced: bool, dns_label: bool
) -> None:
    name_fn = names.name_is_dns_label if dns_label else names.name_is_dns_subdomain
    expected = _names_by_hand(meta, namespaced, dns_label) + [
        str(e) for e in _validate_meta_content(meta, "metadata")
    ]
    assert [str(e) for e in validate_object_meta(meta, namespaced=namespaced, name_fn=name_fn)] == expected


@pytest.mark.parametrize(
    ("meta", "namespaced", "found"),
    [
        pytest.param({"name": "web-1"}, True, [], id="a valid name without a namespace is checked at once"),
        pytest.param({"name": "web-1", "namespace": "default"}, True, [], id="a valid namespace too"),
        pytest.param(
            {"name": "web-1", "namespace": "default"},
            False,
            None,
            id="a namespace on a cluster-scoped kind is looked at",
        ),
        pytest.param({"name": "Web"}, True, None, id="an invalid name is looked at"),
        pytest.param({"generateName": "web-"}, True, None, id="a generateName is looked at"),
        pytest.param(
            {"name": "web", "namespace": "a.b"},
            True,
            None,
            id="a namespace that is no DNS label is looked at",
        ),
        pytest.param({"name": 3}, True, None, id="a name that is not a string is looked at"),
    ],
)
def test_which_names_are_checked_at_once(meta: JSON, namespaced: bool, found: list[Any] | None) -> None:
    assert _valid_names_at_once(meta, namespaced, names.name_is_dns_subdomain) == found


@pytest.mark.parametrize(
    "meta",
    [
        pytest.param({"name": "a", "generation": 1}, id="a generation"),
        pytest.param({"name": "a", "annotations": {}}, id="annotations"),
        pytest.param({"name": "a", "ownerReferences": []}, id="owner references"),
        pytest.param({"name": "a", "finalizers": []}, id="finalizers"),
        pytest.param({"name": "a", "labels": "x"}, id="labels that are not a dict"),
    ],
)
def test_metadata_with_more_than_names_and_labels_takes_the_content_key(meta: JSON) -> None:
    assert _labels_only_key(meta, "metadata") is None


def test_labels_that_are_not_strings_are_refused_as_the_content_key_refuses_them() -> None:
    meta = {"name": "a", "labels": {"app": 1}}
    with pytest.raises(TypeError):
        _content_key(meta, "metadata")
    with pytest.raises(TypeError):
        _labels_only_key(meta, "metadata")
    errors = [
        str(e) for e in validate_object_meta(meta, namespaced=True, name_fn=names.name_is_dns_subdomain)
    ]
    assert errors == [str(e) for e in _validate_meta_content(meta, "metadata")]
