"""kubectl taint's pure logic, with upstream's utils_test.go and taint_test.go tables as data."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.core.taintspec import (
    MODIFIED,
    TAINTED,
    UNTAINTED,
    check_conflicts,
    parse_taint_spec,
    prepare_taint_command,
    reorganize_taints,
    split_taint_args,
    taints_already_exist,
    update_taints,
    validate_taint_flags,
)

NS = "NoSchedule"
NE = "NoExecute"
PNS = "PreferNoSchedule"


def t(key: str, value: str = "", effect: str = "") -> dict[str, Any]:
    taint: dict[str, Any] = {"key": key}
    if value:
        taint["value"] = value
    if effect:
        taint["effect"] = effect
    return taint


# TestParseTaints
PARSE_OK = [
    pytest.param(
        [
            "foo=abc:NoSchedule",
            "bar=abc:NoSchedule",
            "baz:NoSchedule",
            "qux:NoSchedule",
            "foobar=:NoSchedule",
        ],
        [t("foo", "abc", NS), t("bar", "abc", NS), t("baz", "", NS), t("qux", "", NS), t("foobar", "", NS)],
        [],
        id="add new taints, an empty value after = is allowed",
    ),
    pytest.param(
        ["foo:NoSchedule-", "bar:NoSchedule-", "qux=:NoSchedule-", "dedicated-"],
        [],
        [t("foo", effect=NS), t("bar", effect=NS), t("qux", effect=NS), t("dedicated")],
        id="delete taints by key and effect or by key alone",
    ),
    pytest.param(
        [
            "foo=abc:NoSchedule",
            "bar=abc:NoSchedule",
            "baz:NoSchedule",
            "qux:NoSchedule",
            "foobar=:NoSchedule",
            "foo:NoSchedule-",
            "bar:NoSchedule-",
            "baz=:NoSchedule-",
        ],
        [t("foo", "abc", NS), t("bar", "abc", NS), t("baz", "", NS), t("qux", "", NS), t("foobar", "", NS)],
        [t("foo", effect=NS), t("bar", effect=NS), t("baz", effect=NS)],
        id="add taints and delete taints",
    ),
    pytest.param(["k=anything:NoExecute-"], [], [t("k", effect=NE)], id="a removal drops the value"),
]


@pytest.mark.parametrize(("spec", "to_add", "to_remove"), PARSE_OK)
def test_parse_taints(spec: list[str], to_add: list[dict[str, Any]], to_remove: list[dict[str, Any]]) -> None:
    assert parse_taint_spec(spec) == (to_add, to_remove)


QNAME = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)

PARSE_ERRORS = [
    pytest.param([""], f"invalid taint spec: , name part must be non-empty; {QNAME}", id="an empty spec"),
    pytest.param(
        ["foo=abc"], f"invalid taint spec: foo=abc, {QNAME}", id="a value without an effect is an invalid key"
    ),
    pytest.param(
        ["foo=abc=xyz:NoSchedule"], "invalid taint spec: foo=abc=xyz:NoSchedule", id="two equals signs"
    ),
    pytest.param(
        ["foo=abc:xyz:NoSchedule"], "invalid taint spec: foo=abc:xyz:NoSchedule", id="more than one colon"
    ),
    pytest.param(["foo"], "invalid taint spec: foo", id="an addition needs an effect"),
    pytest.param(
        ["foo=abc:invalid_effect"],
        "invalid taint effect: invalid_effect, unsupported taint effect",
        id="an unknown effect on an addition",
    ),
    pytest.param(
        ["foo:invalid_effect-"],
        "invalid taint effect: invalid_effect, unsupported taint effect",
        id="an unknown effect on a removal",
    ),
    pytest.param(
        ["foo=bar:NoExcute"],
        "invalid taint effect: NoExcute, unsupported taint effect",
        id="the misspelled NoExcute of upstream's tests is an effect error",
    ),
    pytest.param(
        ["foo=bar:NoSchedule", "foo=baz:NoSchedule"],
        "duplicated taints with the same key and effect: {foo baz NoSchedule <nil>}",
        id="duplicated additions by key and effect",
    ),
    pytest.param(
        ["foo=-bad:NoSchedule"],
        "invalid taint spec: foo=-bad:NoSchedule, a valid label must be an empty string or consist of alphanumeric "
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        id="an invalid value",
    ),
    pytest.param(
        ["nospecialchars^@=banana:NoSchedule"],
        f"invalid taint spec: nospecialchars^@=banana:NoSchedule, {QNAME}",
        id="an invalid key",
    ),
]


@pytest.mark.parametrize(("spec", "message"), PARSE_ERRORS)
def test_parse_taint_errors(spec: list[str], message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_taint_spec(spec)
    assert str(info.value) == message


SPLIT_CASES = [
    pytest.param(
        ["node", "n1", "k=v:NoSchedule"], (["node", "n1"], ["k=v:NoSchedule"]), id="resources then taints"
    ),
    pytest.param(
        ["nodes", "a", "b", "k-", "x:NoExecute"],
        (["nodes", "a", "b"], ["k-", "x:NoExecute"]),
        id="several of each",
    ),
]


@pytest.mark.parametrize(("args", "expected"), SPLIT_CASES)
def test_split_args(args: list[str], expected: tuple[list[str], list[str]]) -> None:
    assert split_taint_args(args) == expected


SPLIT_ERRORS = [
    pytest.param(
        ["node", "k=v:NoSchedule", "n1"],
        "all resources must be specified before taint changes: n1",
        id="a resource after a taint",
    ),
    pytest.param(
        ["k=v:NoSchedule"], "one or more resources must be specified as <resource> <name>", id="no resources"
    ),
    pytest.param(["node", "n1"], "at least one taint update is required", id="no taint args"),
]


@pytest.mark.parametrize(("args", "message"), SPLIT_ERRORS)
def test_split_args_errors(args: list[str], message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(") + "$"):
        split_taint_args(args)


def test_conflicts_list_every_pair() -> None:
    with pytest.raises(ValueError) as info:
        check_conflicts([t("a", "", NS), t("b", "", NE)], [t("a"), t("b", effect=NE), t("b", effect=NS)])
    assert str(info.value) == (
        'can not both modify and remove the following taint(s) in the same command: {"a":""}, {"b":"NoExecute"}'
    )


def test_no_conflict_for_a_different_effect() -> None:
    check_conflicts([t("a", "", NS)], [t("a", effect=NE)])


# TestValidateFlags
FLAG_CASES = [
    pytest.param(["node"], False, "myLabel=X", None, id="with selector and without all"),
    pytest.param(["node"], True, "", None, id="with all and without selector"),
    pytest.param(
        ["node"],
        True,
        "myLabel=X",
        "setting 'all' parameter with a non empty selector is prohibited",
        id="with both",
    ),
    pytest.param(
        ["node"],
        False,
        "",
        "at least one resource name must be specified since 'all' parameter is not set",
        id="no node name",
    ),
    pytest.param(["node", "node-name"], False, "", None, id="a node name"),
]


@pytest.mark.parametrize(("resources", "all_nodes", "selector", "error"), FLAG_CASES)
def test_validate_flags(resources: list[str], all_nodes: bool, selector: str, error: str | None) -> None:
    if error is None:
        validate_taint_flags(resources, all_nodes=all_nodes, selector=selector)
    else:
        with pytest.raises(ValueError, match=error):
            validate_taint_flags(resources, all_nodes=all_nodes, selector=selector)


OLD = [t("foo_1", "bar", NS), t("foo_2", "bar", NS), t("foo_3", "bar", NS)]


# TestCheckIfTaintsAlreadyExists
@pytest.mark.parametrize(
    ("to_add", "expected"),
    [
        pytest.param([], "", id="empty array"),
        pytest.param([t("foo_1", effect=NE)], "", id="no match"),
        pytest.param([t("foo_2", effect=NS)], "foo_2", id="match one taint"),
        pytest.param([t("foo_2", effect=NS), t("foo_3", effect=NS)], "foo_2,foo_3", id="match two taints"),
    ],
)
def test_taints_already_exist(to_add: list[dict[str, Any]], expected: str) -> None:
    assert taints_already_exist(OLD, to_add) == expected


NODE_TAINTS = [t("foo", "bar", NS)]

# TestReorganizeTaints
REORGANIZE = [
    pytest.param(True, [], [], NODE_TAINTS, MODIFIED, id="no changes with overwrite is true"),
    pytest.param(False, [], [], NODE_TAINTS, UNTAINTED, id="no changes with overwrite is false"),
    pytest.param(
        False, [t("foo_1", effect=NE)], [], [t("foo_1", effect=NE), *NODE_TAINTS], TAINTED, id="add new taint"
    ),
    pytest.param(False, [], [t("foo", effect=NS)], [], UNTAINTED, id="delete taint with effect"),
    pytest.param(False, [], [t("foo")], [], UNTAINTED, id="delete taint with no effect"),
    pytest.param(
        False,
        [t("foo_1", effect=NS)],
        [t("foo", effect=NS)],
        [t("foo_1", effect=NS)],
        MODIFIED,
        id="add new taint and delete old one",
    ),
    pytest.param(True, [], [t("foo")], [], MODIFIED, id="a pure removal with overwrite prints modified"),
]


@pytest.mark.parametrize(("overwrite", "to_add", "to_remove", "taints", "operation"), REORGANIZE)
def test_reorganize_taints(
    overwrite: bool,
    to_add: list[dict[str, Any]],
    to_remove: list[dict[str, Any]],
    taints: list[dict[str, Any]],
    operation: str,
) -> None:
    assert reorganize_taints(NODE_TAINTS, overwrite, to_add, to_remove) == (operation, taints)


@pytest.mark.parametrize(
    ("to_remove", "message"),
    [
        pytest.param(
            [t("foo_1", effect=NS)], 'taint "foo_1:NoSchedule" not found', id="delete non-exist taint"
        ),
        pytest.param([t("x")], 'taint "x" not found', id="a missing key-only removal"),
        pytest.param(
            [t("x"), t("y", effect=NE)],
            '[taint "x" not found, taint "y:NoExecute" not found]',
            id="errors aggregate",
        ),
    ],
)
def test_reorganize_missing_taint(to_remove: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(ValueError) as info:
        reorganize_taints(NODE_TAINTS, False, [], to_remove)
    assert str(info.value) == message


def test_reorganize_keeps_old_fields_and_order() -> None:
    old = [t("a", "1", NS), {"key": "b", "effect": NE, "timeAdded": "2024-01-01T00:00:00Z"}, t("c", "", PNS)]
    op, taints = reorganize_taints(old, True, [t("c", "2", PNS)], [])
    assert op == MODIFIED
    assert taints == [t("c", "2", PNS), t("a", "1", NS), old[1]]


# TestTaint: the whole command, as upstream runs it against a node.
TAINT_COMMAND = [
    pytest.param(
        [],
        ["node", "node-name", "foo=bar:NoSchedule"],
        [t("foo", "bar", NS)],
        TAINTED,
        id="taints a node with effect NoSchedule",
    ),
    pytest.param(
        [],
        ["node", "node-name", "foo=bar:PreferNoSchedule"],
        [t("foo", "bar", PNS)],
        TAINTED,
        id="taints a node with effect PreferNoSchedule",
    ),
    pytest.param(
        [t("foo", "bar", NS)],
        ["node", "node-name", "foo=barz:NoSchedule", "--overwrite"],
        [t("foo", "barz", NS)],
        MODIFIED,
        id="update an existing taint with overwrite",
    ),
    pytest.param(
        [],
        ["node", "node-name", "dedicated=namespaceA:NoSchedule", "foo=bar:PreferNoSchedule"],
        [t("dedicated", "namespaceA", NS), t("foo", "bar", PNS)],
        TAINTED,
        id="taints a node with two taints",
    ),
    pytest.param(
        [t("dedicated", "namespaceA", NS), t("dedicated", "namespaceA", PNS)],
        ["node", "node-name", "dedicated:NoSchedule-"],
        [t("dedicated", "namespaceA", PNS)],
        UNTAINTED,
        id="remove one of two same-key taints by key and effect",
    ),
    pytest.param(
        [t("dedicated", "namespaceA", NS), t("dedicated", "namespaceA", PNS)],
        ["node", "node-name", "dedicated-"],
        [],
        UNTAINTED,
        id="remove every effect of a key",
    ),
    pytest.param(
        [t("dedicated", "namespaceA", NS), t("foo", "bar", PNS)],
        ["node", "node-name", "dedicated:NoSchedule-", "foo=barz:PreferNoSchedule", "--overwrite"],
        [t("foo", "barz", PNS)],
        MODIFIED,
        id="update one taint and remove the other",
    ),
]


def _run(old: list[dict[str, Any]], args: list[str]) -> tuple[str, list[dict[str, Any]]]:
    overwrite = "--overwrite" in args
    command = prepare_taint_command([a for a in args if a != "--overwrite"])
    return update_taints(command.resources[1], old, overwrite, command.to_add, command.to_remove)


@pytest.mark.parametrize(("old", "args", "taints", "operation"), TAINT_COMMAND)
def test_taint_command(
    old: list[dict[str, Any]], args: list[str], taints: list[dict[str, Any]], operation: str
) -> None:
    assert _run(old, args) == (operation, taints)


TAINT_COMMAND_ERRORS = [
    pytest.param(
        [],
        ["node", "node-name", "foo=bar:NoExcute"],
        "invalid taint effect: NoExcute, unsupported taint effect\nSee 'kubectl taint -h' for help and examples",
        id="invalid taint effect carries the usage hint",
    ),
    pytest.param(
        [],
        ["node", "node-name", "foo=:NoSchedule", "foo=:NoSchedule-"],
        'can not both modify and remove the following taint(s) in the same command: {"foo":"NoSchedule"}',
        id="add and remove the same key and effect",
    ),
    pytest.param(
        [t("foo", "bar", NS)],
        ["node", "node-name", "foo=bar:NoSchedule"],
        "node node-name already has foo taint(s) with same effect(s) and --overwrite is false",
        id="re-adding an identical taint without overwrite",
    ),
    pytest.param(
        [],
        ["pods", "p", "foo=bar:NoSchedule"],
        "invalid resource type pods, only node types are supported",
        id="only nodes",
    ),
]


@pytest.mark.parametrize(("old", "args", "message"), TAINT_COMMAND_ERRORS)
def test_taint_command_errors(old: list[dict[str, Any]], args: list[str], message: str) -> None:
    with pytest.raises(ValueError) as info:
        _run(old, args)
    assert str(info.value) == message


@pytest.mark.parametrize("resource", ["node", "nodes", "no", "NODES"])
def test_node_resource_spellings(resource: str) -> None:
    assert prepare_taint_command([resource, "n", "k:NoSchedule"]).resources[0] == resource
