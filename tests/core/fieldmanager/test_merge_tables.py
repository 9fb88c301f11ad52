"""structured-merge-diff's merge tests (merge/leaf_test.go, merge/set_test.go,
merge/multiple_appliers_test.go), ported as data: each case runs its operations (apply, force
apply, update) on one state and checks the conflicts each apply meets, the final object (lists
compared as upstream's fixture compares them, by key) and who owns which fields."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kubetaint.core.fieldmanager import fieldpath as fp
from kubetaint.core.fieldmanager.fieldpath import FieldSet, Path
from kubetaint.core.fieldmanager.merge import ConflictsError, Managers, apply, update
from kubetaint.core.fieldmanager.schema import LIST, SCALAR, STRUCT, Atom
from kubetaint.core.fieldmanager.typed import compare

SCALAR_ATOM = Atom(SCALAR)
LEAF_FIELDS = Atom(STRUCT, fields={"numeric": SCALAR_ATOM, "string": SCALAR_ATOM, "bool": SCALAR_ATOM})
SETS = Atom(STRUCT, fields={"list": Atom(LIST, element=SCALAR_ATOM, keys=None)})
_ITEM = Atom(STRUCT, fields={"name": SCALAR_ATOM, "value": SCALAR_ATOM})
ASSOCIATIVE = Atom(STRUCT, fields={"list": Atom(LIST, element=_ITEM, keys=("name",))})


def P(*elements: Any) -> Path:
    """_P: strings are field names, dicts keys, ('v', x) set values."""
    out = []
    for e in elements:
        if isinstance(e, str):
            out.append(fp.field(e))
        elif isinstance(e, dict):
            out.append(fp.key(e))
        else:
            out.append(fp.value(e[1]))
    return tuple(out)


def run(atom: Atom, ops: list[tuple[Any, ...]]) -> tuple[Any, Managers]:
    live: Any = {}
    managers: Managers = {}
    for op in ops:
        verb, manager, text = op[0], op[1], op[2]
        obj = yaml.safe_load(text) or {}
        if verb == "update":
            managers = update(atom, live, obj, managers, manager=manager, version="v1")
            live = obj
            continue
        force = verb == "force"
        expected = op[3] if len(op) > 3 else None
        try:
            merged, managers = apply(atom, live, obj, managers, manager=manager, version="v1", force=force)
        except ConflictsError as exc:
            assert expected is not None, f"unexpected conflicts {exc.conflicts}"
            assert {(c.manager, c.path) for c in exc.conflicts} == set(expected)
            continue
        assert expected is None, f"expected conflicts {expected}"
        if merged is not None:
            live = merged
    return live, managers


def _same(atom: Atom, a: Any, b: Any) -> bool:
    c = compare(a, b, atom)
    return c.added.empty() and c.modified.empty() and c.removed.empty()


LEAF_CASES = [
    pytest.param(
        [
            ("apply", "default", "numeric: 1\nstring: string"),
            ("apply", "default", "numeric: 2\nstring: string\nbool: false"),
        ],
        "numeric: 2\nstring: string\nbool: false",
        {"default": [P("numeric"), P("string"), P("bool")]},
        id="applying twice owns the union of the second configuration",
    ),
    pytest.param(
        [
            ("apply", "default", "numeric: 1\nstring: string"),
            ("update", "controller", "numeric: 1\nstring: string\nbool: true"),
            ("apply", "default", "numeric: 2\nstring: string"),
        ],
        "numeric: 2\nstring: string\nbool: true",
        {"default": [P("numeric"), P("string")], "controller": [P("bool")]},
        id="an update between two applies of other fields conflicts with nothing",
    ),
    pytest.param(
        [
            ("apply", "default", "numeric: 1\nstring: string"),
            ("update", "controller", "numeric: 1\nstring: controller string\nbool: true"),
            ("apply", "default", "numeric: 2\nstring: user string", [("controller", P("string"))]),
            ("force", "default", "numeric: 2\nstring: user string"),
        ],
        "numeric: 2\nstring: user string\nbool: true",
        {"default": [P("numeric"), P("string")], "controller": [P("bool")]},
        id="an apply of a field an updater changed conflicts and a forced one takes it",
    ),
    pytest.param(
        [
            ("apply", "default", "numeric: 1\nstring: string\nbool: false"),
            ("apply", "default", "string: new string"),
        ],
        "string: new string",
        {"default": [P("string")]},
        id="fields no longer applied are removed",
    ),
    pytest.param(
        [
            ("apply", "default", "numeric: 2"),
            ("update", "controller", "numeric: 1"),
            ("apply", "default", ""),
        ],
        "numeric: 1",
        {"controller": [P("numeric")]},
        id="a field an updater took is kept when the applier stops applying it",
    ),
    pytest.param(
        [
            ("apply", "default", "string: string"),
            ("update", "controller", "string: new string"),
        ],
        "string: new string",
        {"controller": [P("string")]},
        id="an update takes a field and leaves the applier with no entry",
    ),
    pytest.param(
        [("apply", "default", "string: string"), ("apply", "default", "")],
        "",
        {},
        id="applying an empty configuration removes what was applied",
    ),
]


SET_CASES = [
    pytest.param(
        [
            ("apply", "default", "list: [a, c]"),
            ("apply", "default", "list: [a, b, c, d]"),
        ],
        "list: [a, b, c, d]",
        {"default": [P("list", ("v", x)) for x in "abcd"]},
        id="set items applied twice",
    ),
    pytest.param(
        [
            ("apply", "default", "list: [a, c]"),
            ("update", "controller", "list: [a, b, c, d]"),
            ("apply", "default", "list: [a, aprime, c, cprime]"),
        ],
        "list: [a, aprime, b, c, cprime, d]",
        {
            "default": [P("list", ("v", x)) for x in ("a", "aprime", "c", "cprime")],
            "controller": [P("list", ("v", "b")), P("list", ("v", "d"))],
        },
        id="set items of an applier and an updater that do not overlap",
    ),
    pytest.param(
        [
            ("apply", "default", "list: [a, c]"),
            ("update", "controller", "list: [a, b, c, d]"),
            ("apply", "default", "list: [a, b, c]"),
        ],
        "list: [a, b, c, d]",
        {
            "default": [P("list", ("v", x)) for x in "abc"],
            "controller": [P("list", ("v", "b")), P("list", ("v", "d"))],
        },
        id="a set item applied with the value an updater set is shared",
    ),
    pytest.param(
        [
            ("apply", "default", "list: [a, b, c, d]"),
            ("apply", "default", "list: [a, d, c, b]"),
        ],
        "list: [a, d, c, b]",
        {"default": [P("list", ("v", x)) for x in "abcd"]},
        id="set items reordered by the applier",
    ),
    pytest.param(
        [
            ("apply", "default", "list: [a, b, c, d]"),
            ("apply", "default", "list: [a, c]"),
        ],
        "list: [a, c]",
        {"default": [P("list", ("v", "a")), P("list", ("v", "c"))]},
        id="set items no longer applied are removed",
    ),
]

ASSOCIATIVE_CASES = [
    pytest.param(
        [
            ("apply", "apply-one", "list: [{name: a}, {name: b}]"),
            ("apply", "apply-two", "list: [{name: c}]"),
            ("apply", "apply-one", "list: [{name: a}]"),
        ],
        "list: [{name: a}, {name: c}]",
        {
            "apply-one": [P("list", {"name": "a"}), P("list", {"name": "a"}, "name")],
            "apply-two": [P("list", {"name": "c"}), P("list", {"name": "c"}, "name")],
        },
        id="two appliers of one keyed list: an item one stops applying is removed",
    ),
    pytest.param(
        [
            ("apply", "apply-one", "list: [{name: a, value: '1'}]"),
            (
                "apply",
                "apply-two",
                "list: [{name: a, value: '2'}]",
                [("apply-one", P("list", {"name": "a"}, "value"))],
            ),
            ("force", "apply-two", "list: [{name: a, value: '2'}]"),
            ("apply", "apply-one", "list: []"),
        ],
        "list: [{name: a, value: '2'}]",
        {
            "apply-two": [
                P("list", {"name": "a"}),
                P("list", {"name": "a"}, "name"),
                P("list", {"name": "a"}, "value"),
            ]
        },
        id="an item another applier shares survives its first applier",
    ),
    pytest.param(
        [
            ("apply", "apply-one", "list: [{name: a, value: '1'}]"),
            ("update", "controller", "list: [{name: a, value: '1'}, {name: b, value: '2'}]"),
            ("apply", "apply-one", "list: [{name: a, value: '3'}]"),
        ],
        "list: [{name: a, value: '3'}, {name: b, value: '2'}]",
        {
            "apply-one": [
                P("list", {"name": "a"}),
                P("list", {"name": "a"}, "name"),
                P("list", {"name": "a"}, "value"),
            ],
            "controller": [
                P("list", {"name": "b"}),
                P("list", {"name": "b"}, "name"),
                P("list", {"name": "b"}, "value"),
            ],
        },
        id="an item an updater added is kept by an applier's next apply",
    ),
]


def _check(
    atom: Atom, ops: list[tuple[Any, ...]], want_object: str, want_managers: dict[str, list[Path]]
) -> None:
    live, managers = run(atom, ops)
    assert _same(atom, live, yaml.safe_load(want_object) or {}), live
    assert {m: s.fields for m, s in managers.items()} == {
        m: FieldSet.of(*paths) for m, paths in want_managers.items()
    }


@pytest.mark.parametrize(("ops", "want_object", "want_managers"), LEAF_CASES)
def test_leaf_fields(
    ops: list[tuple[Any, ...]], want_object: str, want_managers: dict[str, list[Path]]
) -> None:
    _check(LEAF_FIELDS, ops, want_object, want_managers)


@pytest.mark.parametrize(("ops", "want_object", "want_managers"), SET_CASES)
def test_sets(ops: list[tuple[Any, ...]], want_object: str, want_managers: dict[str, list[Path]]) -> None:
    _check(SETS, ops, want_object, want_managers)


@pytest.mark.parametrize(("ops", "want_object", "want_managers"), ASSOCIATIVE_CASES)
def test_associative_lists(
    ops: list[tuple[Any, ...]], want_object: str, want_managers: dict[str, list[Path]]
) -> None:
    _check(ASSOCIATIVE, ops, want_object, want_managers)


def test_merged_list_keeps_the_applied_order_of_shared_items() -> None:
    live, _ = run(
        SETS, [("apply", "default", "list: [a, b, c, d]"), ("apply", "default", "list: [a, d, c, b]")]
    )
    assert live == {"list": ["a", "d", "c", "b"]}
