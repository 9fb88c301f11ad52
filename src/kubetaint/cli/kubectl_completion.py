"""`kubectl_complete-kubetaint`: the completion of `kubectl kubetaint ...` inside kubectl's own
shell completion. kubectl (1.26 and later) runs the program `kubectl_complete-<plugin>` it finds
on the PATH with the words typed after the plugin's name, the last one the word being completed
(empty for a new word), and reads Cobra's answer: one candidate per line (a tab, then its
description), then `:DIRECTIVE` (`cobra.ShellCompDirective`).
"""

from __future__ import annotations

import sys

from click.shell_completion import ShellComplete

from kubetaint.cli.exiting import flush_or_end, mark_console
from kubetaint.cli.main import cli

#: cobra.ShellCompDirectiveDefault: the candidates, or the shell's file names when there are none.
DEFAULT = 0
#: cobra.ShellCompDirectiveNoFileComp: the candidates only.
NO_FILE_COMP = 4


def answer(words: list[str]) -> str:
    """Cobra's completion answer for `kubectl kubetaint WORDS...` (the last word is completed)."""
    *before, incomplete = words or [""]
    complete = ShellComplete(cli, {}, "kubectl kubetaint", "_KUBETAINT_COMPLETE")
    items = complete.get_completions(before, incomplete)
    if not items or any(item.type in ("file", "dir") for item in items):
        return f":{DEFAULT}\n"  # a file (or nothing known): the shell offers file names
    lines = []
    for item in items:
        help_text = " ".join(str(item.help or "").split())
        lines.append(f"{item.value}\t{help_text}" if help_text else str(item.value))
    return "".join(f"{line}\n" for line in lines) + f":{NO_FILE_COMP}\n"


def main() -> None:
    """Console-script entry point."""
    mark_console()
    sys.stdout.write(answer(sys.argv[1:]))
    flush_or_end()
