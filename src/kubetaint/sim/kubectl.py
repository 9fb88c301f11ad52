"""`kubectl` verbs on the simulated cluster: taint, cordon, uncordon, drain, delete, label, with
kubectl's argument grammar, messages and output lines (mirrors staging/src/k8s.io/kubectl
pkg/cmd/{taint,drain,delete,label} and pkg/drain).

Writes go through the registry like kubectl's requests go through the API server. `drain`
cordons, then evicts through the eviction subresource, retrying a 429 every 5 s as kubectl does.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubetaint.api.errors import StatusError
from kubetaint.clock.base import Clock
from kubetaint.core import taintspec
from kubetaint.core.durations import DurationError, parse_go_duration
from kubetaint.registry import Registry
from kubetaint.registry.eviction import evict
from kubetaint.sim.kinds import KindError, resolve_kind

_BOOL_FLAGS = {
    "taint": {"--overwrite", "--all"},
    "label": {"--overwrite", "--all"},
    "drain": {"--ignore-daemonsets", "--force", "--delete-emptydir-data", "--disable-eviction"},
    "delete": {"--now", "--wait"},
    "cordon": set(),
    "uncordon": set(),
}
_VALUE_FLAGS = {"-l", "--selector", "-n", "--namespace", "--grace-period", "--timeout"}
_NODE_TYPES = ("node", "nodes", "no")


class KubectlError(ValueError):
    """What kubectl would print as `error: ...`."""


@dataclass
class Command:
    verb: str
    positional: list[str] = field(default_factory=list)
    flags: dict[str, str] = field(default_factory=dict)

    def flag(self, *names: str) -> str | None:
        for name in names:
            if name in self.flags:
                return self.flags[name]
        return None


def parse_command(args: Sequence[str]) -> Command:
    """Split verb, positional arguments and flags (`--flag`, `--flag=value`, `--flag value`)."""
    if not args:
        raise KubectlError("a kubectl verb is required")
    cmd = Command(args[0])
    bools = _BOOL_FLAGS.get(cmd.verb, set())
    rest = list(args[1:])
    while rest:
        arg = rest.pop(0)
        if arg.startswith("-") and len(arg) > 1 and not arg.endswith("-"):
            name, eq, value = arg.partition("=")
            if name in bools:
                cmd.flags[name] = value if eq else "true"
            elif name in _VALUE_FLAGS:
                if not eq:
                    if not rest:
                        raise KubectlError(f"flag needs an argument: {name}")
                    value = rest.pop(0)
                cmd.flags[name] = value
            else:
                raise KubectlError(f"unknown flag: {name}")
        else:
            cmd.positional.append(arg)
    return cmd


def _truthy(value: str | None) -> bool:
    return value is not None and value.lower() in ("true", "1", "")


def _node_names(cmd: Command, known: Collection[str] | None) -> list[str]:
    """cordon/uncordon/drain NODE...: names (an optional leading `node`/`nodes` type is allowed)."""
    names = list(cmd.positional)
    if names and names[0] in _NODE_TYPES and len(names) > 1:
        names = names[1:]
    names = [n.split("/", 1)[1] if n.startswith(("node/", "nodes/")) else n for n in names]
    if not names and cmd.flag("-l", "--selector") is None:
        raise KubectlError(
            "resource(s) were provided, but no name was specified"
            if cmd.positional
            else f"USAGE: kubectl {cmd.verb} NODE"
        )
    _check_known(names, known)
    return names


def _check_known(names: Sequence[str], known: Collection[str] | None) -> None:
    if known is None:
        return
    for name in names:
        if name not in known:
            raise KubectlError(f'nodes "{name}" not found')


def check_command(args: Sequence[str], nodes: Collection[str]) -> None:
    """Static checks before a run: grammar, flags and node names (KubectlError with kubectl's text)."""
    cmd = parse_command(args)
    if cmd.verb == "taint":
        _taint_command(cmd, nodes)
    elif cmd.verb in ("cordon", "uncordon", "drain"):
        _node_names(cmd, nodes)
        timeout = cmd.flag("--timeout")
        if timeout is not None:
            try:
                parse_go_duration(timeout)
            except DurationError as err:
                raise KubectlError(f'invalid argument "{timeout}" for "--timeout" flag: {err}') from None
    elif cmd.verb == "delete":
        _delete_target(cmd, nodes)
    elif cmd.verb == "label":
        _label_command(cmd, nodes)


def _taint_command(cmd: Command, nodes: Collection[str] | None) -> tuple[taintspec.TaintCommand, list[str]]:
    all_nodes = _truthy(cmd.flag("--all"))
    selector = cmd.flag("-l", "--selector") or ""
    try:
        prepared = taintspec.prepare_taint_command(cmd.positional, all_nodes=all_nodes, selector=selector)
    except ValueError as err:
        raise KubectlError(str(err)) from None
    names = list(prepared.resources[1:])
    _check_known(names, nodes)
    return prepared, names


def _label_command(
    cmd: Command, nodes: Collection[str] | None
) -> tuple[str, list[str], dict[str, str], list[str]]:
    if not cmd.positional:
        raise KubectlError("one or more resources must be specified as <resource> <name>")
    try:
        kind = resolve_kind(cmd.positional[0])
    except KindError as err:
        raise KubectlError(str(err)) from None
    names = [a for a in cmd.positional[1:] if "=" not in a and not a.endswith("-")]
    specs = [a for a in cmd.positional[1:] if "=" in a or a.endswith("-")]
    if not specs:
        raise KubectlError("at least one label update is required")
    add: dict[str, str] = {}
    remove: list[str] = []
    for spec in specs:
        if spec.endswith("-") and "=" not in spec:
            remove.append(spec[:-1])
        elif "=" in spec:
            key, _, value = spec.partition("=")
            if not key:
                raise KubectlError(f"invalid label spec: {spec}")
            add[key] = value
        else:
            raise KubectlError(f"invalid label spec: {spec}")
    if kind.kind == "Node":
        _check_known(names, nodes)
    return kind.kind, names, add, remove


def _delete_target(cmd: Command, nodes: Collection[str] | None) -> tuple[str, list[str]]:
    if not cmd.positional:
        raise KubectlError("You must provide one or more resources by argument or filename.")
    first = cmd.positional[0]
    if "/" in first:
        pairs = [p.split("/", 1) for p in cmd.positional]
        kinds = {resolve_kind(k).kind for k, _ in pairs}
        if len(kinds) != 1:
            raise KubectlError("mixed resource types in one delete are not supported")
        kind, names = kinds.pop(), [n for _, n in pairs]
    else:
        try:
            kind = resolve_kind(first).kind
        except KindError as err:
            raise KubectlError(str(err)) from None
        names = cmd.positional[1:]
    if not names:
        raise KubectlError("resource(s) were provided, but no name was specified")
    if kind == "Node":
        _check_known(names, nodes)
    return kind, names


Output = Callable[[str], None]


class Kubectl:
    """Runs kubectl verbs against the registry; `output` receives each line kubectl prints."""

    def __init__(self, registry: Registry, clock: Clock, output: Output | None = None) -> None:
        self.registry = registry
        self.clock = clock
        self.output: Output = output or (lambda line: None)

    def run(self, args: Sequence[str]) -> list[str]:
        return self.run_with_output(args, self.output)

    def run_with_output(self, args: Sequence[str], output: Output) -> list[str]:
        """Run one command; every printed line goes to `output` (also later ones, from drain
        retries) and the lines printed now are returned. KubectlError on failure."""
        lines: list[str] = []

        def emit(line: str) -> None:
            lines.append(line)
            output(line)

        saved = self.output
        self.output = emit
        try:
            cmd = parse_command(args)
            handler = getattr(self, "_" + cmd.verb, None)
            if handler is None or cmd.verb not in _BOOL_FLAGS:
                raise KubectlError(f'unknown command "{cmd.verb}" for "kubectl"')
            handler(cmd)
        finally:
            self.output = saved
        return lines

    # taint -----------------------------------------------------------------------------------

    def _taint(self, cmd: Command) -> None:
        prepared, names = _taint_command(cmd, None)
        overwrite = _truthy(cmd.flag("--overwrite"))
        targets = self._select_nodes(names, cmd.flag("-l", "--selector"), _truthy(cmd.flag("--all")))
        for node in targets:
            name = node["metadata"]["name"]
            taints = (node.get("spec") or {}).get("taints") or []
            try:
                operation, new_taints = taintspec.update_taints(
                    name, taints, overwrite, prepared.to_add, prepared.to_remove
                )
            except ValueError as err:
                raise KubectlError(str(err)) from None
            new_spec = {k: v for k, v in (node.get("spec") or {}).items() if k != "taints"}
            if new_taints:
                new_spec["taints"] = new_taints
            self._update_node({**node, "spec": new_spec})
            self.output(f"node/{name} {operation}")

    def _select_nodes(self, names: Sequence[str], selector: str | None, all_nodes: bool) -> list[Any]:
        if all_nodes or selector:
            return list(self.registry.list("nodes", label_selector=selector or None).items)
        return [self._get("nodes", "", name) for name in names]

    def _get(self, resource: str, namespace: str, name: str) -> Any:
        try:
            return self.registry.get(resource, namespace, name)
        except StatusError as err:
            raise KubectlError(f"Error from server ({err.reason}): {err.message}") from None

    def _update_node(self, node: Mapping[str, Any]) -> None:
        try:
            self.registry.update("nodes", dict(node))
        except StatusError as err:
            raise KubectlError(f"Error from server ({err.reason}): {err.message}") from None

    # cordon / uncordon -----------------------------------------------------------------------

    def _cordon(self, cmd: Command) -> None:
        for name in _node_names(cmd, None):
            self.set_unschedulable(name, True)

    def _uncordon(self, cmd: Command) -> None:
        for name in _node_names(cmd, None):
            self.set_unschedulable(name, False)

    def set_unschedulable(self, name: str, desired: bool) -> None:
        """CordonHelper.UpdateIfRequired + PatchOrReplace (unschedulable false is omitted)."""
        node = self._get("nodes", "", name)
        spec = dict(node.get("spec") or {})
        word = "cordoned" if desired else "uncordoned"
        if bool(spec.get("unschedulable")) == desired:
            self.output(f"node/{name} already {word}")
            return
        if desired:
            spec["unschedulable"] = True
        else:
            spec.pop("unschedulable", None)
        self._update_node({**node, "spec": spec})
        self.output(f"node/{name} {word}")

    # drain -----------------------------------------------------------------------------------

    def _drain(self, cmd: Command) -> None:
        from kubetaint.sim.drain import Drain, DrainOptions

        timeout = cmd.flag("--timeout")
        options = DrainOptions(
            ignore_daemonsets=_truthy(cmd.flag("--ignore-daemonsets")),
            force=_truthy(cmd.flag("--force")),
            delete_emptydir_data=_truthy(cmd.flag("--delete-emptydir-data")),
            disable_eviction=_truthy(cmd.flag("--disable-eviction")),
            timeout=parse_go_duration(timeout) if timeout else 0.0,
        )
        for name in _node_names(cmd, None):
            self.set_unschedulable(name, True)
            Drain(self, name, options).start()

    def evict(self, namespace: str, name: str) -> None:
        evict(self.registry, self.clock, namespace, name)

    # delete ----------------------------------------------------------------------------------

    def _delete(self, cmd: Command) -> None:
        kind_name, names = _delete_target(cmd, None)
        kind = resolve_kind(kind_name)
        namespace = (cmd.flag("-n", "--namespace") or "default") if kind.namespaced else ""
        for name in names:
            try:
                self.registry.delete(kind.resource, namespace, name)
            except StatusError as err:
                raise KubectlError(f"Error from server ({err.reason}): {err.message}") from None
            self.output(f'{kind.kind.lower()} "{name}" deleted')

    # label -----------------------------------------------------------------------------------

    def _label(self, cmd: Command) -> None:
        kind_name, names, add, remove = _label_command(cmd, None)
        kind = resolve_kind(kind_name)
        namespace = (cmd.flag("-n", "--namespace") or "default") if kind.namespaced else ""
        overwrite = _truthy(cmd.flag("--overwrite"))
        for name in names:
            obj = self._get(kind.resource, namespace, name)
            meta = dict(obj.get("metadata") or {})
            labels = dict(meta.get("labels") or {})
            for key, value in add.items():
                if not overwrite and key in labels and labels[key] != value:
                    raise KubectlError(
                        f"'{key}' already has a value ({labels[key]}), and --overwrite is false"
                    )
            before = dict(labels)
            labels.update(add)
            for key in remove:
                if key not in labels:
                    self.output(f'label "{key}" not found.')
                labels.pop(key, None)
            meta["labels"] = labels
            if labels == before:
                self.output(f"{kind.kind.lower()}/{name} not labeled")
                continue
            try:
                self.registry.update(kind.resource, {**obj, "metadata": meta})
            except StatusError as err:
                raise KubectlError(f"Error from server ({err.reason}): {err.message}") from None
            word = "unlabeled" if remove and not add else "labeled"
            self.output(f"{kind.kind.lower()}/{name} {word}")
