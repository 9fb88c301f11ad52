"""The remembered valid names (names.is_valid_subdomain_name / is_valid_label_name: a node name
asked about in each of its pods' nodeName, a namespace in each of its objects) answer as the
checks they stand for, asked once or again, past their limit too; an invalid name is never
remembered (each ask checks it afresh). And the two callers (a pod like a clean one, the names
checked at once) still give what the full checks give."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetaint.api.validation import names
from kubetaint.api.validation.kinds import _node_name_is_valid
from kubetaint.api.validation.objectmeta import _valid_names_at_once, _validate_names
from kubetaint.speed.memo import Memo

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

CHECKS: list[tuple[Callable[[str], bool], Callable[[str, bool], list[str]], Memo[str, bool]]] = [
    (names.is_valid_subdomain_name, names.name_is_dns_subdomain, names._VALID_SUBDOMAINS),
    (names.is_valid_label_name, names.name_is_dns_label, names._VALID_LABELS),
]
CHECK_IDS = ["a DNS subdomain", "a DNS label"]


@pytest.fixture(autouse=True)
def _empty_memos(default_mode: None) -> Iterator[None]:
    for _, _, remembered in CHECKS:
        remembered.clear()
    yield
    for _, _, remembered in CHECKS:
        remembered.clear()


@settings(max_examples=400, deadline=None)
@given(NAMES)
@pytest.mark.parametrize(("remembered_check", "full_check", "memo"), CHECKS, ids=CHECK_IDS)
def test_a_remembered_answer_is_the_full_checks(
    remembered_check: Callable[[str], bool],
    full_check: Callable[[str, bool], list[str]],
    memo: Memo[str, bool],
    name: str,
) -> None:
    expected = not full_check(name, False)
    assert remembered_check(name) is expected
    assert remembered_check(name) is expected, "asked again (remembered when valid)"
    assert (name in memo) is expected, "only valid names are remembered"


@pytest.mark.parametrize(
    ("name", "subdomain", "label"),
    [
        pytest.param("node-1", True, True, id="a plain node name"),
        pytest.param("a.b", True, False, id="dots: a subdomain, not a label"),
        pytest.param("Node", False, False, id="upper case"),
        pytest.param("-a", False, False, id="a leading dash"),
        pytest.param("a-", False, False, id="a trailing dash"),
        pytest.param("a" * 63, True, True, id="63 characters"),
        pytest.param("a" * 64, True, False, id="64 characters"),
        pytest.param("a" * 253, True, False, id="253 characters"),
        pytest.param("a" * 254, False, False, id="254 characters"),
        pytest.param("a\n", False, False, id="a trailing newline"),
    ],
)
def test_a_table_of_names(name: str, subdomain: bool, label: bool) -> None:
    for _ in range(2):
        assert names.is_valid_subdomain_name(name) is subdomain
        assert names.is_valid_label_name(name) is label


@pytest.mark.parametrize(("remembered_check", "full_check", "memo"), CHECKS, ids=CHECK_IDS)
def test_the_memo_starts_afresh_past_its_limit(
    remembered_check: Callable[[str], bool],
    full_check: Callable[[str, bool], list[str]],
    memo: Memo[str, bool],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(memo, "limit", 2)
    for name in ("a", "b", "c"):
        assert remembered_check(name)
    assert "c" in memo and len(memo) == 1
    assert remembered_check("a") and "c" in memo and "a" in memo and len(memo) == 2
    assert not remembered_check("A") and not full_check("a", False)


@settings(max_examples=300, deadline=None)
@given(st.one_of(NAMES, st.none(), st.just("")))
def test_a_pods_node_name_check_is_the_subdomain_check(node_name: str | None) -> None:
    spec = {"nodeName": node_name}
    expected = not node_name or not names.name_is_dns_subdomain(str(node_name))
    assert _node_name_is_valid(spec) is expected
    assert _node_name_is_valid(spec) is expected


@settings(max_examples=300, deadline=None)
@given(NAMES, st.one_of(NAMES, st.none()), st.booleans())
def test_names_checked_at_once_are_the_full_checks(
    name: str, namespace: str | None, namespaced: bool
) -> None:
    meta = {"name": name, "namespace": namespace}
    for _ in range(2):  # the second time with the namespace remembered when valid
        at_once = _valid_names_at_once(meta, namespaced, names.name_is_dns_subdomain)
        if at_once is not None:
            full = _validate_names(
                meta, namespaced=namespaced, name_fn=names.name_is_dns_subdomain, path="metadata"
            )
            assert at_once == full == []
