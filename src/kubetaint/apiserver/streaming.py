"""The pod subresources a kubelet serves (log, exec, attach, portforward), answered as
kube-apiserver answers them up to the point where it connects to the kubelet
(pkg/registry/core/pod/strategy.go LogLocation, streamLocation, PortForwardLocation): a missing
pod is `pods "x" not found`, a container not in the pod or a missing container name is a 400 with
upstream's message, an unscheduled pod has empty logs and no host to exec into. A pod on a node is
on a hollow node, which has no container runtime: a 400 that says so, never a silent answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from kubetaint.api import errors
from kubetaint.apiserver import query
from kubetaint.store.interface import Store

#: Subresource -> the HTTP methods its REST storage takes (log is a getter, the others connect).
STREAMING_SUBRESOURCES: dict[str, tuple[str, ...]] = {
    "log": ("GET",),
    "exec": ("GET", "POST"),
    "attach": ("GET", "POST"),
    "portforward": ("GET", "POST"),
}
_WHAT = {
    "log": "no logs of container {container}",
    "exec": "cannot exec into container {container}",
    "attach": "cannot attach to container {container}",
    "portforward": "cannot forward ports",
}


def _container_names(pod: Mapping[str, Any]) -> list[str]:
    """podutil.VisitContainers order: init containers, containers, ephemeral containers."""
    spec = pod.get("spec") or {}
    names: list[str] = []
    for key in ("initContainers", "containers", "ephemeralContainers"):
        names.extend(str(c.get("name", "")) for c in spec.get(key) or [] if isinstance(c, Mapping))
    return names


def validate_container(container: str, pod: Mapping[str, Any]) -> str:
    """validateContainer: the container a request means, or a 400 with upstream's message."""
    name = str((pod.get("metadata") or {}).get("name", ""))
    containers = (pod.get("spec") or {}).get("containers") or []
    if not container:
        if len(containers) == 1:
            return str(containers[0].get("name", ""))
        if not containers:
            raise errors.bad_request(f"a container name must be specified for pod {name}")
        choices = "[" + " ".join(_container_names(pod)) + "]"
        raise errors.bad_request(
            f"a container name must be specified for pod {name}, choose one of: {choices}"
        )
    if container not in _container_names(pod):
        raise errors.bad_request(f"container {container} is not valid for pod {name}")
    return container


def answer(store: Store, namespace: str, name: str, subresource: str, request: Request) -> Response:
    """The answer to `pods/<name>/<subresource>` before any kubelet would be reached."""
    if request.method not in STREAMING_SUBRESOURCES[subresource]:
        raise errors.StatusError(
            405, "MethodNotAllowed", "the server does not allow this method on the requested resource"
        )
    pod = store.get("pods", namespace, name)  # 404 pods "x" not found
    container = ""
    if subresource != "portforward":
        container = validate_container(query.of(request).get("container") or "", pod)
    node = str((pod.get("spec") or {}).get("nodeName") or "")
    if not node:
        if subresource == "log":
            return Response(b"", media_type="text/plain")  # LogLocation: no host, an empty stream
        raise errors.bad_request(f"pod {name} does not have a host assigned")
    what = _WHAT[subresource].format(container=f'"{container}"')
    raise errors.bad_request(
        f'pod "{name}" is on hollow node "{node}", which has no container runtime: {what}'
    )
