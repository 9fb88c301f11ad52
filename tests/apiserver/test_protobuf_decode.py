"""The table-driven protobuf decoder: hand-encoded bodies decode to the JSON object the same
request would carry as JSON (gogo-protobuf's Marshal, then encoding/json), the round-trip law
for every served kind, and precise errors for malformed bodies (issue 8)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetaint.apiserver.protobuf import NotRegisteredError, ProtobufError, decode_body
from kubetaint.apiserver.protobuf.decode import format_time
from kubetaint.apiserver.protobuf.schema import load

from .protobuf_codec import (
    SCHEMA,
    encode_kind,
    envelope,
    key,
    kind_objects,
    length_delimited,
    minimal,
    text,
    varint,
)

META = "k8s.io/apimachinery/pkg/apis/meta/v1"
ZERO_TIME = length_delimited(8, key(1, 0) + varint(-62135596800) + key(2, 0) + varint(0))


def meta(name: str, *extra: bytes) -> bytes:
    """An ObjectMeta as gogo writes it: every non-pointer field, empty ones included."""
    fields = text(1, name) + text(2, "") + text(3, "") + text(4, "") + text(5, "") + text(6, "")
    return length_delimited(1, fields + key(7, 0) + varint(0) + ZERO_TIME + b"".join(extra))


def decoded(api_version: str, kind: str, raw: bytes) -> dict[str, Any]:
    return decode_body(envelope(api_version, kind, raw))


NS_META = {"name": "foo", "creationTimestamp": None}


@pytest.mark.parametrize(
    ("api_version", "kind", "raw", "expected"),
    [
        pytest.param(
            "v1",
            "Namespace",
            meta("foo") + length_delimited(2, b"") + length_delimited(3, text(1, "")),
            {"metadata": NS_META, "spec": {}, "status": {}},
            id="kubectl create namespace foo: empty strings and Go's zero time are dropped or null",
        ),
        pytest.param(
            "v1",
            "Namespace",
            length_delimited(1, text(1, "foo")),
            {"metadata": NS_META, "spec": {}, "status": {}},
            id="absent non-pointer structs still print as objects, the zero time as null",
        ),
        pytest.param(
            "scheduling.k8s.io/v1",
            "PriorityClass",
            meta("high") + key(2, 0) + varint(1000) + key(3, 0) + varint(0) + text(4, "") + text(5, "Never"),
            {
                "metadata": {"name": "high", "creationTimestamp": None},
                "value": 1000,
                "preemptionPolicy": "Never",
            },
            id="create priorityclass high --value=1000: a false globalDefault is omitted",
        ),
        pytest.param(
            "scheduling.k8s.io/v1",
            "PriorityClass",
            meta("zero"),
            {"metadata": {"name": "zero", "creationTimestamp": None}, "value": 0},
            id="value has no omitempty: zero (even absent) is printed",
        ),
        pytest.param(
            "scheduling.k8s.io/v1",
            "PriorityClass",
            meta("neg") + key(2, 0) + varint(-5),
            {"metadata": {"name": "neg", "creationTimestamp": None}, "value": -5},
            id="a negative int32 is a ten-byte varint",
        ),
        pytest.param(
            "apps/v1",
            "Deployment",
            meta("web") + length_delimited(2, key(1, 0) + varint(0)),
            {
                "metadata": {"name": "web", "creationTimestamp": None},
                "spec": {
                    "replicas": 0,
                    "selector": None,
                    "template": {"metadata": {"creationTimestamp": None}, "spec": {"containers": None}},
                    "strategy": {},
                },
                "status": {},
            },
            id="a present pointer keeps its zero (replicas: 0); nil non-omitempty pointers and slices are null",
        ),
        pytest.param(
            "v1",
            "Namespace",
            length_delimited(
                1, text(1, "a") + text(11, "") + length_delimited(11, text(1, "k") + text(2, "v1"))
            )
            + length_delimited(1, length_delimited(11, text(1, "k") + text(2, "v2")) + text(14, "f")),
            {
                "metadata": {
                    "name": "a",
                    "labels": {"": "", "k": "v2"},
                    "finalizers": ["f"],
                    "creationTimestamp": None,
                },
                "spec": {},
                "status": {},
            },
            id="repeated message fields merge; a map key's last entry wins; an empty entry is the zero key",
        ),
        pytest.param(
            "v1",
            "Namespace",
            length_delimited(
                1,
                text(1, "a")
                + key(99, 0)
                + varint(7)
                + text(98, "x")
                + key(97, 3)
                + key(1, 0)
                + varint(1)
                + key(97, 4),
            ),
            {"metadata": {"name": "a", "creationTimestamp": None}, "spec": {}, "status": {}},
            id="unknown fields are skipped, groups included",
        ),
        pytest.param(
            "v1",
            "Namespace",
            length_delimited(1, text(1, "a\xff".encode("latin-1").decode("latin-1")) + b""),
            {"metadata": {"name": "a\xff", "creationTimestamp": None}, "spec": {}, "status": {}},
            id="UTF-8 text decodes as such",
        ),
        pytest.param(
            "v1",
            "Namespace",
            length_delimited(1, key(1, 2) + varint(2) + b"a\xff"),
            {"metadata": {"name": "a\ufffd", "creationTimestamp": None}, "spec": {}, "status": {}},
            id="invalid UTF-8 prints as U+FFFD, as encoding/json does",
        ),
        pytest.param(
            "policy/v1",
            "PodDisruptionBudget",
            length_delimited(
                2,
                length_delimited(1, key(1, 0) + varint(0) + key(2, 0) + varint(1) + text(3, ""))
                + length_delimited(3, key(1, 0) + varint(1) + key(2, 0) + varint(0) + text(3, "25%")),
            ),
            {
                "metadata": {"creationTimestamp": None},
                "spec": {"minAvailable": 1, "maxUnavailable": "25%"},
                "status": {
                    "disruptionsAllowed": 0,
                    "currentHealthy": 0,
                    "desiredHealthy": 0,
                    "expectedPods": 0,
                },
            },
            id="IntOrString: type 0 is intVal, type 1 is strVal; PDB status counts have no omitempty",
        ),
        pytest.param(
            "v1",
            "Pod",
            length_delimited(
                2,
                length_delimited(
                    2,
                    text(1, "c")
                    + length_delimited(
                        8, length_delimited(1, text(1, "cpu") + length_delimited(2, text(1, "1000m")))
                    ),
                ),
            ),
            {
                "metadata": {"creationTimestamp": None},
                "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}}]},
                "status": {},
            },
            id="a Quantity is printed canonically (1000m is 1)",
        ),
        pytest.param(
            "v1",
            "Pod",
            length_delimited(
                2,
                length_delimited(1, text(1, "v") + length_delimited(2, length_delimited(2, b"")))
                + length_delimited(22, text(1, "k") + key(5, 0) + varint(0)),
            ),
            {
                "metadata": {"creationTimestamp": None},
                "spec": {
                    "volumes": [{"name": "v", "emptyDir": {}}],
                    "containers": None,
                    "tolerations": [{"key": "k", "tolerationSeconds": 0}],
                },
                "status": {},
            },
            id="inline VolumeSource merges into the Volume; tolerationSeconds: 0 (a pointer) is kept",
        ),
        pytest.param(
            "v1",
            "Pod",
            length_delimited(
                2,
                length_delimited(
                    14,
                    key(4, 0)
                    + varint(5)
                    + key(4, 0)
                    + varint(6)
                    + length_delimited(4, varint(7) + varint(8)),
                ),
            ),
            {
                "metadata": {"creationTimestamp": None},
                "spec": {"containers": None, "securityContext": {"supplementalGroups": [5, 6, 7, 8]}},
                "status": {},
            },
            id="repeated scalars may be packed or not",
        ),
        pytest.param(
            "v1",
            "Event",
            length_delimited(1, text(1, "e") + length_delimited(8, key(1, 0) + varint(1700000000)))
            + length_delimited(2, b"")
            + length_delimited(10, key(1, 0) + varint(1700000000) + key(2, 0) + varint(123456789)),
            {
                "metadata": {"name": "e", "creationTimestamp": "2023-11-14T22:13:20Z"},
                "involvedObject": {},
                "source": {},
                "firstTimestamp": None,
                "lastTimestamp": None,
                "eventTime": "2023-11-14T22:13:20.123456Z",
                "reportingComponent": "",
                "reportingInstance": "",
            },
            id="Time prints to the second, MicroTime to the microsecond, in UTC",
        ),
        pytest.param(
            "v1",
            "DeleteOptions",
            key(1, 0)
            + varint(5)
            + length_delimited(2, text(1, "uid-1"))
            + text(4, "Background")
            + text(5, "All"),
            {
                "gracePeriodSeconds": 5,
                "preconditions": {"uid": "uid-1"},
                "propagationPolicy": "Background",
                "dryRun": ["All"],
            },
            id="drain --disable-eviction's DeleteOptions",
        ),
        pytest.param(
            "apps/v1",
            "DeleteOptions",
            key(1, 0) + varint(0),
            {"gracePeriodSeconds": 0},
            id="DeleteOptions in any group version; gracePeriodSeconds: 0 is kept",
        ),
    ],
)
def test_hand_encoded_bodies(api_version: str, kind: str, raw: bytes, expected: dict[str, Any]) -> None:
    assert decoded(api_version, kind, raw) == {"kind": kind, "apiVersion": api_version, **expected}


def test_kubectl_1_32_drain_delete_options_bytes() -> None:
    """The body kubectl 1.32 sent for `drain --disable-eviction --grace-period=5 --dry-run=server`."""
    raw = b'k8s\x00\n\x13\n\x02v1\x12\rDeleteOptions\x12\x07\x08\x05*\x03All\x1a\x00"\x00'
    assert decode_body(raw) == {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "gracePeriodSeconds": 5,
        "dryRun": ["All"],
    }


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param(
            b"\x0a\x00",
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]",
            id="no magic",
        ),
        pytest.param(b"k8s\x00", "Object 'Kind' is missing in protobuf body", id="an empty envelope"),
        pytest.param(b"k8s\x00\x0a\x05\x0a\x02v1", "unexpected EOF", id="a truncated envelope"),
        pytest.param(
            envelope("v1", "PersistentVolume", b""),
            'no kind "PersistentVolume" is registered for version "v1"',
            id="a kind the server does not serve",
        ),
        pytest.param(
            envelope("v2", "Namespace", b""),
            'no kind "Namespace" is registered for version "v2"',
            id="a version the server does not serve",
        ),
        pytest.param(
            envelope("v1", "Namespace", length_delimited(1, text(1, "foo"))[:-1]),
            'Namespace in version "v1" cannot be handled as a Namespace: unexpected EOF',
            id="a truncated object",
        ),
        pytest.param(
            envelope("v1", "Namespace", key(1, 0) + varint(1)),
            'Namespace in version "v1" cannot be handled as a Namespace: proto: wrong wireType = 0 for field metadata',
            id="a wrong wire type",
        ),
        pytest.param(
            envelope("scheduling.k8s.io/v1", "PriorityClass", key(2, 0) + b"\xff" * 11),
            'PriorityClass in version "scheduling.k8s.io/v1" cannot be handled as a PriorityClass: proto: integer overflow',
            id="a varint longer than ten bytes",
        ),
        pytest.param(
            envelope("v1", "Namespace", key(1, 2) + b"\xff" * 9 + b"\x01"),
            'Namespace in version "v1" cannot be handled as a Namespace: proto: negative length found during unmarshaling',
            id="a negative length",
        ),
        pytest.param(
            envelope("v1", "Namespace", b"\x00\x00"),
            'Namespace in version "v1" cannot be handled as a Namespace: proto: Namespace: illegal tag 0 (wire type 0)',
            id="field number zero",
        ),
        pytest.param(
            envelope("v1", "Namespace", key(5, 4)),
            'Namespace in version "v1" cannot be handled as a Namespace: proto: Namespace: wiretype end group for non-group',
            id="an end group without a group",
        ),
        pytest.param(
            envelope("v1", "Namespace", key(5, 6)),
            'Namespace in version "v1" cannot be handled as a Namespace: proto: illegal wireType 6',
            id="wire type 6",
        ),
        pytest.param(
            envelope(
                "v1",
                "Pod",
                length_delimited(
                    2,
                    length_delimited(
                        2,
                        length_delimited(
                            8, length_delimited(1, text(1, "cpu") + length_delimited(2, text(1, "lots")))
                        ),
                    ),
                ),
            ),
            'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression',
            id="a malformed quantity",
        ),
        pytest.param(
            envelope(
                "policy/v1",
                "PodDisruptionBudget",
                length_delimited(2, length_delimited(1, key(1, 0) + varint(2))),
            ),
            'PodDisruptionBudget in version "policy/v1" cannot be handled as a PodDisruptionBudget: impossible IntOrString.Type',
            id="an IntOrString of an unknown type",
        ),
        pytest.param(
            envelope("v1", "Namespace", length_delimited(1, length_delimited(8, key(1, 0) + varint(10**15)))),
            "Time.MarshalJSON: year outside of range [0,9999]",
            id="a timestamp beyond year 9999",
        ),
    ],
)
def test_malformed_bodies_have_precise_errors(raw: bytes, message: str) -> None:
    with pytest.raises(ProtobufError) as caught:
        decode_body(raw)
    assert message in str(caught.value)


def test_unknown_kind_is_a_not_registered_error() -> None:
    with pytest.raises(NotRegisteredError):
        decode_body(envelope("v1", "PersistentVolumeClaim", b""))


def test_a_huge_expansion_is_refused() -> None:
    """Thousands of empty containers, each printing several default fields, exceed the budget."""
    containers = length_delimited(2, b"") * 20_000
    with pytest.raises(ProtobufError, match="too large"):
        decode_body(envelope("v1", "Pod", length_delimited(2, containers)))


@pytest.mark.parametrize(
    ("seconds", "nanos", "micro", "expected"),
    [
        pytest.param(0, 0, False, "1970-01-01T00:00:00Z", id="the epoch is not Go's zero time"),
        pytest.param(-62135596800, 0, False, None, id="Go's zero time is null"),
        pytest.param(
            -62135596800, 1, True, "0001-01-01T00:00:00.000000Z", id="one nanosecond after it is not"
        ),
        pytest.param(1, -1, True, "1970-01-01T00:00:00.999999Z", id="negative nanos normalise"),
        pytest.param(1700000000, 999_999_999, False, "2023-11-14T22:13:20Z", id="Time drops the fraction"),
    ],
)
def test_format_time(seconds: int, nanos: int, micro: bool, expected: str | None) -> None:
    assert format_time(seconds, nanos, micro) == expected


def test_schema_field_numbers_match_upstream_generated_proto() -> None:
    """Spot checks against k8s.io/api and apimachinery generated.proto (facts, as data)."""
    expected = {
        f"{META}.ObjectMeta": {
            1: "name",
            2: "generateName",
            3: "namespace",
            5: "uid",
            6: "resourceVersion",
            8: "creationTimestamp",
            11: "labels",
            12: "annotations",
            14: "finalizers",
        },
        f"{META}.DeleteOptions": {
            1: "gracePeriodSeconds",
            2: "preconditions",
            3: "orphanDependents",
            4: "propagationPolicy",
            5: "dryRun",
        },
        "k8s.io/api/scheduling/v1.PriorityClass": {
            1: "metadata",
            2: "value",
            3: "globalDefault",
            4: "description",
            5: "preemptionPolicy",
        },
        "k8s.io/api/policy/v1.PodDisruptionBudgetStatus": {3: "disruptionsAllowed", 4: "currentHealthy"},
        "k8s.io/api/core/v1.Toleration": {
            1: "key",
            2: "operator",
            3: "value",
            4: "effect",
            5: "tolerationSeconds",
        },
        "k8s.io/api/core/v1.Taint": {1: "key", 2: "value", 3: "effect", 4: "timeAdded"},
    }
    schema = load()
    for name, fields in expected.items():
        by_number = schema.messages[name].by_number
        assert {n: by_number[n].json_name for n in fields} == fields, name


@pytest.mark.parametrize("kind", sorted(SCHEMA.kinds), ids=str)
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(data=st.data())
def test_round_trip_law(kind: str, data: st.DataObject) -> None:
    """decode(encode(obj)) == obj for canonical JSON objects of every kind, packed or not."""
    obj = data.draw(kind_objects(kind))
    packed = data.draw(st.booleans())
    assert decode_body(encode_kind(obj, packed=packed)) == obj


@pytest.mark.parametrize("kind", sorted(SCHEMA.kinds), ids=str)
def test_an_empty_object_decodes_to_the_go_zero_value(kind: str) -> None:
    api_version, _, name = kind.rpartition("/")
    message = SCHEMA.messages[SCHEMA.kinds[kind]]
    assert decode_body(envelope(api_version or "v1", name, b"")) == {
        "kind": name,
        "apiVersion": api_version or "v1",
        **minimal(message),
    }
