"""PodTolerationRestriction configuration file: loading, versions and validation errors."""

from __future__ import annotations

import pytest

from kubetaint.admission.podtolerationrestriction import ConfigError, Configuration, load_configuration

HEADER = "apiVersion: podtolerationrestriction.admission.k8s.io/{version}\nkind: Configuration\n"


def test_no_file_gives_empty_default_and_whitelist() -> None:
    assert load_configuration(None) == Configuration()


@pytest.mark.parametrize("version", [pytest.param("v1alpha1", id="v1alpha1"), pytest.param("v1", id="v1")])
def test_both_versions_load(version: str) -> None:
    content = HEADER.format(version=version) + (
        "default:\n- key: dedicated\n  operator: Equal\n  value: infra\n  effect: NoSchedule\n"
        "whitelist:\n- operator: Exists\n"
    )
    assert load_configuration(content) == Configuration(
        default=[{"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}],
        whitelist=[{"operator": "Exists"}],
    )


def test_json_content_and_case_insensitive_fields_load() -> None:
    content = (
        '{"apiVersion": "podtolerationrestriction.admission.k8s.io/v1", "kind": "Configuration",'
        ' "default": [{"Key": "a", "Operator": "Exists", "TolerationSeconds": 5, "Effect": "NoExecute"}]}'
    )
    config = load_configuration(content)
    assert config.default == [
        {"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}
    ]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param("default:\n- key: a\n  operator: Exists\n  effect: Foo\n",
                     'invalid config: [podtolerationrestriction.default[0].effect: Unsupported value: "Foo": '
                     'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"]',
                     id="an unknown effect is rejected with its field path"),
        pytest.param("whitelist:\n- key: a\n  operator: In\n",
                     'invalid config: [podtolerationrestriction.whitelist[0].operator: Unsupported value: "In": '
                     'supported values: "Equal", "Exists"]',
                     id="an unknown operator in the whitelist is rejected"),
        pytest.param("default:\n- operator: Equal\n  value: x\n",
                     'invalid config: [podtolerationrestriction.default[0].operator: Invalid value: "Equal": '
                     'operator must be Exists when `key` is empty, which means "match all values and all keys"]',
                     id="an empty key needs the Exists operator"),
        pytest.param("default:\n- key: a\n  operator: Exists\n  effect: NoSchedule\n  tolerationSeconds: 5\n"
                     "- key: b\n  operator: Exists\n  value: v\n",
                     "invalid config: [podtolerationrestriction.default[0].effect: Invalid value: \"NoSchedule\": "
                     "effect must be 'NoExecute' when `tolerationSeconds` is set "
                     "podtolerationrestriction.default[1].operator: Invalid value: \"v\": "
                     "value must be empty when `operator` is 'Exists']",
                     id="several errors are printed space-separated in one list"),
        pytest.param("default:\n- key: a/b/c\n  operator: Exists\n",
                     "invalid config: [podtolerationrestriction.default[0].key: Invalid value: \"a/b/c\": "
                     "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start "
                     "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
                     "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
                     "subdomain prefix and '/' (e.g. 'example.com/MyName')]",
                     id="a key with two slashes is not a qualified name"),
    ],
)  # fmt: skip
def test_invalid_tolerations_are_rejected(body: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_configuration(HEADER.format(version="v1alpha1") + body)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("apiVersion: podtolerationrestriction.admission.k8s.io/v2\nkind: Configuration\n",
                     'no kind "Configuration" is registered for version '
                     '"podtolerationrestriction.admission.k8s.io/v2" in scheme',
                     id="an unknown version is rejected"),
        pytest.param("apiVersion: podtolerationrestriction.admission.k8s.io/v1\nkind: Other\n",
                     'no kind "Other" is registered for version "podtolerationrestriction.admission.k8s.io/v1" '
                     "in scheme", id="an unknown kind is rejected"),
        pytest.param("default: []\n", "Object 'apiVersion' and 'kind' are missing in 'default: []'",
                     id="a file without apiVersion and kind is rejected"),
        pytest.param(HEADER.format(version="v1") + "default: {key: a}\n",
                     "json: cannot unmarshal object into Go value of type []v1.Toleration",
                     id="a default that is not a list is rejected"),
    ],
)  # fmt: skip
def test_unreadable_files_are_rejected(content: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_configuration(content)
    assert str(caught.value) == message


def test_yaml_syntax_errors_are_reported_without_a_traceback() -> None:
    with pytest.raises(ConfigError, match="couldn't parse PodTolerationRestriction configuration"):
        load_configuration("apiVersion: [unclosed\n")
