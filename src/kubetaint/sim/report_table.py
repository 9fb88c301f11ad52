"""`kubetaint simulate -o table`: the timeline as a readable chronological table.

The layout is rich's (a borderless table 160 columns wide, long cells folded); cells are text as
it is (no console markup nor emoji codes: a message holding `[/]` is shown, not parsed). Rendering
a row through rich costs ~0.3 ms, which for the 60,000 records of a 5,000-node hour is most of a
minute, so rich lays out the columns from the cells that decide their widths, and a row whose
every cell is printable ASCII fitting its column is written directly, as rich writes it; any other
row (a cell to fold, wide or control characters) is rendered by rich alone, with the same column
widths. `render_table_with_rich` renders everything through rich: the reference.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kubetaint.sim.durations import format_duration

COLUMNS = ("TIME", "REASON", "OBJECT", "NODE", "MESSAGE")
Row = tuple[str, str, str, str, str]


def _object(record: Mapping[str, Any]) -> str:
    kind = str(record.get("kind") or "")
    name = str(record.get("name") or "")
    if record.get("namespace"):
        return f"{kind.lower()}/{record['namespace']}/{name}"
    return f"{kind.lower()}/{name}" if kind not in ("Command", "Scenario") else name


def _rows(doc: Mapping[str, Any]) -> list[Row]:
    return [
        (
            format_duration(float(record["t"])),
            str(record["reason"]),
            _object(record),
            str(record.get("node") or ""),
            str(record.get("message") or ""),
        )
        for record in doc.get("timeline") or []
    ]


def _console(width: int) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=width, no_color=True, highlight=False, soft_wrap=False), buffer


def _table(rows: Iterable[Row], widths: Sequence[int] | None = None) -> Table:
    """The rich table of `rows` (with fixed content widths and no header when `widths` is given)."""
    table = Table(box=None, show_edge=False, pad_edge=False, header_style="bold", show_header=widths is None)
    for i, column in enumerate(COLUMNS):
        table.add_column(column, overflow="fold", width=None if widths is None else widths[i])
    for row in rows:
        table.add_row(*map(Text, row))
    return table


def _lines(text: str) -> str:
    return "".join(line.rstrip() + "\n" for line in text.splitlines())


def _head_and_tail(doc: Mapping[str, Any]) -> tuple[str, str]:
    summary = doc.get("summary") or {}
    head = f"scenario {doc.get('scenario')} (seed {doc.get('seed')}), {format_duration(float(doc['end']))}"
    return head, "summary: " + ", ".join(f"{k} {v}" for k, v in summary.items())


def render_table_with_rich(doc: Mapping[str, Any], *, width: int = 160) -> str:
    """Time, reason, object, node and message per record, then the summary: all through rich."""
    console, buffer = _console(width)
    head, tail = _head_and_tail(doc)
    console.print(Text(head))
    console.print(_table(_rows(doc)))
    console.print(Text(tail))
    return _lines(buffer.getvalue())


def render_table(doc: Mapping[str, Any], *, width: int = 160) -> str:
    """What `render_table_with_rich` renders, plain rows written directly."""
    rows = _rows(doc)
    plain = [all(map(_is_plain, row)) for row in rows]  # (a few µs a row)
    widths = _column_widths(rows, plain, width)
    if widths is None:
        return render_table_with_rich(doc, width=width)
    console, buffer = _console(width)
    head, tail = _head_and_tail(doc)
    console.print(Text(head))
    out = [_lines(buffer.getvalue()), _plain_line(COLUMNS, widths)]
    for row, is_plain in zip(rows, plain, strict=True):
        if is_plain and all(len(cell) <= room for cell, room in zip(row, widths, strict=True)):
            out.append(_plain_line(row, widths))
        else:
            out.append(_rich_row(row, widths, width))
    console, buffer = _console(width)
    console.print(Text(tail))
    out.append(_lines(buffer.getvalue()))
    return "".join(out)


def _is_plain(cell: str) -> bool:
    """Text rich shows one character per column: printable ASCII."""
    return cell.isascii() and cell.isprintable()


def _word_width(cell: str) -> int:
    """rich's narrowest width for a folded cell: its longest word."""
    return max(map(len, cell.split()), default=len(cell))


def _column_widths(rows: list[Row], plain: list[bool], width: int) -> list[int] | None:
    """The content width of each column as rich lays out the whole table, worked out from the
    rows that decide it: every row that is not plain, and for each column the plain rows with its
    longest cell and its longest word (rich measures a column by those two). None: rich's layout
    could not be read."""
    deciding: dict[int, None] = {i: None for i, is_plain in enumerate(plain) if not is_plain}
    plain_rows = [i for i, is_plain in enumerate(plain) if is_plain]
    for column in range(len(COLUMNS)):
        if plain_rows:
            deciding[max(plain_rows, key=lambda i: len(rows[i][column]))] = None
            deciding[max(plain_rows, key=lambda i: _word_width(rows[i][column]))] = None
    table = _table(rows[i] for i in sorted(deciding))
    console, _ = _console(width)
    try:
        # as Table.__rich_console__ lays the table out (private in rich: checked by the tests)
        options = console.options.update_width(width - table._extra_width)
        padded = table._calculate_column_widths(console, options)
    except AttributeError:  # pragma: no cover - another rich
        return None
    last = len(COLUMNS) - 1
    # padding: one space right of the first column, left of the last, both sides between
    return [w - (1 if i in (0, last) else 2) for i, w in enumerate(padded)]


def _plain_line(row: Sequence[str], widths: Sequence[int]) -> str:
    last = len(widths) - 1
    cells = [cell if i == last else cell.ljust(widths[i]) for i, cell in enumerate(row)]
    return "  ".join(cells).rstrip() + "\n"


def _rich_row(row: Row, widths: Sequence[int], width: int) -> str:
    console, buffer = _console(width)
    console.print(_table([row], widths))
    return _lines(buffer.getvalue())
