"""The configuration a registry's verdicts hold under: its validator, its admission chain and the
chain's plugins. What the registry remembers having admitted and validated (registry.podtrust,
registry.heartbeats) is keyed by (resource, key, resourceVersion) and recorded under one
`Configuration`; a verdict recorded under another (a plugin added or removed, another validator)
is void. So adding an admission plugin needs no audit of those modules: a plugin they do not
know makes them trust nothing (`Configuration.keeps_stored_specs`, `trusts_heartbeats`).

In reference mode (`kubetaint.speed.reference`) the registry trusts nothing.
"""

from __future__ import annotations

from kubetaint.admission import UPDATE, AdmissionChain
from kubetaint.admission.namespacelifecycle import checks_namespace
from kubetaint.admission.plugin import AdmissionPlugin
from kubetaint.registry.heartbeats import HEARTBEAT_FIELDS
from kubetaint.registry.podtrust import chain_keeps_stored_specs
from kubetaint.registry.validator import APIValidator, Validator


class Configuration:
    """One validator, admission chain and plugin list, with the answers trust asks of them (found
    once per configuration)."""

    __slots__ = ("_heartbeats", "admission", "keeps_stored_specs", "plugins", "reads_namespace", "validator")

    def __init__(self, validator: Validator | None, admission: AdmissionChain | None) -> None:
        self.validator = validator
        self.admission = admission
        self.plugins: tuple[AdmissionPlugin, ...] = tuple(admission.plugins) if admission is not None else ()
        #: whether pod updates keeping the stored spec of a pod admitted under this configuration
        #: are admitted as they are (registry.podtrust); False when validation is not the API's
        self.keeps_stored_specs = type(validator) is APIValidator and chain_keeps_stored_specs(self.plugins)
        #: whether the chain holds NamespaceLifecycle: a trusted update is one whose namespace
        #: exists (the one thing that plugin reads; registry.podtrust.namespace_exists)
        self.reads_namespace = any(checks_namespace(plugin) for plugin in self.plugins)
        self._heartbeats: dict[str, bool] = {}

    def holds_for(self, validator: Validator | None, admission: AdmissionChain | None) -> bool:
        """Whether this is the configuration of `validator` and `admission` as they are now."""
        if validator is not self.validator or admission is not self.admission:
            return False
        return admission is None or tuple(admission.plugins) == self.plugins

    def trusts_heartbeats(self, resource: str) -> bool:
        """Whether a heartbeat write's admission and validation are known to pass when the object
        it changes passed them: no admission plugin acts on updates of `resource` and validation
        is kube-apiserver's (which never reads the heartbeat field: registry.heartbeats)."""
        known = self._heartbeats.get(resource)
        if known is None:
            known = self._heartbeats[resource] = self._find_heartbeat_trust(resource)
        return known

    def _find_heartbeat_trust(self, resource: str) -> bool:
        if resource not in HEARTBEAT_FIELDS:
            return False
        if self.validator is not None and type(self.validator) is not APIValidator:
            return False
        return not any(
            (plugin.resources is None or resource in plugin.resources)
            and not plugin.users_only  # trust covers the control plane's own writes only
            and plugin.handles(UPDATE)
            and not checks_namespace(plugin)  # the registry reads what it reads (reads_namespace)
            for plugin in self.plugins
        )
