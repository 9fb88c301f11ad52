"""Which admission plugins run and how they are configured (mirrors kube-apiserver's
--enable-admission-plugins / --disable-admission-plugins, --default-not-ready-toleration-seconds,
--default-unreachable-toleration-seconds and the PodTolerationRestriction config file;
pkg/kubeapiserver/options/plugins.go for names, order and the default-on set).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubetaint.api.features import FeatureGates

#: Every upstream plugin name, in upstream's execution order (AllOrderedPlugins). kubetaint
#: implements the ones in IMPLEMENTED_PLUGINS and accepts (and ignores) the others, so flags copied
#: from a real cluster work.
ALL_ORDERED_PLUGINS: tuple[str, ...] = (
    "AlwaysAdmit",
    "NamespaceAutoProvision",
    "NamespaceLifecycle",
    "NamespaceExists",
    "LimitPodHardAntiAffinityTopology",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodNodeSelector",
    "Priority",
    "DefaultTolerationSeconds",
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "PodTopologyLabels",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "AlwaysDeny",
)

IMPLEMENTED_PLUGINS: frozenset[str] = frozenset(
    {
        "NamespaceLifecycle",
        "TaintNodesByCondition",
        "Priority",
        "DefaultTolerationSeconds",
        "PodTolerationRestriction",
        "ExtendedResourceToleration",
        "RuntimeClass",
    }
)

#: Plugins upstream keeps off unless enabled (DefaultOffAdmissionPlugins complement).
DEFAULT_ON_PLUGINS: frozenset[str] = frozenset(
    {
        "NamespaceLifecycle",
        "LimitRanger",
        "ServiceAccount",
        "TaintNodesByCondition",
        "PodSecurity",
        "Priority",
        "DefaultTolerationSeconds",
        "DefaultStorageClass",
        "StorageObjectInUseProtection",
        "PersistentVolumeClaimResize",
        "RuntimeClass",
        "CertificateApproval",
        "CertificateSigning",
        "ClusterTrustBundleAttest",
        "CertificateSubjectRestriction",
        "DefaultIngressClass",
        "PodTopologyLabels",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionWebhook",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionWebhook",
        "ResourceQuota",
    }
)

_CAMEL_FIELDS = {
    "enableAdmissionPlugins": "enable_admission_plugins",
    "disableAdmissionPlugins": "disable_admission_plugins",
    "defaultNotReadyTolerationSeconds": "default_not_ready_toleration_seconds",
    "defaultUnreachableTolerationSeconds": "default_unreachable_toleration_seconds",
    "podTolerationRestrictionConfig": "pod_toleration_restriction_config",
    "featureGates": "feature_gates",
}


class SettingsError(ValueError):
    """Invalid admission settings; the message is kube-apiserver's flag error."""


@dataclass(frozen=True)
class AdmissionSettings:
    """Admission configuration. `pod_toleration_restriction_config` is the content of the
    PodTolerationRestriction configuration file (YAML or JSON), None for the empty default."""

    enable_admission_plugins: Sequence[str] = ()
    disable_admission_plugins: Sequence[str] = ()
    default_not_ready_toleration_seconds: int = 300
    default_unreachable_toleration_seconds: int = 300
    pod_toleration_restriction_config: str | None = None
    feature_gates: FeatureGates | None = field(default=None)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> AdmissionSettings:
        """Settings from camelCase keys (enableAdmissionPlugins, defaultNotReadyTolerationSeconds, ...)."""
        unknown = sorted(set(raw) - set(_CAMEL_FIELDS))
        if unknown:
            raise SettingsError(f"unknown admission setting(s): {', '.join(unknown)}")
        values = {_CAMEL_FIELDS[k]: v for k, v in raw.items()}
        for name in ("enable_admission_plugins", "disable_admission_plugins"):
            if isinstance(values.get(name), str):
                values[name] = [p for p in values[name].split(",") if p]
        return cls(**values)

    def validate(self) -> None:
        """AdmissionOptions.Validate: unknown names and overlapping enable/disable lists."""
        errors = [
            f'{flag}-admission-plugins plugin "{name}" is unknown'
            for flag, names in (
                ("enable", self.enable_admission_plugins),
                ("disable", self.disable_admission_plugins),
            )
            for name in names
            if name not in ALL_ORDERED_PLUGINS
        ]
        overlap = sorted(set(self.enable_admission_plugins) & set(self.disable_admission_plugins))
        if overlap:
            errors.append(
                f"[{' '.join(overlap)}] in enable-admission-plugins and disable-admission-plugins overlapped"
            )
        for name, seconds in (
            ("default-not-ready-toleration-seconds", self.default_not_ready_toleration_seconds),
            ("default-unreachable-toleration-seconds", self.default_unreachable_toleration_seconds),
        ):
            if isinstance(seconds, bool) or not isinstance(seconds, int):
                errors.append(f"invalid argument {seconds!r} for --{name}: must be an integer")
        if errors:
            raise SettingsError("; ".join(errors))

    def enabled_plugins(self) -> list[str]:
        """Enabled upstream plugin names in execution order (default-on ∪ enabled − disabled)."""
        enabled = (DEFAULT_ON_PLUGINS | set(self.enable_admission_plugins)) - set(
            self.disable_admission_plugins
        )
        return [name for name in ALL_ORDERED_PLUGINS if name in enabled]
