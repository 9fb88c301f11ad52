"""A real headless Chromium for the HTML report tests: the page as the browser leaves it once its
script has run (`--dump-dom`), from a fresh profile."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

#: Without a browser the tests skip, except on CI, where `.ci/install-chromium` provides one.
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"), reason="no chromium (scripts/test installs it)"
)


def rendered_dom(page: Path, fragment: str = "") -> str:
    """The DOM of `page` (a file) after its scripts ran, given `#fragment` in its address."""
    assert CHROMIUM is not None, "chromium is missing: run .ci/install-chromium"
    with tempfile.TemporaryDirectory(prefix="kubetaint-chromium-") as profile:
        done = subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--virtual-time-budget=20000",
                "--dump-dom",
                page.resolve().as_uri() + (f"#{fragment}" if fragment else ""),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
