"""Regular expressions as Go's `regexp` reads them (RE2 syntax, linear-time matching), for the
`pattern`s of custom resource schemas: kube-apiserver compiles and matches them with Go's
regexp, so a pattern with Perl-only syntax (look-behind, back-references) is refused and no
value can make matching take exponential time. With the `server` extra, google-re2 does the
work; a base install falls back to Python's `re` (what `kubetaint validate` of a CRD then
accepts may differ on such syntax)."""

from __future__ import annotations

import re
from typing import Any

from kubetaint.speed.memo import Memo

try:  # the `server` extra
    import re2 as _re2
except ImportError:  # pragma: no cover - base install
    _re2 = None


_COMPILED: Memo[str, tuple[Any, str | None]] = Memo("api.gopattern.compiled", limit=512)


def _compiled(pattern: str) -> tuple[Any, str | None]:
    """(compiled pattern, None) or (None, the parse error)."""
    found = _COMPILED.get(pattern)
    if found is None:
        found = _COMPILED.put(pattern, _compile(pattern))
    return found


def _compile(pattern: str) -> tuple[Any, str | None]:
    if _re2 is not None:
        options = _re2.Options()
        options.log_errors = False
        try:
            return _re2.compile(pattern, options), None
        except _re2.error as exc:
            detail = exc.args[0] if exc.args else ""
            text = detail.decode(errors="replace") if isinstance(detail, bytes) else str(detail)
            return None, f"error parsing regexp: {text}"
    try:
        return re.compile(pattern), None
    except re.error as exc:
        return None, f"error parsing regexp: {exc}"


def compile_error(pattern: str) -> str | None:
    """Why `pattern` is not a valid regular expression, or None."""
    return _compiled(pattern)[1]


def search(pattern: str, value: str) -> bool:
    """Whether `pattern` matches somewhere in `value` (Go's MatchString); an invalid pattern
    matches (validation refused it when the CRD was written)."""
    compiled, error = _compiled(pattern)
    if error is not None:
        return True
    return compiled.search(value) is not None
