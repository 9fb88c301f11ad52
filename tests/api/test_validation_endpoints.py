"""Endpoints and EndpointSlice validation (pkg/apis/core/validation and
pkg/apis/discovery/validation cases, as data)."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.validation import validate

JSON = dict[str, Any]


def endpoints(*subsets: JSON) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": "web", "namespace": "ns"},
        "subsets": list(subsets),
    }


def endpoint_slice(address_type: str = "IPv4", *addresses: str, **fields: Any) -> JSON:
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": "web-abc", "namespace": "ns"},
        "addressType": address_type,
        "endpoints": [{"addresses": list(addresses)}] if addresses else [],
        **fields,
    }


def messages(obj: JSON) -> list[str]:
    return [str(e) for e in validate(obj)]


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(
            endpoints({"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 80, "protocol": "TCP"}]}),
            [],
            id="one address and port",
        ),
        pytest.param(
            endpoints({"ports": [{"port": 80, "protocol": "TCP"}]}),
            ["subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`"],
            id="a subset without addresses",
        ),
        pytest.param(
            endpoints({"addresses": [{"ip": "127.0.0.1"}]}),
            [
                'subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range '
                "(127.0.0.0/8, ::1/128)"
            ],
            id="a loopback address",
        ),
        pytest.param(
            endpoints(
                {
                    "addresses": [{"ip": "10.1.2.3"}],
                    "ports": [{"port": 80, "protocol": "TCP"}, {"port": 0, "protocol": "TCP"}],
                }
            ),
            [
                "subsets[0].ports[0].name: Required value",
                "subsets[0].ports[1].name: Required value",
                "subsets[0].ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive",
            ],
            id="several ports are named and numbered",
        ),
    ],
)
def test_endpoints(obj: JSON, expected: list[str]) -> None:
    assert messages(obj) == expected


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(endpoint_slice("IPv4", "10.1.2.3"), [], id="an IPv4 address"),
        pytest.param(
            endpoint_slice("IPv4", "fd00::1"),
            ['endpoints[0].addresses[0]: Invalid value: "fd00::1": must be a valid IPv4 address'],
            id="an IPv6 address in an IPv4 slice",
        ),
        pytest.param(
            endpoint_slice("IPX"),
            ['addressType: Unsupported value: "IPX": supported values: "FQDN", "IPv4", "IPv6"'],
            id="an unknown address type",
        ),
        pytest.param(
            endpoint_slice("IPv4", endpoints=[{"addresses": []}]),
            ["endpoints[0].addresses: Required value: must contain at least 1 address"],
            id="an endpoint without addresses",
        ),
        pytest.param(
            endpoint_slice(ports=[{"name": "http", "protocol": "TCP"}, {"name": "http", "protocol": "TCP"}]),
            ['ports[1].name: Duplicate value: "http"'],
            id="two ports of one name",
        ),
    ],
)
def test_endpoint_slice(obj: JSON, expected: list[str]) -> None:
    assert messages(obj) == expected
