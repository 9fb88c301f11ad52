"""The example scenarios shipped with kubetaint (`kubetaint simulate --example NAME`).

Each example mirrors one from the upstream "Taints and Tolerations" page. An installed wheel carries
them as package data (`kubetaint/examples/*.yaml`); a source checkout reads the repository's
`examples/` directory.
"""

from __future__ import annotations

from pathlib import Path

#: An installed wheel's copy of the repository's examples/ (see pyproject.toml, force-include).
_PACKAGED = Path(__file__).resolve().parents[1] / "examples"
#: A source checkout (src/kubetaint/sim/examples.py -> the repository root's examples/).
_CHECKOUT = Path(__file__).resolve().parents[3] / "examples"


class ExampleError(LookupError):
    """No shipped example has that name."""


def examples_dir() -> Path:
    """The directory holding the example scenarios."""
    return _PACKAGED if _PACKAGED.is_dir() else _CHECKOUT


def example_names() -> list[str]:
    """The names of the shipped example scenarios (file names without `.yaml`), sorted."""
    return sorted(path.stem for path in examples_dir().glob("*.yaml"))


def example_path(name: str) -> Path:
    """The file of the example scenario `name` (`taint-based-eviction`; `.yaml` may be given)."""
    stem = name.removesuffix(".yaml")
    names = example_names()
    if stem not in names:
        raise ExampleError(f"unknown example {name!r} (examples: {', '.join(names)})")
    return examples_dir() / f"{stem}.yaml"
