"""KubeSchedulerConfiguration profiles: defaults, merging and framework construction
(mirrors pkg/scheduler/apis/config/v1/default_plugins.go, defaults.go and runtime.NewFramework).

Upstream default plugins kubetaint does not implement are left out of the default profile (the
DynamicResources plugin); naming them in a profile is rejected.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetaint.api.openapi_schemas import REF, strict_decoding_error, strict_errors
from kubetaint.scheduler.extension_points import EXTENSION_POINTS, INTERFACE_NAMES, implements
from kubetaint.scheduler.framework import Framework
from kubetaint.scheduler.plugins import names
from kubetaint.scheduler.status import MAX_NODE_SCORE, MAX_TOTAL_SCORE

DEFAULT_SCHEDULER_NAME = "default-scheduler"
PluginRef = tuple[str, int]  # (name, weight)
Registry = Mapping[str, Callable[[Mapping[str, Any]], Any]]

#: default_plugins.go MultiPoint, in order, restricted to the plugins kubetaint implements.
DEFAULT_MULTIPOINT: tuple[PluginRef, ...] = (
    (names.SCHEDULING_GATES, 0),
    (names.PRIORITY_SORT, 0),
    (names.NODE_UNSCHEDULABLE, 0),
    (names.NODE_NAME, 0),
    (names.TAINT_TOLERATION, 3),
    (names.NODE_AFFINITY, 2),
    (names.NODE_PORTS, 0),
    (names.NODE_RESOURCES_FIT, 1),
    (names.VOLUME_RESTRICTIONS, 0),
    (names.NODE_VOLUME_LIMITS, 0),
    (names.VOLUME_BINDING, 0),
    (names.VOLUME_ZONE, 0),
    (names.POD_TOPOLOGY_SPREAD, 2),
    (names.INTER_POD_AFFINITY, 2),
    (names.DEFAULT_PREEMPTION, 0),
    (names.NODE_RESOURCES_BALANCED_ALLOCATION, 1),
    (names.IMAGE_LOCALITY, 1),
    (names.DEFAULT_BINDER, 0),
)


class ConfigError(ValueError):
    """A profile upstream would refuse; the message uses upstream's wording."""


@dataclass
class PluginSet:
    enabled: list[PluginRef] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)


@dataclass
class ProfileSpec:
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    percentage_of_nodes_to_score: int | None = None
    points: dict[str, PluginSet] = field(default_factory=dict)
    multi_point: PluginSet = field(default_factory=PluginSet)
    plugin_args: dict[str, Mapping[str, Any]] = field(default_factory=dict)


def _mapping(value: Any, where: str, what: str) -> Mapping[str, Any]:
    """`value` as an object, or a ConfigError naming the field (as decoding would reject it)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: Invalid value: {value!r}: must be a {what} object")
    return value


def _sequence(value: Any, where: str, what: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConfigError(f"{where}: Invalid value: {value!r}: must be a list of {what}")
    return value


def _plugin_set(raw: Any, where: str) -> PluginSet:
    raw = _mapping(raw, where, "PluginSet")
    enabled: list[PluginRef] = []
    for i, raw_item in enumerate(_sequence(raw.get("enabled"), f"{where}.enabled", "Plugin")):
        item = _mapping(raw_item, f"{where}.enabled[{i}]", "Plugin")
        weight = item.get("weight", 0) or 0
        if not isinstance(weight, int) or isinstance(weight, bool):
            raise ConfigError(f"{where}.enabled[{i}].weight: Invalid value: {weight!r}: must be an integer")
        if weight < 0:
            raise ConfigError(f"{where}.enabled[{i}].weight: Invalid value: {weight}: must be non-negative")
        enabled.append((str(item.get("name", "")), weight))
    disabled = [
        str(_mapping(item, f"{where}.disabled[{i}]", "Plugin").get("name", ""))
        for i, item in enumerate(_sequence(raw.get("disabled"), f"{where}.disabled", "Plugin"))
    ]
    return PluginSet(enabled, disabled)


def _merge_multipoint(custom: PluginSet) -> PluginSet:
    """mergePluginSet(defaults, custom): disabled names drop defaults, custom ones override in place."""
    disabled = set(custom.disabled)
    custom_by_name = {name: (name, weight) for name, weight in custom.enabled}
    merged: list[PluginRef] = []
    used: set[str] = set()
    for name, weight in DEFAULT_MULTIPOINT:
        if "*" in disabled or name in disabled:
            continue
        if name in custom_by_name:
            merged.append(custom_by_name[name])
            used.add(name)
        else:
            merged.append((name, weight))
    merged += [ref for ref in custom.enabled if ref[0] not in used]
    return PluginSet(merged, [])


#: kubescheduler.config.k8s.io/v1's fields (staging/src/k8s.io/kube-scheduler/config/v1/types.go):
#: KubeSchedulerConfiguration (DebuggingConfiguration inline), KubeSchedulerProfile, Plugins,
#: PluginSet, Plugin and PluginConfig. kube-scheduler decodes its file strictly
#: (serializer.EnableStrict): any other field is an error.
_CONFIGURATION_FIELDS = frozenset(
    {
        "apiVersion",
        "kind",
        "parallelism",
        "leaderElection",
        "clientConnection",
        "enableProfiling",
        "enableContentionProfiling",
        "percentageOfNodesToScore",
        "podInitialBackoffSeconds",
        "podMaxBackoffSeconds",
        "profiles",
        "extenders",
        "delayCacheUntilActive",
    }
)
_PROFILE_FIELDS = frozenset({"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"})
_PLUGINS_FIELDS = frozenset({"preEnqueue", "queueSort", *EXTENSION_POINTS, "multiPoint"})
_PLUGIN_SET_FIELDS = frozenset({"enabled", "disabled"})
_PLUGIN_FIELDS = frozenset({"name", "weight"})
_PLUGIN_CONFIG_FIELDS = frozenset({"name", "args"})

_ANY: dict[str, Any] = {}
_RESOURCE_SPECS = {"items": {"properties": {"name": _ANY, "weight": _ANY}}}
_SHAPE = {"items": {"properties": {"utilization": _ANY, "score": _ANY}}}


def _args(**fields: Any) -> dict[str, Any]:
    return {"properties": {"apiVersion": _ANY, "kind": _ANY, **fields}}


#: The fields of each in-tree plugin's arguments, kubescheduler.config.k8s.io/v1 `<Plugin>Args`
#: (staging/src/k8s.io/kube-scheduler/config/v1/types_pluginargs.go and types.go); the core
#: types they hold are the API's own schemas.
ARGS_SCHEMAS: dict[str, dict[str, Any]] = {
    names.DEFAULT_PREEMPTION: _args(minCandidateNodesPercentage=_ANY, minCandidateNodesAbsolute=_ANY),
    names.INTER_POD_AFFINITY: _args(hardPodAffinityWeight=_ANY, ignorePreferredTermsOfExistingPods=_ANY),
    names.NODE_RESOURCES_FIT: _args(
        ignoredResources=_ANY,
        ignoredResourceGroups=_ANY,
        scoringStrategy={
            "properties": {
                "type": _ANY,
                "resources": _RESOURCE_SPECS,
                "requestedToCapacityRatio": {"properties": {"shape": _SHAPE}},
            }
        },
    ),
    names.POD_TOPOLOGY_SPREAD: _args(
        defaultConstraints={"items": {"$ref": REF + "io.k8s.api.core.v1.TopologySpreadConstraint"}},
        defaultingType=_ANY,
    ),
    names.NODE_RESOURCES_BALANCED_ALLOCATION: _args(resources=_RESOURCE_SPECS),
    names.VOLUME_BINDING: _args(bindTimeoutSeconds=_ANY, shape=_SHAPE),
    names.NODE_AFFINITY: _args(addedAffinity={"$ref": REF + "io.k8s.api.core.v1.NodeAffinity"}),
    names.DYNAMIC_RESOURCES: _args(filterTimeout=_ANY, bindingTimeout=_ANY),
}


def strict_decoding_errors(config: Mapping[str, Any]) -> list[str]:
    """The strict decoding errors of `config`, in document order: its own unknown fields
    (`unknown field "profiles[0].pluginz"`), then those of each in-tree plugin's arguments, as
    KubeSchedulerConfiguration.DecodeNestedObjects reports them (`decoding
    .profiles[0].pluginConfig[1]: strict decoding error: decoding args for plugin NodeAffinity:
    strict decoding error: unknown field "addedAffinty"`); out-of-tree plugins' arguments are not
    looked at, as upstream skips the kinds its scheme does not register."""
    nested: list[str] = []
    out: list[str] = []

    def check(value: Any, allowed: frozenset[str], where: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            return {}
        out.extend(f'unknown field "{where}{key}"' for key in value if key not in allowed)
        return value

    def items(value: Any) -> list[Any]:
        return value if isinstance(value, list) else []

    top = check(config, _CONFIGURATION_FIELDS, "")
    for i, raw_profile in enumerate(items(top.get("profiles"))):
        profile = check(raw_profile, _PROFILE_FIELDS, f"profiles[{i}].")
        plugins = check(profile.get("plugins"), _PLUGINS_FIELDS, f"profiles[{i}].plugins.")
        for point, raw_set in plugins.items():
            if point not in _PLUGINS_FIELDS:
                continue
            plugin_set = check(raw_set, _PLUGIN_SET_FIELDS, f"profiles[{i}].plugins.{point}.")
            for kind in ("enabled", "disabled"):
                for k, plugin in enumerate(items(plugin_set.get(kind))):
                    check(plugin, _PLUGIN_FIELDS, f"profiles[{i}].plugins.{point}.{kind}[{k}].")
        for j, raw_entry in enumerate(items(profile.get("pluginConfig"))):
            entry = check(raw_entry, _PLUGIN_CONFIG_FIELDS, f"profiles[{i}].pluginConfig[{j}].")
            schema = ARGS_SCHEMAS.get(str(entry.get("name")))
            args = entry.get("args")
            if schema is None or not isinstance(args, Mapping):
                continue
            errors = strict_errors(args, schema)
            if errors:  # (PluginConfig.decodeNestedObjects, then its caller's wrapping)
                in_args = f"decoding args for plugin {entry.get('name')}: {strict_decoding_error(errors)}"
                nested.append(
                    f"decoding .profiles[{i}].pluginConfig[{j}]: {strict_decoding_error([in_args])}"
                )
    return out + nested


#: encoding/json's names of the JSON values that cannot decode into a struct
_JSON_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "bool"),
    (int, "number"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
)


#: the Go type of SimpleMetaFactory.Interpret's findKind, as reflect prints it
_FIND_KIND = (
    'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'
)


def _args_type_error(config: Mapping[str, Any]) -> str | None:
    """The error DecodeNestedObjects returns for the first in-tree plugin's `args` that is not an
    object (`decoding .profiles[0].pluginConfig[1]: decoding args for plugin NodeAffinity:
    couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of
    type struct { ... }`: SimpleMetaFactory.Interpret's error), else None."""
    profiles = config.get("profiles")
    for i, profile in enumerate(profiles if isinstance(profiles, list) else []):
        entries = profile.get("pluginConfig") if isinstance(profile, Mapping) else None
        for j, entry in enumerate(entries if isinstance(entries, list) else []):
            if not isinstance(entry, Mapping) or str(entry.get("name")) not in ARGS_SCHEMAS:
                continue
            args = entry.get("args")
            kind = next((name for cls, name in _JSON_KINDS if isinstance(args, cls)), None)
            if kind is not None:  # (the serializer's meta factory reads the kind first)
                return (
                    f"decoding .profiles[{i}].pluginConfig[{j}]: decoding args for plugin {entry['name']}: "
                    f"couldn't get version/kind; json parse error: json: cannot unmarshal {kind} into Go "
                    f"value of type {_FIND_KIND}"
                )
    return None


def load_profiles(config: Mapping[str, Any] | None = None) -> tuple[list[ProfileSpec], int]:
    """Profiles of a KubeSchedulerConfiguration dict and its global percentageOfNodesToScore."""
    config = _mapping(config, "KubeSchedulerConfiguration", "KubeSchedulerConfiguration")
    wrong_type = _args_type_error(config)
    if wrong_type is not None:  # (a decoding error ends the decoding: strict errors are not reported)
        raise ConfigError(wrong_type)
    unknown = strict_decoding_errors(config)
    if unknown:  # runtime.NewStrictDecodingError
        raise ConfigError(strict_decoding_error(unknown))
    global_pct = _percentage(config.get("percentageOfNodesToScore"), "percentageOfNodesToScore") or 0
    raw_profiles = _sequence(config.get("profiles"), "profiles", "KubeSchedulerProfile") or [{}]
    specs: list[ProfileSpec] = []
    seen: set[str] = set()
    for i, raw_profile in enumerate(raw_profiles):
        where = f"profiles[{i}]"
        raw = _mapping(raw_profile, where, "KubeSchedulerProfile")
        name = raw.get("schedulerName") or DEFAULT_SCHEDULER_NAME
        if name in seen:
            raise ConfigError(f'{where}.schedulerName: Duplicate value: "{name}"')
        seen.add(name)
        plugins = _mapping(raw.get("plugins"), f"{where}.plugins", "Plugins")
        points = {ep: _plugin_set(plugins.get(ep), f"{where}.plugins.{ep}") for ep in EXTENSION_POINTS}
        multi = _merge_multipoint(_plugin_set(plugins.get("multiPoint"), f"{where}.plugins.multiPoint"))
        args: dict[str, Mapping[str, Any]] = {}
        for j, raw_entry in enumerate(
            _sequence(raw.get("pluginConfig"), f"{where}.pluginConfig", "PluginConfig")
        ):
            entry = _mapping(raw_entry, f"{where}.pluginConfig[{j}]", "PluginConfig")
            plugin = str(entry.get("name", ""))
            if plugin in args:
                raise ConfigError(f"repeated config for plugin {plugin}")
            args[plugin] = entry.get("args") or {}
        pct = _percentage(raw.get("percentageOfNodesToScore"), f"{where}.percentageOfNodesToScore")
        specs.append(ProfileSpec(name, pct, points, multi, args))
    return specs, global_pct


def _percentage(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 100:
        raise ConfigError(f"{where}: Invalid value: {value!r}: not in valid range [0-100]")
    return value


def build_framework(spec: ProfileSpec, registry: Registry) -> Framework:
    """NewFramework: instantiate needed plugins, fill extension points, expand MultiPoint, weights."""
    needed = {name for ps in spec.points.values() for name, _ in ps.enabled}
    needed |= {name for name, _ in spec.multi_point.enabled}
    plugins: dict[str, Any] = {}
    for name in sorted(needed):
        factory = registry.get(name)
        if factory is None:
            continue
        try:
            plugins[name] = factory(spec.plugin_args.get(name) or {})
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            # (an argument of the wrong JSON type: one error line, never a traceback)
            raise ConfigError(f'initializing plugin "{name}": {exc}') from None
    points: dict[str, list[Any]] = {}
    for ep in EXTENSION_POINTS:
        pset = spec.points[ep]
        listed: list[str] = []
        for name, _ in pset.enabled:
            if name not in plugins or not implements(plugins[name], ep):
                raise ConfigError(f'{INTERFACE_NAMES[ep]} "{name}" does not exist')
            listed.append(name)
        points[ep] = [plugins[n] for n in _expand(ep, listed, pset.disabled, spec.multi_point, plugins)]
    if len(points["queueSort"]) != 1:
        raise ConfigError(
            f"only one queue sort plugin required for profile with scheduler name "
            f'"{spec.scheduler_name}", but got {len(points["queueSort"])}'
        )
    if not points["bind"]:
        raise ConfigError(
            f'at least one bind plugin is needed for profile with scheduler name "{spec.scheduler_name}"'
        )
    weights = _score_weights(spec, plugins)
    return Framework(spec.scheduler_name, points, weights, spec.percentage_of_nodes_to_score, plugins)


def _expand(
    ep: str, listed: list[str], disabled: list[str], multi: PluginSet, plugins: dict[str, Any]
) -> list[str]:
    """expandMultiPointPlugins: overrides first, then MultiPoint ones, then the rest of the point's list."""
    if "*" in disabled:
        return listed
    overrides: list[str] = []
    from_multi: list[str] = []
    for name, _ in multi.enabled:
        plugin = plugins.get(name)
        if plugin is None:
            raise ConfigError(f'{INTERFACE_NAMES["preFilter"]} "{name}" does not exist')
        if not implements(plugin, ep) or name in disabled:
            continue
        if name in listed:
            overrides.append(name)
            continue
        if name in from_multi:
            raise ConfigError(f'plugin "{name}" already registered as "{INTERFACE_NAMES[ep]}"')
        from_multi.append(name)
    first = [n for n in listed if n in overrides]
    rest = [n for n in listed if n not in overrides]
    return first + from_multi + rest


def _score_weights(spec: ProfileSpec, plugins: dict[str, Any]) -> dict[str, int]:
    weights: dict[str, int] = {}
    total = 0
    for name, weight in spec.points["score"].enabled + spec.multi_point.enabled:
        if not implements(plugins[name], "score") or name in weights:
            continue
        weights[name] = weight or 1  # a weight of zero means the default, 1
        if weights[name] * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
            raise ConfigError("total score of Score plugins could overflow")
        total += weights[name] * MAX_NODE_SCORE
    return weights
