"""kubetaint.sim.examples: the example scenarios by name, from a source checkout (the wheel's copy
is checked by tests/wheel)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubetaint.sim.examples import ExampleError, example_names, example_path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_every_example_file_is_listed_by_name() -> None:
    assert example_names() == sorted(path.stem for path in EXAMPLES.glob("*.yaml"))


@pytest.mark.parametrize(
    "name", ["taint-based-eviction", "taint-based-eviction.yaml"], ids=["stem", "file name"]
)
def test_an_example_is_found_by_stem_or_file_name(name: str) -> None:
    assert example_path(name) == EXAMPLES / "taint-based-eviction.yaml"


def test_an_unknown_name_names_the_examples() -> None:
    with pytest.raises(ExampleError, match="unknown example 'nope' \\(examples: daemonset-tolerations, "):
        example_path("nope")
