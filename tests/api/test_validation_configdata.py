"""ConfigMap, Secret and ServiceAccount validation (ValidateConfigMap/Update, ValidateSecret/Update,
ValidateServiceAccount in pkg/apis/core/validation, cases of validation_test.go as data)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.validation import validate

JSON = dict[str, Any]
IMMUTABLE = "Forbidden: field is immutable when `immutable` is set"
KEY_REGEX = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
    "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)


def config_map(name: str = "cfg", **fields: Any) -> JSON:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}, **fields}


def secret(name: str = "s", **fields: Any) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": "ns"},
        "type": "Opaque",
        **fields,
    }


def messages(obj: JSON, old: JSON | None = None) -> list[str]:
    return [str(e) for e in validate(obj, old=old)]


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(config_map(data={"a.b": "x", "KEY_1": "y"}), [], id="keys of letters digits dots"),
        pytest.param(
            config_map(data={"a b": "x"}),
            [f'data[a b]: Invalid value: "a b": {KEY_REGEX}'],
            id="a key with a space is not a file name",
        ),
        pytest.param(
            config_map(data={"..x": "x"}),
            ["data[..x]: Invalid value: \"..x\": must not start with '..'"],
            id="a key may not start with two dots",
        ),
        pytest.param(
            config_map(data={"k": "x"}, binaryData={"k": "eA=="}),
            ['data[k]: Invalid value: "k": duplicate of key present in binaryData'],
            id="one key in data and binaryData",
        ),
        pytest.param(
            config_map(name="Bad_Name"),
            [
                'metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower '
                "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
                "character (e.g. 'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ],
            id="the name is a DNS subdomain",
        ),
        pytest.param(
            config_map(data={"big": "x" * (1024 * 1024 + 1)}),
            [": Too long: may not be more than 1048576 bytes"],
            id="more than a mebibyte of data",
        ),
    ],
)
def test_config_map(obj: JSON, expected: list[str]) -> None:
    assert messages(obj) == expected


def test_an_immutable_config_map_keeps_its_data_and_stays_immutable() -> None:
    old = config_map(data={"a": "1"}, immutable=True)
    new = config_map(data={"a": "2"})
    assert messages(new, old) == [f"immutable: {IMMUTABLE}", f"data: {IMMUTABLE}"]
    assert messages(config_map(data={"a": "1"}, immutable=True), old) == []


def test_a_mutable_config_map_may_become_immutable() -> None:
    assert messages(config_map(data={"a": "2"}, immutable=True), config_map(data={"a": "1"})) == []


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(secret(data={"a": "eA=="}), [], id="an opaque secret"),
        pytest.param(
            secret(type="kubernetes.io/tls", data={"tls.crt": "eA=="}),
            ["data[tls.key]: Required value"],
            id="a TLS secret needs its key",
        ),
        pytest.param(
            secret(type="kubernetes.io/basic-auth"),
            ["data[username]: Required value", "data[password]: Required value"],
            id="basic auth needs a username or a password",
        ),
        pytest.param(
            secret(type="kubernetes.io/service-account-token"),
            ["metadata.annotations[kubernetes.io/service-account.name]: Required value"],
            id="a token secret names its service account",
        ),
        pytest.param(
            secret(type="kubernetes.io/dockerconfigjson"),
            ["data[.dockerconfigjson]: Required value"],
            id="a docker config secret needs its config",
        ),
        pytest.param(
            secret(type="kubernetes.io/ssh-auth", data={"ssh-privatekey": ""}),
            ["data[ssh-privatekey]: Required value"],
            id="an ssh secret needs a non-empty key",
        ),
        pytest.param(
            secret(data={"a/b": "eA=="}),
            [f'data[a/b]: Invalid value: "a/b": {KEY_REGEX}'],
            id="secret keys are config keys",
        ),
    ],
)
def test_secret(obj: JSON, expected: list[str]) -> None:
    assert messages(obj) == expected


def test_a_secrets_type_is_immutable() -> None:
    old = secret(type="Opaque", data={"a": "eA=="})
    new = secret(type="kubernetes.io/basic-auth", data={"username": "eA=="})
    assert messages(new, old) == ['type: Invalid value: "kubernetes.io/basic-auth": field is immutable']


def test_an_immutable_secret_keeps_its_data() -> None:
    old = secret(data={"a": "eA=="}, immutable=True)
    assert messages(secret(data={"a": "eQ=="}, immutable=True), old) == [f"data: {IMMUTABLE}"]


def test_a_service_account_has_a_subdomain_name() -> None:
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "a_b", "namespace": "ns"}}
    assert [e.field for e in validate(sa)] == ["metadata.name"]
