"""A small harness compatible with the assertions of upstream's hack/lib/test.sh, for the ported
test/cmd scripts: `get_object_assert` compares `kubectl get -o go-template` output with an
anchored regular expression (bash `=~ ^expected$`), `if_has_string` and `if_has_not_string` grep
a command's output."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field

from ..harness import KUBECTL, UpServer


@dataclass
class KubeTest:
    server: UpServer
    #: kube_flags: the namespace `create_and_use_new_namespace` made
    flags: list[str] = field(default_factory=list)

    def kubectl(
        self, *args: str, stdin: str | None = None, ok: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """`kubectl ARGS` (errexit: a failure fails the test unless `ok=False`)."""
        assert KUBECTL is not None
        result = subprocess.run(
            [KUBECTL, *self.flags, *args],
            env=self.server.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if ok:
            assert result.returncode == 0, f"kubectl {' '.join(args)}: {result.stderr}"
        return result

    def kubectl_minor(self) -> int:
        """The minor version of the kubectl that runs (the dispatcher's pick for this server)."""
        version = json.loads(self.kubectl("version", "-o", "json").stdout)["clientVersion"]
        return int(str(version["minor"]).rstrip("+"))

    def output(self, *args: str) -> str:
        """`$(kubectl ARGS 2>&1)`: stdout and stderr, the trailing newline removed."""
        result = self.kubectl(*args)
        return (result.stdout + result.stderr).rstrip("\n")

    def failing_output(self, *args: str) -> str:
        """`$(! kubectl ARGS 2>&1)`: the command must fail."""
        result = self.kubectl(*args, ok=False)
        assert result.returncode != 0, f"kubectl {' '.join(args)} succeeded: {result.stdout}"
        return (result.stdout + result.stderr).rstrip("\n")

    def get_object_assert(self, obj: str, template: str, expected: str) -> None:
        """kube::test::get_object_assert"""
        result = self.kubectl("get", *obj.split(), "-o", f"go-template={template}")
        assert re.fullmatch(expected, result.stdout), f"{obj} {template}: {result.stdout!r} !~ ^{expected}$"


def bre(pattern: str) -> str:
    """grep's basic regular expression as a Python one: `?+{}|()` are literal unless escaped."""
    out = []
    chars = iter(pattern)
    for char in chars:
        if char == "\\":
            escaped = next(chars, "\\")
            out.append(escaped if escaped in "?+{}|()" else re.escape(escaped))
        elif char in "?+{}|()":
            out.append(re.escape(char))
        else:
            out.append(char)
    return "".join(out)


def if_has_string(message: str, match: str) -> None:
    """kube::test::if_has_string (`grep -q`)"""
    assert re.search(bre(match), message), f"{match!r} not found in:\n{message}"


def if_has_not_string(message: str, match: str) -> None:
    """kube::test::if_has_not_string"""
    assert not re.search(bre(match), message), f"{match!r} found in:\n{message}"
