"""What a `kubetaint.registry.registry.Registry` trusts and under which configuration: the
validator and admission chain in force (`registry.trust.Configuration`), the pods it admitted,
validated and stored (`registry.podtrust`), and the heartbeats on objects it stored
(`registry.heartbeats`). Mixed into the Registry, whose state it reads (the attributes declared
below); in reference mode nothing is trusted."""

from __future__ import annotations

from typing import Any

from kubetaint.admission import AdmissionChain
from kubetaint.registry.heartbeats import HeartbeatTrust
from kubetaint.registry.podtrust import PodTrust, namespace_exists
from kubetaint.registry.trust import Configuration
from kubetaint.registry.validator import Validator
from kubetaint.store.interface import Store

JSON = dict[str, Any]


class TrustKeeping:
    """The Registry's trust bookkeeping (the attributes below are the Registry's)."""

    store: Store
    validator: Validator
    admission: AdmissionChain | None
    _config: Configuration
    _pods: PodTrust
    _heartbeats: HeartbeatTrust
    _reference: bool

    def _configuration(self) -> Configuration:
        """The configuration in force (a new one when the validator, the chain or its plugins
        changed: what was trusted under the old one is void)."""
        config = self._config
        if not config.holds_for(self.validator, self.admission):
            config = self._config = Configuration(self.validator, self.admission)
        return config

    def keeps_spec(
        self,
        key: tuple[str, str],
        obj: JSON,
        old: JSON,
        config: Configuration,
        namespaces: set[str] | None = None,
    ) -> bool:
        """Whether the pod update `obj` of `old` keeps the stored spec of a pod trusted under
        `config` (registry.podtrust), its namespace existing when NamespaceLifecycle is in the
        chain (what that plugin reads). `namespaces`: the namespaces found to exist since the
        last write, which a namespace found now joins (a caller checking updates it stores later)."""
        if not self._pods.keeps_spec(key, obj, old, config):
            return False
        if not config.reads_namespace or (namespaces is not None and key[0] in namespaces):
            return True
        if not namespace_exists(self.store, key[0]):
            return False
        if namespaces is not None:
            namespaces.add(key[0])
        return True

    def _pod_config(self) -> Configuration | None:
        """The configuration pod trust is recorded under, or None when pod updates keeping the
        spec must take the generic path (in reference mode, every time)."""
        config = self._configuration()
        return config if config.keeps_stored_specs and not self._reference else None

    def trust_binding(self, key: tuple[str, str], pod: JSON, stored: JSON, node: str) -> None:
        """`stored` is the store's result of binding the pod `pod` under `key` to `node` (without
        binding annotations): trusted as `pod` was (registry.podtrust)."""
        config = self._pod_config()
        if config is None:
            self._pods.forget(key)
        else:
            self._pods.remember_binding(key, pod, stored, node, config)

    def _remember_pod(self, key: tuple[str, str], stored: JSON) -> None:
        config = self._pod_config()
        if config is None:
            self._pods.forget(key)
        else:
            self._pods.remember(key, stored, config)

    def _trusts_heartbeats(self, resource: str) -> bool:
        """Whether a heartbeat write on an object this registry stored needs no admission nor
        validation (`Configuration.trusts_heartbeats`); never in reference mode."""
        return not self._reference and self._configuration().trusts_heartbeats(resource)

    def _namespace_admits(self, resource: str, namespace: str) -> bool:
        """Whether NamespaceLifecycle, when in the chain, admits an update in `namespace`
        (cluster-scoped objects have none; a namespaced one's namespace must exist)."""
        if not namespace or not self._configuration().reads_namespace:
            return True
        return namespace_exists(self.store, namespace)
