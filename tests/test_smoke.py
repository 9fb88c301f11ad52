"""The package imports and its CLI answers --version and --help."""

import subprocess
import sys

import kubetaint


def test_import_exposes_tolerates() -> None:
    assert kubetaint.tolerates({"operator": "Exists"}, {"key": "a", "effect": "NoExecute"})


def test_cli_version() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kubetaint", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"kubetaint {kubetaint.__version__} (Kubernetes v1.35.0)"
