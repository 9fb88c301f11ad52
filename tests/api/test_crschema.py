"""Custom resources against their structural schema: pruning (cases of upstream's
pruning/algorithm_test.go TestPrune), defaulting (defaulting/algorithm_test.go) and validation
with kube-openapi's messages as apiextensions reports them."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api import crschema

JSON = dict[str, Any]

SCHEMA: JSON = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["cronSpec"],
            "properties": {
                "cronSpec": {"type": "string", "pattern": r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$"},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                "size": {"type": "string", "enum": ["small", "large"]},
                "name": {"type": "string", "maxLength": 5, "minLength": 2},
                "ports": {
                    "type": "array",
                    "maxItems": 2,
                    "items": {"type": "integer"},
                    "x-kubernetes-list-type": "set",
                },
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "port": {"x-kubernetes-int-or-string": True},
                "ratio": {"type": "number", "exclusiveMaximum": True, "maximum": 1},
            },
        },
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
    },
}


def body(**spec: Any) -> JSON:
    return {
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": "c", "labels": {"a": "b"}},
        "spec": {"cronSpec": "* * * * */5", **spec},
    }


@pytest.mark.parametrize(
    ("obj", "pruned", "dropped"),
    [
        pytest.param(body(), body(), [], id="known fields stay"),
        pytest.param(
            {**body(extra=1), "other": {"x": 1}},
            body(),
            ["spec.extra", "other"],
            id="unknown fields go, apiVersion kind and metadata stay",
        ),
        pytest.param(
            body(free={"anything": {"deep": [1]}}),
            body(free={"anything": {"deep": [1]}}),
            [],
            id="x-kubernetes-preserve-unknown-fields keeps what is below it",
        ),
        pytest.param(
            body(labels={"a": "b", "c": "d"}),
            body(labels={"a": "b", "c": "d"}),
            [],
            id="additionalProperties keeps every key",
        ),
    ],
)
def test_prune(obj: JSON, pruned: JSON, dropped: list[str]) -> None:
    assert crschema.prune(obj, SCHEMA) == (pruned, dropped)


def test_without_a_schema_everything_but_type_and_metadata_is_pruned() -> None:
    assert crschema.prune(body(), None) == (
        {
            "apiVersion": "stable.example.com/v1",
            "kind": "CronTab",
            "metadata": {"name": "c", "labels": {"a": "b"}},
        },
        ["spec"],
    )


@pytest.mark.parametrize(
    ("obj", "defaulted"),
    [
        pytest.param(body(), body(replicas=1), id="an absent field gets its default"),
        pytest.param(body(replicas=4), body(replicas=4), id="a given value stays"),
        pytest.param(body(replicas=None), body(replicas=1), id="null of a non-nullable field is defaulted"),
    ],
)
def test_default(obj: JSON, defaulted: JSON) -> None:
    assert crschema.default(obj, SCHEMA) == defaulted


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(body(replicas=3), [], id="a valid object"),
        pytest.param(
            body(replicas="three"),
            [
                'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"'
            ],
            id="types",
        ),
        pytest.param(
            body(replicas=11),
            ["spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"],
            id="maximum",
        ),
        pytest.param(
            body(replicas=0),
            ["spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"],
            id="minimum",
        ),
        pytest.param(
            body(ratio=1),
            ["spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1"],
            id="exclusive maximum",
        ),
        pytest.param(
            body(size="medium"),
            ['spec.size: Unsupported value: "medium": supported values: "small", "large"'],
            id="enum",
        ),
        pytest.param(
            {**body(), "spec": {}},
            ["spec.cronSpec: Required value"],
            id="required",
        ),
        pytest.param(
            body(cronSpec="often"),
            [
                'spec.cronSpec: Invalid value: "often": spec.cronSpec in body should match '
                "'^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'"
            ],
            id="pattern",
        ),
        pytest.param(body(name="abcdef"), ["spec.name: Too long: may not be longer than 5"], id="maxLength"),
        pytest.param(
            body(name="a"),
            ['spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long'],
            id="minLength",
        ),
        pytest.param(
            body(ports=[1, 2, 3]),
            ["spec.ports: Too many: 3: must have at most 2 items"],
            id="maxItems",
        ),
        pytest.param(body(ports=[1, 1]), ["spec.ports[1]: Duplicate value: 1"], id="list-type set"),
        pytest.param(body(port="http"), [], id="int-or-string takes a string"),
        pytest.param(
            body(port=True),
            [
                'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"'
            ],
            id="int-or-string takes nothing else",
        ),
        pytest.param(
            body(labels={"a": 1}),
            [
                'spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"'
            ],
            id="additionalProperties values",
        ),
    ],
)
def test_validate(obj: JSON, expected: list[str]) -> None:
    assert [str(e) for e in crschema.validate(obj, SCHEMA)] == expected


def test_unchecked_names_cel_rules_and_unknown_formats() -> None:
    schema = {
        "type": "object",
        "x-kubernetes-validations": [{"rule": "self.a > 0"}],
        "properties": {
            "a": {"type": "string", "format": "hostname"},
            "b": {"type": "string", "format": "date"},
        },
    }
    assert crschema.unchecked(schema) == ["x-kubernetes-validations", "format hostname"]


def test_patterns_are_matched_as_gos_regexp_in_linear_time() -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}
    errs = crschema.validate({"s": "a" * 100_000 + "!"}, schema)  # exponential for a backtracking engine
    assert [e.field for e in errs] == ["s"]


def test_perl_only_syntax_is_not_a_valid_pattern() -> None:
    from kubetaint.api.gopattern import compile_error

    assert compile_error("(?<=a)b") is not None
    assert compile_error(r"^\d+(\.\d+)?$") is None


def _one_field(**schema: Any) -> JSON:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": {"x": schema}}}}


# kube-openapi's numberValidator (pkg/validation/validate/validator.go, values.go): an integer value
# is checked natively against the float64 bound converted to int64; a fractional value, or a bound
# outside the `integer` type's range, as float64, the message then showing the bound as Go's %v.
@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        pytest.param(
            {"type": "number", "multipleOf": 0.1},
            0.3,
            [],
            id="0.3 is a multiple of 0.1 (relative error 1e-9)",
        ),
        pytest.param(
            {"type": "number", "multipleOf": 0.1},
            0.35,
            ["spec.x: Invalid value: 0.35: spec.x in body should be a multiple of 0.1"],
            id="0.35 is not a multiple of 0.1",
        ),
        pytest.param(
            {"type": "integer", "multipleOf": 3},
            7,
            ["spec.x: Invalid value: 7: spec.x in body should be a multiple of 3"],
            id="an integer multipleOf is checked natively",
        ),
        pytest.param(
            {"type": "number", "maximum": 1000000},
            1000000.5,
            ["spec.x: Invalid value: 1.0000005e+06: spec.x in body should be less than or equal to 1e+06"],
            id="a fractional value shows value and bound as float64",
        ),
        pytest.param(
            {"type": "number", "maximum": 1000000},
            1000001,
            ["spec.x: Invalid value: 1000001: spec.x in body should be less than or equal to 1000000"],
            id="an integer value shows the bound as int64",
        ),
        pytest.param(
            {"type": "number", "maximum": 2.5},
            3,
            ["spec.x: Invalid value: 3: spec.x in body should be less than or equal to 2"],
            id="an integer value meets a fractional number bound truncated",
        ),
        pytest.param(
            {"type": "number", "minimum": 2.5}, 2, [], id="2 is not below a minimum of 2.5 truncated to 2"
        ),
        pytest.param(
            {"type": "integer", "maximum": 2.5},
            3,
            ["spec.x: Invalid value: 3: spec.x in body should be less than or equal to 2.5"],
            id="a fractional bound of an integer is compared as float64",
        ),
        pytest.param(
            {"type": "number", "maximum": 10, "minimum": 20, "multipleOf": 4},
            11,
            [
                "spec.x: Invalid value: 11: spec.x in body should be a multiple of 4",
                "spec.x: Invalid value: 11: spec.x in body should be greater than or equal to 20",
                "spec.x: Invalid value: 11: spec.x in body should be less than or equal to 10",
            ],
            id="multipleOf then minimum then maximum",
        ),
    ],
)
def test_number_bounds_as_kube_openapi_checks_them(schema: JSON, value: Any, expected: list[str]) -> None:
    assert [str(e) for e in crschema.validate({"spec": {"x": value}}, _one_field(**schema))] == expected
