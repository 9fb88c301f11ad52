"""The shared store contract (tests/store/conformance.py) on every backend: memory, SQLite and a
private etcd (skipped only when the etcd binary is absent)."""

from conformance import Conformance


class TestConformance(Conformance):
    """Collected once per backend: the `open_store` fixture is parametrised in conftest.py."""
