"""The admission chain (mirrors apiserver/pkg/admission/chain.go and plugins.go NewFromPlugins).

Plugins run in upstream order. `admit` runs every mutating plugin's Admit, then every validating
plugin's Validate; a host that runs object validation between the two phases (as kube-apiserver
does) calls `mutate`, validates, then calls `validate`. The first rejection stops the request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.admission.attributes import Attributes
from kubetaint.admission.defaulttolerationseconds import DefaultTolerationSeconds
from kubetaint.admission.extendedresourcetoleration import ExtendedResourceToleration
from kubetaint.admission.lookup import DictLookup, ObjectLookup
from kubetaint.admission.namespacelifecycle import NamespaceLifecycle
from kubetaint.admission.nodetaint import TaintNodesByCondition
from kubetaint.admission.plugin import AdmissionPlugin
from kubetaint.admission.podtolerationrestriction import (
    ConfigError,
    PodTolerationRestriction,
    load_configuration,
)
from kubetaint.admission.priority import Priority
from kubetaint.admission.runtimeclass import RuntimeClass
from kubetaint.admission.settings import (
    ALL_ORDERED_PLUGINS,
    IMPLEMENTED_PLUGINS,
    AdmissionSettings,
    SettingsError,
)


def _build_plugin(name: str, settings: AdmissionSettings) -> AdmissionPlugin:
    if name == "DefaultTolerationSeconds":
        return DefaultTolerationSeconds(
            settings.default_not_ready_toleration_seconds, settings.default_unreachable_toleration_seconds
        )
    if name == "PodTolerationRestriction":
        try:
            config = load_configuration(settings.pod_toleration_restriction_config)
        except ConfigError as error:
            raise SettingsError(f'couldn\'t init admission plugin "{name}": {error}') from None
        return PodTolerationRestriction(config, settings.feature_gates)
    plugins: dict[str, type[AdmissionPlugin]] = {
        "NamespaceLifecycle": NamespaceLifecycle,
        "TaintNodesByCondition": TaintNodesByCondition,
        "Priority": Priority,
        "ExtendedResourceToleration": ExtendedResourceToleration,
        "RuntimeClass": RuntimeClass,
    }
    return plugins[name]()


class AdmissionChain:
    """The enabled kubetaint admission plugins, in upstream order, reading objects through `lookup`."""

    def __init__(self, settings: AdmissionSettings | None = None, lookup: ObjectLookup | None = None) -> None:
        self.settings = settings or AdmissionSettings()
        self.settings.validate()
        self.lookup: ObjectLookup = lookup if lookup is not None else DictLookup()
        self.plugins: list[AdmissionPlugin] = [
            _build_plugin(name, self.settings)
            for name in self.settings.enabled_plugins()
            if name in IMPLEMENTED_PLUGINS
        ]
        self._by_resource: dict[str, list[AdmissionPlugin]] = {}

    def add(self, plugin: AdmissionPlugin) -> None:
        """Enable `plugin` (one the API server configures itself, such as NodeRestriction with
        the Node authorizer) at its place in upstream's order."""
        order = {name: index for index, name in enumerate(ALL_ORDERED_PLUGINS)}
        self.plugins = sorted([*self.plugins, plugin], key=lambda p: order.get(p.name, len(order)))
        self._by_resource = {}

    def _plugins_for(self, resource: str) -> list[AdmissionPlugin]:
        """The plugins that may act on `resource`, in chain order."""
        found = self._by_resource.get(resource)
        if found is None:
            found = self._by_resource[resource] = [
                p for p in self.plugins if p.resources is None or resource in p.resources
            ]
        return found

    def acts_on(self, resource: str) -> bool:
        """Whether some enabled plugin may change or reject a request on `resource`."""
        return bool(self._plugins_for(resource))

    @property
    def plugin_names(self) -> list[str]:
        return [plugin.name for plugin in self.plugins]

    def mutate(self, attrs: Attributes, lookup: ObjectLookup | None = None) -> Mapping[str, Any] | None:
        """Every mutating plugin's Admit, in order; returns the resulting object."""
        store = lookup if lookup is not None else self.lookup
        for plugin in self._plugins_for(attrs.resource):
            if plugin.mutating and plugin.handles(attrs.operation):
                attrs = attrs.with_object(plugin.admit(attrs, store))
        return attrs.object

    def validate(self, attrs: Attributes, lookup: ObjectLookup | None = None) -> None:
        """Every validating plugin's Validate, in order."""
        store = lookup if lookup is not None else self.lookup
        for plugin in self._plugins_for(attrs.resource):
            if plugin.validating and plugin.handles(attrs.operation):
                plugin.validate(attrs, store)

    def admit(self, attrs: Attributes, lookup: ObjectLookup | None = None) -> Mapping[str, Any] | None:
        """Mutate, then validate the result; returns the admitted object or raises AdmissionError."""
        obj = self.mutate(attrs, lookup)
        self.validate(attrs.with_object(obj), lookup)
        return obj
