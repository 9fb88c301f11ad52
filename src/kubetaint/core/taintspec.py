"""`kubectl taint`'s pure logic: argument splitting, the taint-spec grammar, the add/remove conflict
check and the per-node merge (mirrors staging/src/k8s.io/kubectl/pkg/cmd/taint/taint.go and utils.go).

Taints are Kubernetes JSON dicts: `{"key", "value", "effect"}`, empty fields omitted as in the API.
Every error raises ValueError with kubectl's message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubetaint.api.goquote import go_quote
from kubetaint.api.validation.names import is_qualified_name, is_valid_label_value
from kubetaint.core.matching import TAINT_EFFECTS, match_taint, taint_to_string

Taint = dict[str, Any]
MODIFIED = "modified"
TAINTED = "tainted"
UNTAINTED = "untainted"
_NODE_RESOURCES = frozenset({"node", "nodes", "no"})


def _taint(key: str, value: str = "", effect: str = "") -> Taint:
    taint: Taint = {"key": key}
    if value:
        taint["value"] = value
    if effect:
        taint["effect"] = effect
    return taint


def _s(obj: Mapping[str, Any], name: str) -> str:
    value = obj.get(name)
    return "" if value is None else str(value)


def go_struct(taint: Mapping[str, Any]) -> str:
    """`%v` of a v1.Taint value: `{key value effect <nil>}`."""
    added = taint.get("timeAdded")
    shown = "<nil>" if added is None else added
    return f"{{{_s(taint, 'key')} {_s(taint, 'value')} {_s(taint, 'effect')} {shown}}}"


def parse_taint(spec: str) -> Taint:
    """parseTaint: `<key>=<value>:<effect>`, `<key>:<effect>` or `<key>`."""
    parts = spec.split(":")
    value = effect = ""
    if len(parts) == 1:
        key = parts[0]
    elif len(parts) == 2:
        effect = parts[1]
        if effect not in TAINT_EFFECTS:
            raise ValueError(f"invalid taint effect: {effect}, unsupported taint effect")
        key_value = parts[0].split("=")
        if len(key_value) > 2:
            raise ValueError(f"invalid taint spec: {spec}")
        key = key_value[0]
        if len(key_value) == 2:
            value = key_value[1]
            msgs = is_valid_label_value(value)
            if msgs:
                raise ValueError(f"invalid taint spec: {spec}, {'; '.join(msgs)}")
    else:
        raise ValueError(f"invalid taint spec: {spec}")
    msgs = is_qualified_name(key)
    if msgs:
        raise ValueError(f"invalid taint spec: {spec}, {'; '.join(msgs)}")
    return _taint(key, value, effect)


def parse_taint_spec(args: Sequence[str]) -> tuple[list[Taint], list[Taint]]:
    """The taints of a `kubectl taint` command line, as kubectl's `parseTaints` reads them.

    Args:
        args: the taint arguments, e.g. `["dedicated=gpu:NoSchedule", "old-"]`; an argument
            ending in `-` removes the taints of that `key[:effect]`.

    Returns:
        (taints to add, taints to remove), each a list of taint dicts.

    Raises:
        ValueError: with kubectl's message, for an argument kubectl refuses.

    Examples:
        >>> parse_taint_spec(["dedicated=gpu:NoSchedule", "old-"])
        ([{'key': 'dedicated', 'value': 'gpu', 'effect': 'NoSchedule'}], [{'key': 'old'}])
    """
    to_add: list[Taint] = []
    to_remove: list[Taint] = []
    seen: set[tuple[str, str]] = set()
    for spec in args:
        if spec.endswith("-"):
            parsed = parse_taint(spec[:-1])
            to_remove.append(_taint(parsed["key"], effect=_s(parsed, "effect")))
            continue
        parsed = parse_taint(spec)
        if not parsed.get("effect"):
            raise ValueError(f"invalid taint spec: {spec}")
        identity = (parsed["key"], parsed["effect"])
        if identity in seen:
            raise ValueError(f"duplicated taints with the same key and effect: {go_struct(parsed)}")
        seen.add(identity)
        to_add.append(parsed)
    return to_add, to_remove


def is_taint_arg(arg: str) -> bool:
    """Complete's test: a taint argument contains `=` or `:`, or ends with `-`."""
    return "=" in arg or ":" in arg or arg.endswith("-")


def split_taint_args(args: Sequence[str]) -> tuple[list[str], list[str]]:
    """Complete: (resources, taint args); every resource must come before the first taint arg."""
    resources: list[str] = []
    taint_args: list[str] = []
    for arg in args:
        if is_taint_arg(arg):
            taint_args.append(arg)
        elif taint_args:
            raise ValueError(f"all resources must be specified before taint changes: {arg}")
        else:
            resources.append(arg)
    if not resources:
        raise ValueError("one or more resources must be specified as <resource> <name>")
    if not taint_args:
        raise ValueError("at least one taint update is required")
    return resources, taint_args


def usage_error(message: str) -> str:
    """cmdutil.UsageErrorf's text (of `kubectl taint`)."""
    return f"{message}\nSee 'kubectl taint -h' for help and examples"


def check_resource_type(resource: str) -> None:
    """Validate: only nodes can be tainted."""
    resource_type = resource.lower()
    name = resource_type.split(".", 1)[0]
    if name not in _NODE_RESOURCES:
        raise ValueError(f"invalid resource type {resource_type}, only node types are supported")


def check_conflicts(to_add: Sequence[Mapping[str, Any]], to_remove: Sequence[Mapping[str, Any]]) -> None:
    """Validate: a taint may not be both added and removed (a key-only removal conflicts with any effect)."""
    conflicts = [
        f'{{"{_s(removal, "key")}":"{_s(removal, "effect")}"}}'
        for addition in to_add
        for removal in to_remove
        if _s(addition, "key") == _s(removal, "key")
        and (not _s(removal, "effect") or _s(addition, "effect") == _s(removal, "effect"))
    ]
    if conflicts:
        raise ValueError(
            "can not both modify and remove the following taint(s) in the same command: "
            + ", ".join(conflicts)
        )


def validate_taint_flags(resources: Sequence[str], *, all_nodes: bool = False, selector: str = "") -> None:
    """validateFlags: --all and --selector are exclusive; otherwise a node name is needed."""
    if all_nodes and selector:
        raise ValueError("setting 'all' parameter with a non empty selector is prohibited")
    if not all_nodes and not selector and len(resources) < 2:
        raise ValueError("at least one resource name must be specified since 'all' parameter is not set")


def taints_already_exist(old: Sequence[Mapping[str, Any]], to_add: Sequence[Mapping[str, Any]]) -> str:
    """checkIfTaintsAlreadyExists: the keys (comma-joined) of additions that match an old (key, effect)."""
    return ",".join(
        _s(taint, "key")
        for taint in to_add
        for existing in old
        if _s(taint, "key") == _s(existing, "key") and _s(taint, "effect") == _s(existing, "effect")
    )


def reorganize_taints(
    node_taints: Sequence[Mapping[str, Any]],
    overwrite: bool,
    to_add: Sequence[Mapping[str, Any]],
    to_remove: Sequence[Mapping[str, Any]],
) -> tuple[str, list[Taint]]:
    """reorganizeTaints: additions first, then untouched old taints, then removals.

    Returns (operation, new taints). A removal that matches nothing raises ValueError with
    `taint "<ToString>" not found` (several aggregated as `[a, b]`); the node must then be left alone.
    """
    new_taints: list[Taint] = [dict(t) for t in to_add]
    for old in node_taints:
        if not any(match_taint(t, old) for t in new_taints):
            new_taints.append(dict(old))
    added = len(node_taints) != len(new_taints)
    errors: list[str] = []
    deleted = False
    for removal in to_remove:
        before = len(new_taints)
        if _s(removal, "effect"):
            new_taints = [t for t in new_taints if not match_taint(removal, t)]
        else:
            new_taints = [t for t in new_taints if _s(t, "key") != _s(removal, "key")]
        deleted = len(new_taints) != before
        if not deleted:
            errors.append(f"taint {go_quote(taint_to_string(removal))} not found")
    if errors:
        raise ValueError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    if (added and deleted) or overwrite:
        return MODIFIED, new_taints
    return (TAINTED if added else UNTAINTED), new_taints


def update_taints(
    node_name: str,
    node_taints: Sequence[Mapping[str, Any]],
    overwrite: bool,
    to_add: Sequence[Mapping[str, Any]],
    to_remove: Sequence[Mapping[str, Any]],
) -> tuple[str, list[Taint]]:
    """updateTaints: refuse to re-add an existing (key, effect) without --overwrite, then reorganize."""
    if not overwrite:
        existing = taints_already_exist(node_taints, to_add)
        if existing:
            raise ValueError(
                f"node {node_name} already has {existing} taint(s) with same effect(s) "
                "and --overwrite is false"
            )
    return reorganize_taints(node_taints, overwrite, to_add, to_remove)


@dataclass(frozen=True)
class TaintCommand:
    """A parsed and validated `kubectl taint` invocation."""

    resources: list[str]
    to_add: list[Taint]
    to_remove: list[Taint]


def prepare_taint_command(
    args: Sequence[str], *, all_nodes: bool = False, selector: str = ""
) -> TaintCommand:
    """Complete then Validate: split the args, parse the specs, check resource type, conflicts and flags.

    Parse errors carry kubectl's usage suffix, as `kubectl taint` prints them.
    """
    resources, taint_args = split_taint_args(args)
    try:
        to_add, to_remove = parse_taint_spec(taint_args)
    except ValueError as exc:
        raise ValueError(usage_error(str(exc))) from None
    check_resource_type(resources[0])
    check_conflicts(to_add, to_remove)
    validate_taint_flags(resources, all_nodes=all_nodes, selector=selector)
    return TaintCommand(resources, to_add, to_remove)
