"""AdmissionSettings: flag-style validation, camelCase construction and plugin configuration."""

from __future__ import annotations

import pytest

from kubetaint.admission import AdmissionChain, AdmissionSettings, SettingsError

from .builders import lookup, namespace, pod, pod_create, tol


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        pytest.param(AdmissionSettings(enable_admission_plugins=["Foo"]),
                     'enable-admission-plugins plugin "Foo" is unknown', id="an unknown enabled plugin is rejected"),
        pytest.param(AdmissionSettings(disable_admission_plugins=["Bar"]),
                     'disable-admission-plugins plugin "Bar" is unknown', id="an unknown disabled plugin is rejected"),
        pytest.param(AdmissionSettings(enable_admission_plugins=["Priority"], disable_admission_plugins=["Priority"]),
                     "[Priority] in enable-admission-plugins and disable-admission-plugins overlapped",
                     id="a plugin both enabled and disabled is rejected"),
        pytest.param(AdmissionSettings(default_not_ready_toleration_seconds="x"),  # type: ignore[arg-type]
                     "invalid argument 'x' for --default-not-ready-toleration-seconds: must be an integer",
                     id="non-integer toleration seconds are rejected"),
    ],
)  # fmt: skip
def test_invalid_settings(settings: AdmissionSettings, message: str) -> None:
    with pytest.raises(SettingsError) as caught:
        AdmissionChain(settings)
    assert str(caught.value) == message


def test_upstream_plugins_kubetaint_does_not_implement_are_accepted_and_ignored() -> None:
    chain = AdmissionChain(
        AdmissionSettings(enable_admission_plugins=["AlwaysPullImages", "PodNodeSelector"])
    )
    assert chain.plugin_names == [
        "NamespaceLifecycle",
        "TaintNodesByCondition",
        "Priority",
        "DefaultTolerationSeconds",
        "RuntimeClass",
    ]


def test_settings_from_camel_case_keys() -> None:
    settings = AdmissionSettings.from_dict(
        {
            "enableAdmissionPlugins": "PodTolerationRestriction,ExtendedResourceToleration",
            "disableAdmissionPlugins": ["Priority"],
            "defaultNotReadyTolerationSeconds": 60,
            "defaultUnreachableTolerationSeconds": 120,
        }
    )
    chain = AdmissionChain(settings, lookup(namespace()))
    admitted = chain.admit(pod_create(pod()))
    assert admitted is not None
    assert [t.get("tolerationSeconds") for t in admitted["spec"]["tolerations"]] == [60, 120]
    assert "PodTolerationRestriction" in chain.plugin_names and "Priority" not in chain.plugin_names


def test_unknown_setting_keys_are_rejected() -> None:
    with pytest.raises(SettingsError, match="unknown admission setting"):
        AdmissionSettings.from_dict({"defaultNotReadySeconds": 1})


def test_the_pod_toleration_restriction_config_is_used() -> None:
    config = (
        "apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1\nkind: Configuration\n"
        "default:\n- key: team\n  operator: Exists\n  effect: NoSchedule\n"
    )
    chain = AdmissionChain(
        AdmissionSettings(
            enable_admission_plugins=["PodTolerationRestriction"],
            disable_admission_plugins=["DefaultTolerationSeconds"],
            pod_toleration_restriction_config=config,
        ),
        lookup(namespace()),
    )
    admitted = chain.admit(pod_create(pod()))
    assert admitted is not None
    assert admitted["spec"]["tolerations"] == [tol("team", "Exists", effect="NoSchedule")]


def test_an_invalid_pod_toleration_restriction_config_stops_the_chain_being_built() -> None:
    config = (
        "apiVersion: podtolerationrestriction.admission.k8s.io/v1\nkind: Configuration\n"
        "whitelist:\n- key: a\n  operator: Exists\n  effect: Sometimes\n"
    )
    with pytest.raises(SettingsError) as caught:
        AdmissionChain(
            AdmissionSettings(
                enable_admission_plugins=["PodTolerationRestriction"],
                pod_toleration_restriction_config=config,
            )
        )
    assert str(caught.value) == (
        'couldn\'t init admission plugin "PodTolerationRestriction": invalid config: '
        '[podtolerationrestriction.whitelist[0].effect: Unsupported value: "Sometimes": supported values: '
        '"NoSchedule", "PreferNoSchedule", "NoExecute"]'
    )


def test_a_disabled_pod_toleration_restriction_ignores_its_config() -> None:
    AdmissionChain(AdmissionSettings(pod_toleration_restriction_config="not: [valid"))
