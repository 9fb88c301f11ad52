"""How long a page takes to open in headless Chromium, in real time: the DevTools protocol over a
pipe (`--remote-debugging-pipe`), no virtual time. `--virtual-time-budget` (what `--dump-dom`
needs to let a page's script finish) makes the page's own clock virtual, so a page that measures
itself with `performance.now()` under it reports far less than a reader waits.

    .venv/bin/python benchmarks/chromium_open.py report.html [--screenshot report.png]

Prints the milliseconds from navigation until the report marks itself ready (`data-ready` on its
`<body>`), the page's own `data-ready-ms`, and the script errors it logged.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

READY = (
    "document.body && document.body.dataset.ready === 'yes' ? Number(document.body.dataset.readyMs) : null"
)


@dataclass
class Opened:
    """The page's opening: real milliseconds to ready, the page's own figure, its script errors."""

    wall_ms: float
    page_ms: int
    errors: list[str]


class _DevTools:
    """Chromium's DevTools protocol on the pipe of a headless browser (fds 3 and 4 in the child)."""

    def __init__(self, chromium: str, profile: str) -> None:
        to_browser, self._commands = os.pipe()
        self._answers, from_browser = os.pipe()

        def plumb() -> None:  # in the child: its fd 3 reads commands, its fd 4 writes answers
            commands, answers = os.dup(to_browser), os.dup(from_browser)
            os.dup2(commands, 3)
            os.dup2(answers, 4)

        self.process = subprocess.Popen(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--window-size=1280,2000",
                f"--user-data-dir={profile}",
                "--remote-debugging-pipe",
            ],
            preexec_fn=plumb,  # noqa: PLW1509 (the child needs the two descriptors, nothing else)
            pass_fds=(),
            close_fds=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read()
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]
            self.events.append(answer)

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._answers, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        answer: dict[str, Any] = json.loads(raw)
        return answer

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        os.close(self._commands)
        os.close(self._answers)


def open_page(page: Path, *, screenshot: Path | None = None, timeout: float = 120.0) -> Opened | None:
    """Open `page` in a fresh headless Chromium; None without a Chromium."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return None
    with tempfile.TemporaryDirectory(prefix="kubetaint-chromium-") as profile:
        tools = _DevTools(chromium, profile)
        try:
            target = tools.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = tools.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            tools.call("Page.enable", session=session)
            tools.call("Runtime.enable", session=session)
            start = time.perf_counter()
            tools.call("Page.navigate", {"url": page.resolve().as_uri()}, session)
            page_ms = None
            while page_ms is None:
                if time.perf_counter() - start > timeout:
                    raise RuntimeError(f"{page} was not ready after {timeout:.0f} s")
                found = tools.call("Runtime.evaluate", {"expression": READY, "returnByValue": True}, session)
                page_ms = found["result"].get("value")
                if page_ms is None:
                    time.sleep(0.01)
            wall_ms = 1000 * (time.perf_counter() - start)
            errors = [
                json.dumps(event["params"])[:300]
                for event in tools.events
                if event.get("method") == "Runtime.exceptionThrown"
                or (event.get("method") == "Runtime.consoleAPICalled" and event["params"]["type"] == "error")
            ]
            if screenshot is not None:
                shot = tools.call("Page.captureScreenshot", {"format": "png"}, session)
                screenshot.write_bytes(base64.b64decode(shot["data"]))
        finally:
            tools.close()
    return Opened(wall_ms, int(page_ms), errors)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("page", type=Path)
    parser.add_argument("--screenshot", type=Path, default=None)
    args = parser.parse_args()
    opened = open_page(args.page, screenshot=args.screenshot)
    if opened is None:
        print("no chromium")
        return
    print(
        f"{args.page}: ready {opened.wall_ms:.0f} ms after navigation (the page says {opened.page_ms} ms), "
        f"{len(opened.errors)} script errors"
    )
    for error in opened.errors:
        print(f"  {error}")


if __name__ == "__main__":
    main()
