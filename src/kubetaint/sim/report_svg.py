"""The HTML report's charts as inline SVG: marks per node (or per zone, beyond a few hundred
nodes), pods per zone, evictions per interval and pending pods. Every chart has a time axis whose
labels stay inside the picture, marks with a shape as well as a colour, and `<title>`s that say
what each mark stands for."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from kubetaint.core.durations import format_duration
from kubetaint.sim.report_data import MARK_ORDER, MARKS, NodeMarks, buckets, natural_key

WIDTH = 960
LEFT = 160
RIGHT = 24
ROW = 16
#: Time buckets of the aggregated charts (one per ~3 px).
BUCKETS = 240
#: Zone colours of the pods-per-zone lines (Okabe–Ito); with dash patterns (every zone's but the
#: first's) and marker shapes of other cycle lengths, no two of the first 210 zones look alike.
_ZONE_COLORS = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#000000")
_ZONE_DASHES = ("8 4", "4 4", "2 3", "10 3 2 3", "6 3 2 3", "14 4")
_ZONE_SHAPES = ("circle", "square", "triangle-up", "diamond", "triangle-down")
#: Time buckets between two markers of one zone's line (more with many zones).
ZONE_MARKER_EVERY = 24
_MARK_BY_KEY = {mark.key: mark for mark in MARKS}


def x_of(t: float, end: float) -> float:
    return LEFT + (WIDTH - LEFT - RIGHT) * (min(max(t, 0.0), end) / end if end > 0 else 0.0)


def symbols() -> str:
    """The mark shapes, defined once per page and drawn with `<use>`."""
    shapes = {
        "tick": '<rect x="-1" y="-5" width="2" height="10"/>',
        "triangle-up": '<path d="M0,-5 L5,4 L-5,4 Z"/>',
        "triangle-down": '<path d="M0,5 L5,-4 L-5,-4 Z"/>',
        "square": '<rect x="-4" y="-4" width="8" height="8"/>',
        "cross": '<path d="M-4,-4 L4,4 M4,-4 L-4,4" stroke-width="2.2" fill="none"/>',
        "circle": '<circle r="4.5"/>',
        "diamond": '<path d="M0,-6 L6,0 L0,6 L-6,0 Z"/>',
    }
    defs = "".join(
        f'<symbol id="m-{mark.key}" overflow="visible" fill="{mark.color}" stroke="{mark.color}">'
        f"{shapes[mark.shape]}</symbol>"
        for mark in MARKS
    )
    return f'<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>{defs}</defs></svg>'


def legend() -> str:
    items = "".join(
        f'<span class="key"><svg width="14" height="14" viewBox="-7 -7 14 14" aria-hidden="true">'
        f'<use href="#m-{mark.key}"/></svg>{html.escape(mark.label)}</span>'
        for mark in MARKS
    )
    return f'<div class="legend" role="list">{items}</div>'


def axis(end: float, y: float, ticks: int = 6) -> str:
    """Time labels under a chart; the first is left-aligned and the last right-aligned, so none
    is clipped at the picture's edges."""
    parts = [f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y - 12}" y2="{y - 12}" stroke="#999"/>']
    for i in range(ticks):
        t = end * i / (ticks - 1)
        anchor = "start" if i == 0 else "end" if i == ticks - 1 else "middle"
        x = x_of(t, end)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y - 12}" y2="{y - 8}" stroke="#999"/>')
        parts.append(
            f'<text x="{x:.1f}" y="{y}" text-anchor="{anchor}" class="tick">'
            f"{format_duration(round(t))}</text>"
        )
    return "".join(parts)


def _use(mark: str, x: float, y: float, title: str, opacity: float = 1.0) -> str:
    faded = f' opacity="{opacity:.2f}"' if opacity < 1 else ""
    return (
        f'<use href="#m-{mark}" x="{x:.1f}" y="{y:.1f}" class="mark {mark}"{faded}>'
        f"<title>{html.escape(title)}</title></use>"
    )


def node_rows(
    nodes: Sequence[str], marks: NodeMarks, zones: Mapping[str, str], end: float, *, label_zone: bool
) -> str:
    """One row per node; marks of one kind within a pixel are drawn once, their count in the
    title. Zone boundaries are ruled when `label_zone`."""
    height = max(1, len(nodes)) * ROW + 36
    parts = [f'<svg class="chart nodes" width="{WIDTH}" height="{height}" role="img">']
    previous = None
    for index, node in enumerate(nodes):
        y = 14 + index * ROW
        zone = zones.get(node, "")
        if label_zone and zone != previous:
            parts.append(f'<line x1="0" x2="{WIDTH}" y1="{y - 7}" y2="{y - 7}" stroke="#ccc"/>')
            previous = zone
        label = f"{zone} / {node}" if label_zone else node
        parts.append(f'<text x="4" y="{y + 4}" class="label">{html.escape(label)}</text>')
        seen: dict[tuple[int, str], list[float]] = {}
        for t, key in marks.by_node.get(node, ()):
            seen.setdefault((round(x_of(t, end)), key), []).append(t)
        for (px, key), times in sorted(seen.items(), key=lambda item: MARK_ORDER[item[0][1]]):
            what = _MARK_BY_KEY[key].label
            title = (
                f"{node}: {what} at {format_duration(times[0])}"
                if len(times) == 1
                else f"{node}: {len(times)} × {what}, "
                f"{format_duration(times[0])}–{format_duration(times[-1])}"
            )
            parts.append(_use(key, px, y, title))
    parts.append(axis(end, height - 4))
    parts.append("</svg>")
    return "".join(parts)


def zone_lanes(counts: Mapping[str, Mapping[str, Sequence[int]]], order: Sequence[str], end: float) -> str:
    """Per zone, one lane per kind of mark: a mark in each time bucket that has records, more
    opaque the more records it stands for (the count is in its title)."""
    rows: list[tuple[str, str]] = [
        (zone, key) for zone in order for key in sorted(counts.get(zone, {}), key=MARK_ORDER.__getitem__)
    ]
    height = max(1, len(rows)) * ROW + 36
    width = buckets(end, BUCKETS)
    peak = max((n for per in counts.values() for series in per.values() for n in series), default=1) or 1
    parts = [f'<svg class="chart zones" width="{WIDTH}" height="{height}" role="img">']
    previous = None
    for index, (zone, key) in enumerate(rows):
        y = 14 + index * ROW
        if zone != previous:
            parts.append(f'<line x1="0" x2="{WIDTH}" y1="{y - 7}" y2="{y - 7}" stroke="#ccc"/>')
            parts.append(f'<text x="4" y="{y + 4}" class="label zone">{html.escape(zone)}</text>')
            previous = zone
        parts.append(
            f'<text x="{LEFT - 8}" y="{y + 4}" text-anchor="end" class="label">'
            f"{html.escape(_MARK_BY_KEY[key].label.split(' (')[0])}</text>"
        )
        for bucket, n in enumerate(counts[zone][key]):
            if not n:
                continue
            t0 = bucket * width
            title = (
                f"{zone}: {n} × {_MARK_BY_KEY[key].label}, "
                f"{format_duration(round(t0))}–{format_duration(round(t0 + width))}"
            )
            opacity = 0.35 + 0.65 * (n / peak) ** 0.5
            parts.append(_use(key, x_of(t0 + width / 2, end), y, title, opacity))
    parts.append(axis(end, height - 4))
    parts.append("</svg>")
    return "".join(parts)


def _zone_style(index: int) -> tuple[str, str, str]:
    """The colour, dash pattern and marker shape of the `index`-th zone's line."""
    dash = "" if index == 0 else _ZONE_DASHES[(index - 1) % len(_ZONE_DASHES)]
    return _ZONE_COLORS[index % len(_ZONE_COLORS)], dash, _ZONE_SHAPES[index % len(_ZONE_SHAPES)]


def _marker(shape: str, x: float, y: float) -> str:
    """The path of a zone marker centred on (x, y)."""
    paths = {
        "circle": f"M{x - 3.5:.1f},{y:.1f} a3.5,3.5 0 1,0 7,0 a3.5,3.5 0 1,0 -7,0 Z",
        "square": f"M{x - 3.2:.1f},{y - 3.2:.1f} h6.4 v6.4 h-6.4 Z",
        "triangle-up": f"M{x:.1f},{y - 4.2:.1f} l4.2,7.2 h-8.4 Z",
        "diamond": f"M{x:.1f},{y - 4.5:.1f} l4.5,4.5 l-4.5,4.5 l-4.5,-4.5 Z",
        "triangle-down": f"M{x:.1f},{y + 4.2:.1f} l4.2,-7.2 h-8.4 Z",
    }
    return paths[shape]


def zone_lines(series: Mapping[str, Sequence[int]], order: Sequence[str], end: float, title: str) -> str:
    """A step line per zone with a legend. Each zone has its own colour, dash pattern and hollow
    marker shape, and its markers sit at time buckets no other zone's do, so lines with equal
    counts stay apart: the first zone's solid line shows through the gaps of the dashed ones
    drawn over it, and every zone's markers are drawn over every line."""
    height = 200
    plot = height - 50
    peak = max((n for values in series.values() for n in values), default=0) or 1
    width = buckets(end, BUCKETS)
    zones = [z for z in order if z in series]
    period = max(ZONE_MARKER_EVERY, 6 * len(zones))

    def y(n: float) -> float:
        return 10 + plot * (1 - n / peak)

    parts = [f'<svg class="chart lines" width="{WIDTH}" height="{height}" role="img"><title>{title}</title>']
    parts.append(f'<text x="{LEFT - 8}" y="{y(peak) + 4:.1f}" text-anchor="end" class="tick">{peak:,}</text>')
    parts.append(f'<text x="{LEFT - 8}" y="{y(0) + 4:.1f}" text-anchor="end" class="tick">0</text>')
    keys = []
    markers = []
    for index, zone in enumerate(zones):
        color, dash, shape = _zone_style(index)
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        name = html.escape(zone)
        points = []
        for bucket, n in enumerate(series[zone]):
            points.append(f"{x_of(bucket * width, end):.1f},{y(n):.1f}")
            points.append(f"{x_of((bucket + 1) * width, end):.1f},{y(n):.1f}")
        last = series[zone][-1] if series[zone] else 0
        parts.append(
            f'<polyline class="zone-line" data-zone="{name}" fill="none" stroke="{color}" '
            f'stroke-width="2.4"{dashed} points="{" ".join(points)}">'
            f"<title>{name}: {last:,} pods at the end</title></polyline>"
        )
        # each zone's markers at its own offset within the period: no two zones' coincide
        for bucket in range(period * (2 * index + 1) // (2 * len(zones)), len(series[zone]), period):
            n = series[zone][bucket]
            markers.append(
                f'<path class="zone-marker" data-zone="{name}" fill="#fff" stroke="{color}" '
                f'stroke-width="1.6" d="{_marker(shape, x_of((bucket + 0.5) * width, end), y(n))}">'
                f"<title>{name}: {n:,} pods at {format_duration(round(bucket * width))}</title></path>"
            )
        keys.append(
            '<span class="key"><svg width="30" height="12" aria-hidden="true">'
            f'<line x1="0" x2="30" y1="6" y2="6" stroke="{color}" stroke-width="2.4"{dashed}/>'
            f'<path fill="#fff" stroke="{color}" stroke-width="1.6" d="{_marker(shape, 15, 6)}"/>'
            f"</svg>{name}</span>"
        )
    parts.extend(markers)
    parts.append(axis(end, height - 24))
    parts.append("</svg>")
    return f'<div class="legend">{"".join(keys)}</div>' + "".join(parts)


def bars(series: Mapping[str, Sequence[int]], width: float, end: float) -> str:
    """Evictions per interval of `width` seconds: a bar per interval, stacked by kind of eviction
    (`series` by mark key, bottom first), each in its mark's colour, with a legend."""
    height = 160
    plot = height - 50
    totals = [sum(column) for column in zip(*series.values(), strict=True)]
    peak = max(totals, default=0) or 1
    present = [mark for mark, values in series.items() if any(values)]
    keys = "".join(
        f'<span class="key"><svg width="14" height="14" aria-hidden="true"><rect x="2" y="2" width="10" '
        f'height="10" fill="{_MARK_BY_KEY[mark].color}"/></svg>{html.escape(_MARK_BY_KEY[mark].label)}</span>'
        for mark in present
    )
    parts = [f'<svg class="chart bars" width="{WIDTH}" height="{height}" role="img">']
    parts.append(f'<text x="{LEFT - 8}" y="14" text-anchor="end" class="tick">{peak:,}</text>')
    parts.append(f'<text x="{LEFT - 8}" y="{10 + plot + 4}" text-anchor="end" class="tick">0</text>')
    for bucket in range(len(totals)):
        x0, x1 = x_of(bucket * width, end), x_of((bucket + 1) * width, end)
        t0 = bucket * width
        span = f"{format_duration(round(t0))}–{format_duration(round(min(end, t0 + width)))}"
        below = 0
        for mark in present:
            n = series[mark][bucket]
            if not n:
                continue
            h, base = plot * n / peak, plot * below / peak
            below += n
            label = _MARK_BY_KEY[mark].label
            parts.append(
                f'<rect class="bar {mark}" x="{x0:.1f}" y="{10 + plot - base - h:.1f}" '
                f'width="{max(1.0, x1 - x0 - 0.5):.1f}" height="{h:.1f}" fill="{_MARK_BY_KEY[mark].color}">'
                f"<title>{n:,} × {html.escape(label)}, {span}</title></rect>"
            )
    parts.append(axis(end, height - 24))
    parts.append("</svg>")
    return (f'<div class="legend">{keys}</div>' if keys else "") + "".join(parts)


def band(values: Sequence[tuple[int, int, int]], end: float) -> str:
    """Pending pods: the least–most band of each time bucket and the count at its end."""
    height = 160
    plot = height - 50
    peak = max((high for _, high, _ in values), default=0) or 1
    width = buckets(end, len(values)) if values else 1.0

    def y(n: float) -> float:
        return 10 + plot * (1 - n / peak)

    upper = [f"{x_of((i + 0.5) * width, end):.1f},{y(high):.1f}" for i, (_, high, _) in enumerate(values)]
    lower = [f"{x_of((i + 0.5) * width, end):.1f},{y(low):.1f}" for i, (low, _, _) in enumerate(values)]
    line = [f"{x_of((i + 0.5) * width, end):.1f},{y(last):.1f}" for i, (_, _, last) in enumerate(values)]
    parts = [f'<svg class="chart pending" width="{WIDTH}" height="{height}" role="img">']
    parts.append(f'<text x="{LEFT - 8}" y="{y(peak) + 4:.1f}" text-anchor="end" class="tick">{peak:,}</text>')
    parts.append(f'<text x="{LEFT - 8}" y="{y(0) + 4:.1f}" text-anchor="end" class="tick">0</text>')
    if values:
        parts.append(
            f'<polygon class="pending-band" fill="#56b4e9" fill-opacity="0.35" stroke="none" '
            f'points="{" ".join(upper + lower[::-1])}"><title>least and most pending pods</title></polygon>'
        )
        parts.append(
            '<polyline class="pending-line" fill="none" stroke="#0072b2" stroke-width="2" '
            f'points="{" ".join(line)}">'
            f"<title>pending pods: {values[-1][2]:,} at the end</title></polyline>"
        )
    parts.append(axis(end, height - 24))
    parts.append("</svg>")
    return "".join(parts)


def sorted_nodes(nodes: Sequence[str], zones: Mapping[str, str], zone_first: Sequence[str]) -> list[str]:
    rank = {zone: index for index, zone in enumerate(zone_first)}
    return sorted(nodes, key=lambda n: (rank.get(zones.get(n, ""), len(rank)), natural_key(n)))
