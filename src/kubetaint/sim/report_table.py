"""`kubetaint simulate -o table`: the timeline as a readable chronological table.

The layout is rich's (a borderless table 160 columns wide, long cells folded); cells are text as
it is (no console markup nor emoji codes: a message holding `[/]` is shown, not parsed). Rendering
a row through rich costs ~0.3 ms, which for the 60,000 records of a 5,000-node hour is most of a
minute, so rich lays out the columns from the cells that decide their widths, and a row whose
every cell is printable ASCII fitting its column is written directly, as rich writes it; any other
row (a cell to fold, wide or control characters) is rendered by rich alone, with the same column
widths. `render_table_with_rich` renders everything through rich: the reference, which
`render_table` also is in reference mode (`KUBETAINT_REFERENCE=1`).

The rows are worked out column by column where C code can do it: a row is plain when the text of
its cells joined is printable ASCII, a column's longest cell and longest word are found in the
column's text joined, and the times shown are formatted once per distinct instant.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from kubetaint.core.durations import format_duration
from kubetaint.speed.reference import reference_mode

COLUMNS = ("TIME", "REASON", "OBJECT", "NODE", "MESSAGE")
Row = tuple[str, str, str, str, str]


def _object(record: Mapping[str, Any]) -> str:
    kind = str(record.get("kind") or "")
    name = str(record.get("name") or "")
    if record.get("namespace"):
        return f"{kind.lower()}/{record['namespace']}/{name}"
    return f"{kind.lower()}/{name}" if kind not in ("Command", "Scenario") else name


def _rows(doc: Mapping[str, Any]) -> list[Row]:
    shown: dict[float, str] = {}  # instant -> its text (records come in waves at one instant)
    rows: list[Row] = []
    for record in doc.get("timeline") or []:
        t = float(record["t"])
        time = shown.get(t)
        if time is None:
            time = shown[t] = format_duration(t)
        rows.append(
            (
                time,
                str(record["reason"]),
                _object(record),
                str(record.get("node") or ""),
                str(record.get("message") or ""),
            )
        )
    return rows


#: The table's width: a longer message folds onto the lines below its row.
WIDTH = 160
#: A width no record reaches: every record on one line (`simulate -o wide`, for grep and awk).
UNFOLDED = 1_000_000


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


def render_table_with_rich(doc: Mapping[str, Any], *, width: int = WIDTH) -> str:
    """Time, reason, object, node and message per record, then the summary: all through rich."""
    console, buffer = _console(width)
    head, tail = _head_and_tail(doc)
    console.print(Text(head))
    console.print(_table(_rows(doc)))
    console.print(Text(tail))
    return _lines(buffer.getvalue())


def render_table(doc: Mapping[str, Any], *, width: int = WIDTH) -> str:
    """What `render_table_with_rich` renders, plain rows written directly."""
    if reference_mode():
        return render_table_with_rich(doc, width=width)
    rows = _rows(doc)
    plain = _plain_rows(rows)
    widths = _column_widths(rows, plain, width)
    if widths is None:
        return render_table_with_rich(doc, width=width)
    console, buffer = _console(width)
    head, tail = _head_and_tail(doc)
    console.print(Text(head))
    out = [_lines(buffer.getvalue()), _plain_line(COLUMNS, widths)]
    fits = _fitting(rows, plain, widths)
    line = _line_format(widths)
    for row, fit in zip(rows, fits, strict=True):
        if fit:
            out.append(line(*row).rstrip() + "\n")
        else:
            out.append(_rich_row(row, widths, width))
    console, buffer = _console(width)
    console.print(Text(tail))
    out.append(_lines(buffer.getvalue()))
    return "".join(out)


def _is_plain(cell: str) -> bool:
    """Text rich shows one character per column: printable ASCII."""
    return cell.isascii() and cell.isprintable()


def _plain_rows(rows: list[Row]) -> list[bool]:
    """Whether each row's cells are all plain (`_is_plain` of their text joined: the same)."""
    if _is_plain("".join("".join(row) for row in rows)):
        return [True] * len(rows)
    return [_is_plain("".join(row)) for row in rows]


def _longest_cell(cells: list[str]) -> int:
    """The index of the first of `cells` with the most characters."""
    lengths = list(map(len, cells))
    return lengths.index(max(lengths))


def _widest_word(cells: list[str]) -> int:
    """The index of the first of `cells` (plain text: no line breaks, spaces the only white
    space) with the longest word (rich's narrowest width for a folded cell: its longest word, or
    its length when it has none), found in the cells' text joined."""
    text = "\n".join(cells)
    words = max(map(len, text.split()), default=0)
    blank = 0  # a cell of spaces: its length
    spaces = list(map(str.isspace, cells))
    if True in spaces:
        blank = max(len(cell) for cell, space in zip(cells, spaces, strict=True) if space)
    widest = max(words, blank)
    found = len(cells)
    if words == widest and words > 0:
        word = re.search(rf"(?<![^ \n])[^ \n]{{{words}}}(?![^ \n])", text)
        if word is not None:
            found = text.count("\n", 0, word.start())
    if blank == widest:
        found = min(found, next(i for i, cell in enumerate(cells) if len(cell) == blank and not cell.strip()))
    return found


def _fitting(rows: list[Row], plain: list[bool], widths: Sequence[int]) -> list[bool]:
    """Whether each row is plain and its every cell fits its column's width (written directly)."""
    fits = list(plain)
    for column, room in enumerate(widths):
        lengths = [len(row[column]) for row in rows]
        if max(lengths, default=0) > room:
            fits = [fit and length <= room for fit, length in zip(fits, lengths, strict=True)]
    return fits


def _line_format(widths: Sequence[int]) -> Any:
    """`_plain_line` of a row without its trailing line break and before its right strip: each
    cell but the last padded to its column's width, two spaces between."""
    return "  ".join([*(f"{{:<{room}}}" for room in widths[:-1]), "{}"]).format


def _column_widths(rows: list[Row], plain: list[bool], width: int) -> list[int] | None:
    """The content width of each column as rich lays out the whole table, worked out from the
    rows that decide it: every row that is not plain, and for each column the plain rows with its
    longest cell and its longest word (rich measures a column by those two). None: rich's layout
    could not be read."""
    deciding: dict[int, None] = {i: None for i, is_plain in enumerate(plain) if not is_plain}
    plain_rows = [i for i, is_plain in enumerate(plain) if is_plain]
    for column in range(len(COLUMNS)):
        if plain_rows:
            cells = [rows[i][column] for i in plain_rows]
            deciding[plain_rows[_longest_cell(cells)]] = None
            deciding[plain_rows[_widest_word(cells)]] = None
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
