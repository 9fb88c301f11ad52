"""managedFields entries (apimachinery managedfields/internal: managedfields_test.go,
capmanagers_test.go) and the FieldsV1 encoding (structured-merge-diff fieldpath/serialize_test.go)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kubetaint.core.fieldmanager import entries as ent
from kubetaint.core.fieldmanager import fieldpath as fp
from kubetaint.core.fieldmanager.fieldpath import FieldSet, FieldsV1Error, from_fields_v1


def _set(*names: str) -> dict[str, Any]:
    return FieldSet.of(*((fp.field(n),) for n in names)).to_fields_v1()


def _entry(name: str, version: str, order: int, fields: dict[str, Any]) -> dict[str, Any]:
    return {
        "manager": name,
        "operation": "Update",
        "apiVersion": version,
        "time": f"0001-01-01T{order:02d}:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }


CAP_CASES = [
    pytest.param(
        [_entry(f"update-manager{i}", "v1", i, _set(c)) for i, c in zip(range(1, 5), "abcd", strict=True)],
        [
            _entry("ancient-changes", "v1", 2, _set("a", "b")),
            _entry("update-manager3", "v1", 3, _set("c")),
            _entry("update-manager4", "v1", 4, _set("d")),
        ],
        id="one version, no ancient changes",
    ),
    pytest.param(
        [
            _entry("ancient-changes", "v1", 2, _set("a", "b")),
            _entry("update-manager3", "v1", 3, _set("c")),
            _entry("update-manager4", "v1", 4, _set("d")),
            _entry("update-manager5", "v1", 5, _set("e")),
        ],
        [
            _entry("ancient-changes", "v1", 3, _set("a", "b", "c")),
            _entry("update-manager4", "v1", 4, _set("d")),
            _entry("update-manager5", "v1", 5, _set("e")),
        ],
        id="one version, one ancient changes",
    ),
    pytest.param(
        [
            _entry("update-manager1", "v1", 1, _set("a")),
            _entry("update-manager2", "v2", 2, _set("b")),
            _entry("update-manager3", "v1", 3, _set("c")),
            _entry("update-manager4", "v1", 4, _set("d")),
            _entry("update-manager5", "v1", 5, _set("e")),
        ],
        [
            _entry("update-manager2", "v2", 2, _set("b")),
            _entry("ancient-changes", "v1", 4, _set("a", "c", "d")),
            _entry("update-manager5", "v1", 5, _set("e")),
        ],
        id="two versions, no ancient changes",
    ),
    pytest.param(
        [
            _entry("update-manager2", "v2", 2, _set("b")),
            _entry("ancient-changes", "v1", 4, _set("a", "c", "d")),
            _entry("update-manager5", "v1", 5, _set("e")),
            _entry("update-manager6", "v3", 6, _set("f")),
            _entry("update-manager7", "v2", 7, _set("g")),
        ],
        [
            _entry("ancient-changes", "v1", 5, _set("a", "c", "d", "e")),
            _entry("update-manager6", "v3", 6, _set("f")),
            _entry("ancient-changes", "v2", 7, _set("b", "g")),
        ],
        id="three versions, one ancient changes",
    ),
    pytest.param(
        [
            _entry("ancient-changes", "v1", 5, _set("a", "c", "d", "e")),
            _entry("update-manager6", "v3", 6, _set("f")),
            _entry("ancient-changes", "v2", 7, _set("b", "g")),
            _entry("update-manager8", "v3", 8, _set("h")),
        ],
        [
            _entry("ancient-changes", "v1", 5, _set("a", "c", "d", "e")),
            _entry("ancient-changes", "v2", 7, _set("b", "g")),
            _entry("ancient-changes", "v3", 8, _set("f", "h")),
        ],
        id="three versions, two ancient changes",
    ),
    pytest.param(
        [
            _entry("ancient-changes", "v1", 5, _set("a", "c", "d", "e")),
            _entry("update-manager6", "v3", 6, _set("f")),
            _entry("ancient-changes", "v2", 7, _set("b", "g")),
            _entry("update-manager8", "v4", 8, _set("h")),
        ],
        [
            _entry("ancient-changes", "v1", 5, _set("a", "c", "d", "e")),
            _entry("update-manager6", "v3", 6, _set("f")),
            _entry("ancient-changes", "v2", 7, _set("b", "g")),
            _entry("update-manager8", "v4", 8, _set("h")),
        ],
        id="four versions, two ancient changes",
    ),
]


@pytest.mark.parametrize(("given", "expected"), CAP_CASES)
def test_cap_update_managers(given: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    capped = ent.cap_update_managers(ent.decode(given), limit=3)
    assert ent.encode(capped) == expected
    assert ent.encode(ent.cap_update_managers(ent.decode(expected), limit=3)) == expected  # idempotent


DECODE_ERRORS = [
    pytest.param(
        [{"operation": "Delete", "apiVersion": "v1", "fieldsType": "FieldsV1"}],
        "operation must be `Apply` or `Update`",
        id="an unknown operation",
    ),
    pytest.param(
        [{"operation": "Update", "fieldsType": "FieldsV1"}],
        "apiVersion must not be empty",
        id="no apiVersion",
    ),
    pytest.param(
        [{"operation": "Apply", "apiVersion": "v1"}],
        "missing fieldsType in managed fields entry 0",
        id="no fieldsType",
    ),
    pytest.param(
        [{"operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV2"}],
        'invalid fieldsType "FieldsV2" in managed fields entry 0',
        id="an unknown fieldsType",
    ),
]


@pytest.mark.parametrize(("entries", "message"), DECODE_ERRORS)
def test_decode_rejects_bad_entries_with_upstreams_message(
    entries: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(
        ent.ManagedFieldsError, match=message.replace("`", ".").replace("(", ".").replace(")", ".")
    ):
        ent.decode(entries)


def test_entries_sort_apply_first_then_by_time_and_manager() -> None:
    given = [
        _entry("b", "v1", 1, _set("x")),
        _entry("a", "v1", 1, _set("y")),
        {**_entry("z", "v1", 9, _set("w")), "operation": "Apply"},
        _entry("c", "v1", 0, _set("v")),
    ]
    assert [e["manager"] for e in ent.encode(ent.decode(given))] == ["z", "c", "a", "b"]


@pytest.mark.parametrize(
    ("given", "reset"),
    [
        pytest.param([], True, id="an empty list resets"),
        pytest.param([{}], True, id="a list of one empty entry resets"),
        pytest.param(None, False, id="no managedFields keeps the stored ones"),
        pytest.param([{}, {}], False, id="two empty entries do not reset"),
    ],
)
def test_is_reset(given: Any, reset: bool) -> None:
    assert ent.is_reset(given) is reset


FIELDS_V1 = [
    pytest.param(
        {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}, id="a field that is a member and has children"
    ),
    pytest.param(
        {"f:spec": {"f:containers": {'k:{"name":"c"}': {".": {}, "f:image": {}, "f:name": {}}}}},
        id="a keyed list item",
    ),
    pytest.param({"f:metadata": {"f:finalizers": {'v:"a"': {}, 'v:"b"': {}}}}, id="set values"),
    pytest.param(
        {
            "f:spec": {
                "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}
            }
        },
        id="a key of two fields in name order",
    ),
    pytest.param({"f:a": {}, "f:b": {"i:0": {}, "i:1": {}}}, id="indices"),
]


@pytest.mark.parametrize("document", FIELDS_V1)
def test_fields_v1_round_trips(document: dict[str, Any]) -> None:
    assert from_fields_v1(document).to_fields_v1() == document


def test_fields_v1_order_is_fields_then_keys_then_values() -> None:
    s = FieldSet.of((fp.value("x"),), (fp.key({"name": "a"}),), (fp.field("z"),), (fp.index(0),))
    assert list(s.to_fields_v1()) == ["f:z", 'k:{"name":"a"}', 'v:"x"', "i:0"]


def test_fields_v1_ignores_unknown_prefixes_and_rejects_non_objects() -> None:
    assert from_fields_v1({"x:what": {}, "f:a": {}}).to_fields_v1() == {"f:a": {}}
    with pytest.raises(FieldsV1Error):
        from_fields_v1({"f:a": 1})


@pytest.mark.parametrize(
    ("path", "text"),
    [
        pytest.param((fp.field("spec"), fp.field("replicas")), ".spec.replicas", id="fields"),
        pytest.param(
            (fp.field("spec"), fp.field("containers"), fp.key({"name": "c"}), fp.field("image")),
            '.spec.containers[name="c"].image',
            id="a keyed item",
        ),
        pytest.param(
            (fp.field("ports"), fp.key({"protocol": "TCP", "containerPort": 80})),
            '.ports[containerPort=80,protocol="TCP"]',
            id="a key of two fields",
        ),
        pytest.param((fp.field("finalizers"), fp.value("a")), '.finalizers[="a"]', id="a set value"),
    ],
)
def test_path_strings(path: fp.Path, text: str) -> None:
    assert fp.path_string(path) == text


@pytest.mark.parametrize(
    ("given", "written"),
    [
        pytest.param({"f:b": {}, "f:a": {}}, ["f:a", "f:b"], id="fields out of order"),
        pytest.param({"f:a": {"f:x": {}, ".": {}}}, ["f:a"], id="a dot after the children"),
        pytest.param({'k:{"b":1,"a":2}': {}}, ['k:{"a":2,"b":1}'], id="key fields out of order"),
    ],
)
def test_fields_v1_not_in_upstreams_form_is_written_back_in_it(
    given: dict[str, Any], written: list[str]
) -> None:
    encoded = from_fields_v1(given).to_fields_v1()
    assert list(encoded) == written
    assert from_fields_v1(encoded).to_fields_v1() is encoded  # upstream's form is kept as it is
    if encoded.get("f:a"):
        assert list(encoded["f:a"]) == [".", "f:x"]


# managedfields_test.go TestRoundTripManagedFields, TestBuildManagerIdentifier, TestSortEncodedManagedFields

ROUND_TRIPS = [
    pytest.param(
        """- apiVersion: v1
  fieldsType: FieldsV1
  fieldsV1:
    v:3:
      f:alsoPi: {}
    v:3.1415:
      f:pi: {}
    v:false:
      f:notTrue: {}
  manager: foo
  operation: Update
  time: "2001-02-03T04:05:06Z"
- apiVersion: v1beta1
  fieldsType: FieldsV1
  fieldsV1:
    i:5:
      f:i: {}
  manager: foo
  operation: Update
  time: "2011-12-13T14:15:16Z"
""",
        id="values and indices of two versions",
    ),
    pytest.param(
        """- apiVersion: v1
  fieldsType: FieldsV1
  fieldsV1:
    f:spec:
      f:containers:
        k:{"name":"c"}:
          f:image: {}
          f:name: {}
  manager: foo
  operation: Apply
""",
        id="a keyed item",
    ),
    pytest.param(
        """- apiVersion: v1
  fieldsType: FieldsV1
  fieldsV1:
    f:apiVersion: {}
    f:kind: {}
    f:metadata:
      f:labels:
        f:app: {}
      f:name: {}
    f:spec:
      f:replicas: {}
      f:selector:
        f:matchLabels:
          f:app: {}
      f:template:
        f:medatada:
          f:labels:
            f:app: {}
        f:spec:
          f:containers:
            k:{"name":"nginx"}:
              .: {}
              f:image: {}
              f:name: {}
              f:ports:
                i:0:
                  f:containerPort: {}
  manager: foo
  operation: Update
""",
        id="a deployment",
    ),
    pytest.param(
        """- apiVersion: v1
  fieldsType: FieldsV1
  fieldsV1:
    f:spec:
      f:replicas: {}
  manager: foo
  operation: Update
  subresource: scale
""",
        id="a subresource",
    ),
]


@pytest.mark.parametrize("text", ROUND_TRIPS)
@pytest.mark.parametrize("lazy", [False, True], ids=["parsed", "lazy"])
def test_managed_fields_round_trip(text: str, lazy: bool) -> None:
    given = yaml.safe_load(text)
    assert ent.encode(ent.decode(given, lazy=lazy)) == given


def test_no_managed_fields_encode_to_none() -> None:
    assert ent.encode(ent.decode(None)) == []


@pytest.mark.parametrize(
    ("who", "expected"),
    [
        pytest.param(
            ent.Identity("foo", "Update", "v1"),
            '{"manager":"foo","operation":"Update","apiVersion":"v1"}',
            id="an updater",
        ),
        pytest.param(
            ent.Identity("foo", "Apply", "v1"), '{"manager":"foo","operation":"Apply"}', id="an applier"
        ),
        pytest.param(
            ent.Identity("foo", "Apply", "v1", "scale"),
            '{"manager":"foo","operation":"Apply","subresource":"scale"}',
            id="an applier of a subresource",
        ),
    ],
)
def test_build_manager_identifier(who: ent.Identity, expected: str) -> None:
    assert ent.identifier(who) == expected


def _sortable(manager: str, operation: str, time: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "manager": manager,
        "operation": operation,
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
    }
    if time:
        entry["time"] = time
    entry["fieldsV1"] = {f"f:{manager}{operation}{time}": {}}  # one identity per entry
    return entry


T1, T2 = "2001-01-01T01:00:00Z", "2002-01-01T01:00:00Z"
SORTS = [
    pytest.param([("a", "Apply", None), ("a", "Update", T1)], [0, 1], id="remains untouched"),
    pytest.param([("a", "Update", T1), ("a", "Apply", None)], [1, 0], id="apply first"),
    pytest.param(
        [("c", "Update", T1), ("a", "Apply", None), ("d", "Update", T2), ("b", "Apply", None)],
        [1, 3, 0, 2],
        id="newest last",
    ),
    pytest.param(
        [("c", "Update", T1), ("a", "Apply", None), ("d", "Update", T1), ("b", "Apply", None)],
        [1, 3, 0, 2],
        id="manager last",
    ),
]


@pytest.mark.parametrize(("given", "order"), SORTS)
def test_sort_encoded_managed_fields(given: list[tuple[str, str, str | None]], order: list[int]) -> None:
    entries = [_sortable(*g) for g in given]
    assert ent.encode(ent.decode(entries)) == [entries[i] for i in order]
