"""The container events a kubelet records about a pod it starts and stops (upstream reasons and
messages: pkg/kubelet/events/event.go, pkg/kubelet/images/image_manager.go EnsureImageExists and
pullImage, pkg/kubelet/kuberuntime/kuberuntime_container.go startContainer and killContainer).

Starting a pod, for each init container and then each container (involvedObject.fieldPath
`spec.initContainers{name}` / `spec.containers{name}`):

- `Pulling` `Pulling image "nginx:latest"` then `Pulled` `Successfully pulled image
  "nginx:latest" in 0s (0s including waiting). Image size: 0 bytes.` when the image is pulled
  (pull policy `Always`, or `IfNotPresent` and the node has not pulled it yet: a hollow pull takes
  no time and stores nothing), else `Pulled` `Container image "nginx:1.25" already present on
  machine and can be accessed by the pod` (KubeletEnsureSecretPulledImages, on by default in the
  followed release; pull secrets are not checked: every pulled image is accessible);
- `Created` `Container created`, `Started` `Container started`.

Stopping a running pod (its deletion): `Killing` `Stopping container <name>` per container.
A run-to-completion pod's failed containers waiting to restart (`OnFailure`): `BackOff`
`Back-off restarting failed container <name> in pod <name>_<namespace>(<uid>)` (once per
back-off; upstream repeats it at each pod sync meanwhile), then at their restart the image,
`Created` and `Started` events again.

A hollow node has every image a pull policy of `Never` asks for (no `ErrImageNeverPull`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kubetaint.api.goquote import go_quote

#: pkg/kubelet/events reasons.
PULLING = "Pulling"
PULLED = "Pulled"
CREATED = "Created"
STARTED = "Started"
KILLING = "Killing"
BACK_OFF = "BackOff"


@dataclass(frozen=True, slots=True)
class ContainerEvent:
    """One event about a pod's container: its field path, type, reason and message."""

    field_path: str
    event_type: str
    reason: str
    message: str


def _containers(pod: Mapping[str, Any], field: str) -> list[Mapping[str, Any]]:
    found = (pod.get("spec") or {}).get(field)
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


def _tag_and_digest(image: str) -> tuple[str, str]:
    """parsers.ParseImageName's tag (empty when none) and digest of an image reference."""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    return (last.rsplit(":", 1)[1] if ":" in last else ""), digest


def with_default_tag(image: str) -> str:
    """applyDefaultImageTag: `:latest` appended to a reference with neither tag nor digest."""
    tag, digest = _tag_and_digest(image)
    return image if tag or digest else f"{image}:latest"


def pull_policy(container: Mapping[str, Any]) -> str:
    """The container's imagePullPolicy, defaulted as SetDefaults_Container does (`Always` for
    `:latest` or an untagged image, else `IfNotPresent`)."""
    policy = container.get("imagePullPolicy")
    if isinstance(policy, str) and policy:
        return policy
    tag, digest = _tag_and_digest(str(container.get("image") or ""))
    return "Always" if not digest and tag in ("", "latest") else "IfNotPresent"


def _image_events(path: str, container: Mapping[str, Any], pulled: set[str]) -> Iterator[ContainerEvent]:
    requested = str(container.get("image") or "")
    image = with_default_tag(requested)
    policy = pull_policy(container)
    if policy == "Never" or (policy == "IfNotPresent" and image in pulled):
        message = (
            f"Container image {go_quote(requested)} already present on machine and can be accessed by the pod"
        )
        yield ContainerEvent(path, "Normal", PULLED, message)
        return
    yield ContainerEvent(path, "Normal", PULLING, f"Pulling image {go_quote(image)}")
    pulled.add(image)
    message = (
        f"Successfully pulled image {go_quote(image)} in 0s (0s including waiting). Image size: 0 bytes."
    )
    yield ContainerEvent(path, "Normal", PULLED, message)


def started(pod: Mapping[str, Any], pulled: set[str]) -> list[ContainerEvent]:
    """The events of starting `pod`'s containers on a node that has pulled the images `pulled`
    (which gains those it pulls now)."""
    out: list[ContainerEvent] = []
    for field in ("initContainers", "containers"):
        for container in _containers(pod, field):
            path = f"spec.{field}{{{container.get('name', '')}}}"
            out.extend(_image_events(path, container, pulled))
            out.append(ContainerEvent(path, "Normal", CREATED, "Container created"))
            out.append(ContainerEvent(path, "Normal", STARTED, "Container started"))
    return out


def restarted(pod: Mapping[str, Any], pulled: set[str]) -> list[ContainerEvent]:
    """The events of restarting a pod's failed containers after their back-off (startContainer
    again: the image, Created, Started)."""
    out: list[ContainerEvent] = []
    for container in _containers(pod, "containers"):
        path = f"spec.containers{{{container.get('name', '')}}}"
        out.extend(_image_events(path, container, pulled))
        out.append(ContainerEvent(path, "Normal", CREATED, "Container created"))
        out.append(ContainerEvent(path, "Normal", STARTED, "Container started"))
    return out


def backing_off(pod: Mapping[str, Any]) -> list[ContainerEvent]:
    """The events of a pod whose failed containers wait in CrashLoopBackOff (doBackOff:
    `Back-off restarting failed container c in pod web_default(<uid>)`, format.Pod's rendering)."""
    meta = pod.get("metadata") or {}
    rendered = f"{meta.get('name', '')}_{meta.get('namespace', '')}({meta.get('uid', '')})"
    return [
        ContainerEvent(
            f"spec.containers{{{c.get('name', '')}}}",
            "Warning",
            BACK_OFF,
            f"Back-off restarting failed container {c.get('name', '')} in pod {rendered}",
        )
        for c in _containers(pod, "containers")
    ]


def killed(pod: Mapping[str, Any]) -> list[ContainerEvent]:
    """The events of stopping `pod`'s running containers (killContainer's default message)."""
    return [
        ContainerEvent(
            f"spec.containers{{{c.get('name', '')}}}",
            "Normal",
            KILLING,
            f"Stopping container {c.get('name', '')}",
        )
        for c in _containers(pod, "containers")
    ]
