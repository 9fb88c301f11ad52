"""A real headless Chromium for the HTML report tests: the page as the browser leaves it once its
script has run (`--dump-dom`), from a fresh profile."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

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


#: Rasterises each pods-per-zone chart in the browser (its lines only: no markers, labels or
#: axis), once with every line and once per line alone, and counts the pixels of each line's own
#: colour: `shown` where all are drawn, `alone` where it is the only one. Writes the counts as
#: JSON to `data-zone-lines` on `<body>` (or `error ...`).
_ZONE_LINE_PROBE = r"""
(function () {
  "use strict";
  function raster(svg, keep) {
    var copy = svg.cloneNode(true);
    copy.querySelectorAll(".zone-marker, text, line").forEach(function (e) { e.remove(); });
    copy.querySelectorAll(".zone-line").forEach(function (e, i) {
      if (keep !== null && i !== keep) { e.remove(); }
    });
    var img = new Image();
    var loaded = new Promise(function (resolve, reject) { img.onload = resolve; img.onerror = reject; });
    img.src = "data:image/svg+xml;charset=utf-8," +
      encodeURIComponent(new XMLSerializer().serializeToString(copy));
    return loaded.then(function () {
      var canvas = document.createElement("canvas");
      canvas.width = Number(svg.getAttribute("width"));
      canvas.height = Number(svg.getAttribute("height"));
      var context = canvas.getContext("2d");
      context.drawImage(img, 0, 0);
      return context.getImageData(0, 0, canvas.width, canvas.height).data;
    });
  }
  function count(data, hex) {
    var rgb = [1, 3, 5].map(function (i) { return parseInt(hex.slice(i, i + 2), 16); });
    var n = 0;
    for (var i = 0; i < data.length; i += 4) {
      if (data[i + 3] === 255 && Math.abs(data[i] - rgb[0]) <= 8 &&
          Math.abs(data[i + 1] - rgb[1]) <= 8 && Math.abs(data[i + 2] - rgb[2]) <= 8) { n++; }
    }
    return n;
  }
  var charts = Array.from(document.querySelectorAll("svg.chart.lines"));
  Promise.all(charts.map(function (svg, chart) {
    var lines = Array.from(svg.querySelectorAll(".zone-line"));
    return raster(svg, null).then(function (all) {
      return Promise.all(lines.map(function (line, i) {
        return raster(svg, i).then(function (alone) {
          var color = line.getAttribute("stroke");
          return {chart: chart, zone: line.dataset.zone, shown: count(all, color), alone: count(alone, color)};
        });
      }));
    });
  })).then(function (found) {
    document.body.dataset.zoneLines = JSON.stringify([].concat.apply([], found));
  }, function (e) { document.body.dataset.zoneLines = "error " + e; });
})();
"""


def with_zone_line_probe(page: str) -> str:
    """`page` with the script that measures how much of each zone's line shows."""
    return page.replace("</body>", f"<script>{_ZONE_LINE_PROBE}</script></body>", 1)


def zone_line_pixels(dom: str) -> list[dict[str, Any]]:
    """What the probe of `with_zone_line_probe` measured in the rendered `dom`."""
    found = re.search(r'<body[^>]* data-zone-lines="([^"]*)"', dom)
    assert found is not None, "the zone line probe did not finish"
    text = html.unescape(found.group(1))
    assert not text.startswith("error"), text
    measured: list[dict[str, Any]] = json.loads(text)
    return measured
