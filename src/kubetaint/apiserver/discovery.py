"""Discovery documents: /version, aggregated discovery (apidiscovery.k8s.io/v2) and the legacy
APIVersions / APIGroupList / APIGroup / APIResourceList documents (mirrors
apiserver/pkg/endpoints/discovery; shapes from kubernetes/kubernetes api/discovery/*.json).
OpenAPI v3 is in kubetaint.apiserver.openapi.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubetaint.api.version import version_info
from kubetaint.apiserver.resources import ResourceInfo, group_versions, resources_in, subresources
from kubetaint.apiserver.wire import JSON

AGGREGATED_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
AGGREGATED_V2BETA1_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"

#: `GET /version` (kubetaint.api.version). The kubectl dispatcher on the dev machines has no kubectl
#: 1.35: for minor "35" it runs its own kubectl 1.32.4 (docs/version.md, "kubectl skew").
VERSION_INFO: JSON = version_info()


def aggregated_version(accept: str | None) -> str | None:
    """`v2`/`v2beta1` when the client asks for aggregated discovery before plain JSON, else None."""
    for item in (accept or "").split(","):
        parts = [p.strip() for p in item.split(";")]
        params = dict(p.partition("=")[::2] for p in parts[1:])
        if params.get("as") == "APIGroupDiscoveryList" and params.get("g") == "apidiscovery.k8s.io":
            if params.get("v") in ("v2", "v2beta1"):
                return params["v"]
            continue
        if parts[0] in ("application/json", "*/*", "application/*"):
            return None
    return None


def _kind_ref(group: str, version: str, kind: str) -> JSON:
    return {"group": group, "version": version, "kind": kind}


def _aggregated_resource(res: ResourceInfo) -> JSON:
    entry: JSON = {
        "resource": res.plural,
        "responseKind": _kind_ref(res.group, res.version, res.kind),
        "scope": "Namespaced" if res.namespaced else "Cluster",
        "singularResource": res.singular,
        "verbs": sorted(res.verbs),
    }
    if res.short_names:
        entry["shortNames"] = list(res.short_names)
    if res.categories:
        entry["categories"] = list(res.categories)
    if subs := subresources(res):
        entry["subresources"] = [
            {
                "subresource": sub.name,
                "responseKind": _kind_ref(sub.group, sub.version, sub.kind),
                "verbs": list(sub.verbs),
            }
            for sub in subs
        ]
    return entry


def aggregated_list(core: bool, api_version: str = "v2", extra: Sequence[ResourceInfo] = ()) -> JSON:
    """APIGroupDiscoveryList for /api (core only) or /apis (every named group; `extra`: the
    custom resources)."""
    items = []
    for group, versions in group_versions(extra).items():
        if (group == "") != core:
            continue
        items.append(
            {
                "metadata": {"name": group, "creationTimestamp": None},
                "versions": [
                    {
                        "version": version,
                        "resources": [_aggregated_resource(r) for r in resources_in(group, version, extra)],
                        "freshness": "Current",
                    }
                    for version in versions
                ],
            }
        )
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"apidiscovery.k8s.io/{api_version}",
        "metadata": {},
        "items": items,
    }


def api_versions(server_address: str) -> JSON:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def api_group(group: str, extra: Sequence[ResourceInfo] = ()) -> JSON | None:
    versions = group_versions(extra).get(group)
    if not group or not versions:
        return None
    gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": gvs,
        "preferredVersion": gvs[0],
    }


def api_group_list(extra: Sequence[ResourceInfo] = ()) -> JSON:
    groups = []
    for group in group_versions(extra):
        doc = api_group(group, extra)
        if doc is not None:
            doc.pop("kind")
            doc.pop("apiVersion")
            groups.append(doc)
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_resource_list(group: str, version: str, extra: Sequence[ResourceInfo] = ()) -> JSON | None:
    served = resources_in(group, version, extra)
    if not served:
        return None
    entries: list[JSON] = []
    for res in served:
        entry: JSON = {
            "name": res.plural,
            "singularName": res.singular,
            "namespaced": res.namespaced,
            "kind": res.kind,
            "verbs": sorted(res.verbs),
        }
        if res.short_names:
            entry["shortNames"] = list(res.short_names)
        if res.categories:
            entry["categories"] = list(res.categories)
        entries.append(entry)
        for sub in subresources(res):
            sub_entry: JSON = {
                "name": f"{res.plural}/{sub.name}",
                "singularName": "",
                "namespaced": res.namespaced,
                "kind": sub.kind,
                "verbs": list(sub.verbs),
            }
            if sub.group and sub.group != res.group:
                sub_entry["group"] = sub.group
                sub_entry["version"] = sub.version
            entries.append(sub_entry)
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": entries}
