"""`kubectl drain NODE` after the cordon: pick the pods to delete with kubectl's filters, then evict
each through the eviction subresource, retrying refusals (429) every 5 s on the clock until they
succeed or `--timeout` passes (mirrors staging/src/k8s.io/kubectl/pkg/drain/{drain,filters}.go).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubetaint.api.errors import StatusError

if TYPE_CHECKING:
    from kubetaint.sim.kubectl import Kubectl

RETRY_SECONDS = 5.0
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


@dataclass
class DrainOptions:
    ignore_daemonsets: bool = False
    force: bool = False
    delete_emptydir_data: bool = False
    disable_eviction: bool = False
    timeout: float = 0.0  # 0 = wait forever, as kubectl's default


def _controller(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref  # type: ignore[no-any-return]
    return None


def _key(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"


def _terminal(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def pods_for_deletion(
    pods: list[Mapping[str, Any]], options: DrainOptions
) -> tuple[list[Mapping[str, Any]], list[str], list[str]]:
    """getPodsForDeletion: (pods to evict, warnings, errors) after kubectl's filters, in order:
    DaemonSet-managed, mirror, local storage, unreplicated."""
    keep: list[Mapping[str, Any]] = []
    warnings: dict[str, list[str]] = {}
    errors: dict[str, list[str]] = {}
    for pod in pods:
        key = _key(pod)
        controller = _controller(pod)
        if controller is not None and controller.get("kind") == "DaemonSet":
            if options.ignore_daemonsets:
                warnings.setdefault("ignoring DaemonSet-managed Pods", []).append(key)
            else:
                errors.setdefault(
                    "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)", []
                ).append(key)
            continue
        if MIRROR_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {}):
            continue
        has_empty_dir = any("emptyDir" in v for v in (pod.get("spec") or {}).get("volumes") or [])
        if has_empty_dir and not _terminal(pod):
            if not options.delete_emptydir_data:
                errors.setdefault(
                    "cannot delete Pods with local storage (use --delete-emptydir-data to override)", []
                ).append(key)
                continue
            warnings.setdefault("deleting Pods with local storage", []).append(key)
        if controller is None and not _terminal(pod):
            if not options.force:
                errors.setdefault(
                    "cannot delete Pods that declare no controller (use --force to override)", []
                ).append(key)
                continue
            warnings.setdefault("deleting Pods that declare no controller", []).append(key)
        keep.append(pod)
    return (
        keep,
        [f"{text}: {', '.join(keys)}" for text, keys in warnings.items()],
        [f"{text}: {', '.join(keys)}" for text, keys in errors.items()],
    )


class Drain:
    """One node's drain: evictions now, retries on the clock."""

    def __init__(self, kubectl: Kubectl, node: str, options: DrainOptions) -> None:
        self.kubectl = kubectl
        self.node = node
        self.options = options
        self.remaining: list[tuple[str, str]] = []
        self.deadline: float | None = None
        self.output = kubectl.output  # later retries print to the command that started the drain

    def start(self) -> None:
        from kubetaint.sim.kubectl import KubectlError

        pods = self.kubectl.registry.list("pods", field_selector=f"spec.nodeName={self.node}").items
        keep, warnings, errors = pods_for_deletion(list(pods), self.options)
        if errors:
            raise KubectlError(f'unable to drain node "{self.node}" due to error: {", ".join(errors)}')
        for warning in warnings:
            self.output(f"Warning: {warning}")
        self.remaining = [
            (str(p["metadata"].get("namespace") or "default"), str(p["metadata"]["name"])) for p in keep
        ]
        if self.options.timeout > 0:
            self.deadline = self.kubectl.clock.now() + self.options.timeout
        for namespace, name in self.remaining:
            self.output(f"evicting pod {namespace}/{name}")
        self._attempt()

    def _attempt(self) -> None:
        still: list[tuple[str, str]] = []
        for namespace, name in self.remaining:
            try:
                if self.options.disable_eviction:
                    self.kubectl.registry.delete("pods", namespace, name)
                else:
                    self.kubectl.evict(namespace, name)
            except StatusError as err:
                if err.code == 404:
                    continue
                if err.code == 429:
                    self.output(
                        f'error when evicting pods/"{name}" -n "{namespace}" '
                        f"(will retry after 5s): {err.message}"
                    )
                    still.append((namespace, name))
                    continue
                self.output(f'error when evicting pods/"{name}" -n "{namespace}": {err.message}')
                continue
            self.output(f"pod/{name} evicted")
        self.remaining = still
        if not still:
            self.output(f"node/{self.node} drained")
            return
        now = self.kubectl.clock.now()
        if self.deadline is not None and now + RETRY_SECONDS > self.deadline:
            self.output(
                f'error: unable to drain node "{self.node}" due to error: error when evicting pods: '
                f"global timeout reached: {self.options.timeout:g}s"
            )
            return
        self.kubectl.clock.call_later(RETRY_SECONDS, self._attempt)
