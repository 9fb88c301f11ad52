"""YAML input is bounded by its node count before anything is composed: a node costs a few
hundred bytes while a document is composed, so a few megabytes of `[1,1,…]` would need
gigabytes."""

from __future__ import annotations

import pytest

from kubetaint.api.strictload import InputError, check_node_count, parse_yaml

NODES = [
    pytest.param("[1, 2, 3]", 4, id="a flow sequence: itself and its three values"),
    pytest.param("a: 1\nb: [x]\n", 6, id="a mapping: itself, two keys, a value, a list and its value"),
    pytest.param("a: &x [1]\nb: *x\n", 6, id="an alias counts once, not as what it expands to"),
    pytest.param("--- 1\n--- 2\n", 2, id="every document of the stream counts"),
]


@pytest.mark.parametrize(("text", "nodes"), NODES)
def test_a_stream_of_exactly_the_limit_passes_and_one_more_node_is_refused(text: str, nodes: int) -> None:
    check_node_count(text, "f.yaml", limit=nodes)
    with pytest.raises(InputError) as refused:
        check_node_count(text, "f.yaml", limit=nodes - 1)
    assert str(refused.value) == (
        f"f.yaml: YAML of more than {nodes - 1:,} nodes (values, mappings and sequences): "
        "give a file this large as JSON"
    )


def test_a_large_flow_sequence_is_refused_before_it_is_composed() -> None:
    text = "[" + ",".join(["1"] * 3_000_001) + "]"
    with pytest.raises(InputError, match="YAML of more than 3,000,000 nodes"):
        list(parse_yaml(text, "big.yaml"))


def test_a_large_manifest_under_the_bound_is_read() -> None:
    pods = "".join(f"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\n" for i in range(40_000))
    assert len(pods) > 1024 * 1024  # counted, and under the bound
    assert sum(1 for _ in parse_yaml(pods, "pods.yaml")) == 40_000


def test_invalid_yaml_found_while_counting_names_its_line() -> None:
    text = "a: 1\n" * 300_000 + "b: [\n"
    with pytest.raises(InputError) as refused:
        check_node_count(text, "f.yaml")
    assert str(refused.value) == (
        "f.yaml:300002: invalid YAML: while parsing a flow node did not find expected node content"
    )
