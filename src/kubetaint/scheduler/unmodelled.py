"""What kubetaint's scheduler does not model, as warnings: pod fields that upstream's scheduler reads
and kubetaint does not, KubeSchedulerConfiguration settings it does not apply, and plugin arguments
no plugin reads. Nothing here changes a decision; each warning names the field and what is not
judged, so `explain`, `simulate`, `whatif` and the live scheduler's events can say so.

docs/differences-from-upstream.md lists every such difference.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api.jsonview import as_list as _items
from kubetaint.api.jsonview import as_mapping as _mapping

#: In-tree volume sources that upstream's NodeVolumeLimits counts against a CSI driver's attach
#: limit through CSI migration (csi-translation-lib), which kubetaint does not model.
_MIGRATED_SOURCES = (
    "awsElasticBlockStore",
    "gcePersistentDisk",
    "azureDisk",
    "azureFile",
    "cinder",
    "vsphereVolume",
    "portworxVolume",
)

#: KubeSchedulerConfiguration fields the scheduler reads.
_CONFIG_FIELDS = frozenset({"apiVersion", "kind", "profiles", "percentageOfNodesToScore"})
#: KubeSchedulerConfiguration fields of the process (not of scheduling decisions): accepted silently.
_PROCESS_FIELDS = frozenset(
    {
        "clientConnection",
        "leaderElection",
        "enableProfiling",
        "enableContentionProfiling",
        "delayCacheUntilActive",
    }
)
#: The arguments each plugin reads (apiVersion and kind of an args object are its type).
PLUGIN_ARGS: dict[str, frozenset[str]] = {
    "NodeResourcesFit": frozenset({"scoringStrategy", "ignoredResources", "ignoredResourceGroups"}),
    "NodeResourcesBalancedAllocation": frozenset({"resources"}),
    "NodeAffinity": frozenset({"addedAffinity"}),
    "DefaultPreemption": frozenset({"minCandidateNodesPercentage", "minCandidateNodesAbsolute"}),
    "InterPodAffinity": frozenset({"hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"}),
    # (VolumeBinding's bindTimeoutSeconds and shape are not read: no binding is waited for and
    # StorageCapacityScoring is off)
    "PodTopologySpread": frozenset({"defaultConstraints", "defaultingType"}),
}
_ARGS_TYPE = frozenset({"apiVersion", "kind"})


def pod_warnings(pod: Mapping[str, Any]) -> list[str]:
    """The pod's fields that upstream's scheduler reads and kubetaint's does not, as
    `<field>: <what is not judged>` (empty for the usual pod)."""
    spec = _mapping(pod.get("spec"))
    volumes = spec.get("volumes")
    claims = spec.get("resourceClaims")
    owners = _mapping(pod.get("metadata")).get("ownerReferences")
    if not volumes and not claims and "resources" not in spec and not owners:
        return []
    out: list[str] = []
    for i, raw in enumerate(_items(owners)):
        ref = _mapping(raw)
        if ref.get("controller"):
            if ref.get("apiVersion") == "v1" and ref.get("kind") == "ReplicationController":
                out.append(
                    f"metadata.ownerReferences[{i}]: ReplicationControllers are not served: the "
                    "controller's selector is not merged into PodTopologySpread's default constraints"
                )
            break
    for i, raw in enumerate(_items(volumes)):
        volume = _mapping(raw)
        if "ephemeral" in volume:
            out.append(
                f"spec.volumes[{i}].ephemeral: not modelled (ephemeral volume controller): the claim "
                f"{_mapping(pod.get('metadata')).get('name') or ''}-{volume.get('name') or ''} is not "
                "created for the pod; VolumeBinding waits for it"
            )
            continue
        for source in _MIGRATED_SOURCES:
            if source in volume:
                out.append(
                    f"spec.volumes[{i}].{source}: not modelled (CSI migration): NodeVolumeLimits does "
                    "not count the volume against its CSI driver's attach limit"
                )
                break
    if claims:
        out.append("spec.resourceClaims: not modelled (DynamicResources): device allocation is not judged")
    if "resources" in spec:
        out.append("spec.resources: pod-level resources are not modelled: the containers' requests are used")
    return out


def config_warnings(config: Mapping[str, Any] | None, known_plugins: frozenset[str]) -> list[str]:
    """The KubeSchedulerConfiguration's settings kubetaint does not apply: top-level fields it
    does not read, arguments of plugins it does not implement and arguments no plugin reads
    (`known_plugins`: the plugins kubetaint implements). Fields v1 does not have are an error
    before this (`config.strict_decoding_errors`)."""
    if not isinstance(config, Mapping):
        return []
    out: list[str] = []
    for key in config:
        if key not in _CONFIG_FIELDS and key not in _PROCESS_FIELDS:
            out.append(f"{key}: not modelled: kubetaint's scheduler does not apply this setting")
    for i, raw_profile in enumerate(_items(config.get("profiles"))):
        profile = _mapping(raw_profile)  # (its fields are v1's: config.strict_decoding_errors)
        for j, raw_entry in enumerate(_items(profile.get("pluginConfig"))):
            entry = _mapping(raw_entry)
            name = str(entry.get("name", ""))
            where = f"profiles[{i}].pluginConfig[{j}]"
            if name not in known_plugins:
                out.append(f"{where}: plugin {name} is not implemented: its arguments are not applied")
                continue
            read = PLUGIN_ARGS.get(name, frozenset())
            for key in _mapping(entry.get("args")):
                if key not in read and key not in _ARGS_TYPE:
                    out.append(f"{where}.args.{key}: not modelled: {name} does not read this argument")
    return out
