"""PodTolerationRestriction cluster configuration (mirrors plugin/pkg/admission/podtolerationrestriction
config.go, apis/podtolerationrestriction/{v1alpha1,v1}/types.go and validation/validation.go).

The file is a `podtolerationrestriction.admission.k8s.io/v1alpha1` (or `/v1`) `Configuration` with
`default` and `whitelist` toleration lists, validated like pod tolerations (ValidateTolerations);
errors read `invalid config: [<field error> <field error>]` as upstream prints a field.ErrorList.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from kubetaint.admission.podtolerationrestriction.decode import DecodeError, decode_tolerations

JSONDict = dict[str, Any]

GROUP = "podtolerationrestriction.admission.k8s.io"
API_VERSIONS = (f"{GROUP}/v1alpha1", f"{GROUP}/v1")

_QUALIFIED_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED = re.compile(_QUALIFIED_FMT)
_QUALIFIED_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    f"'{_QUALIFIED_FMT}')"
)
_LABEL_VALUE_FMT = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
    f"regex used for validation is '{_LABEL_VALUE_FMT}')"
)
_DNS1123_FMT = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_DNS1123 = re.compile(_DNS1123_FMT)
_DNS1123_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    f"'{_DNS1123_FMT}')"
)
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


class ConfigError(ValueError):
    """The configuration cannot be loaded; the message is what kube-apiserver prints."""


@dataclass(frozen=True)
class Configuration:
    """Cluster-wide default tolerations and whitelist (both empty by default)."""

    default: list[JSONDict] = field(default_factory=list)
    whitelist: list[JSONDict] = field(default_factory=list)


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _qualified_name_errors(value: str) -> list[str]:
    """IsQualifiedName messages."""
    parts = value.split("/")
    errors: list[str] = []
    if len(parts) > 2:
        return [
            f"a qualified name {_QUALIFIED_MSG} with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            if len(prefix) > 253:
                errors.append("prefix part must be no more than 253 characters")
            if not _DNS1123.fullmatch(prefix):
                errors.append("prefix part " + _DNS1123_MSG)
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if not _QUALIFIED.fullmatch(name):
        errors.append("name part " + _QUALIFIED_MSG)
    return errors


def _label_value_errors(value: str) -> list[str]:
    errors = []
    if len(value) > 63:
        errors.append("must be no more than 63 characters")
    if not _LABEL_VALUE.fullmatch(value):
        errors.append(_LABEL_VALUE_MSG)
    return errors


def validate_tolerations(tolerations: Sequence[JSONDict], path: str) -> list[str]:
    """ValidateTolerations, rendered as `<field>: <type>: <value>: <detail>` strings."""
    errors: list[str] = []
    for i, t in enumerate(tolerations):
        at = f"{path}[{i}]"
        key, op, value, effect = (str(t.get(f) or "") for f in ("key", "operator", "value", "effect"))
        if key:
            errors += [f"{at}.key: Invalid value: {_quote(key)}: {m}" for m in _qualified_name_errors(key)]
        if not key and op != "Exists":
            errors.append(
                f"{at}.operator: Invalid value: {_quote(op)}: operator must be Exists when `key` is empty, "
                'which means "match all values and all keys"'
            )
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            errors.append(
                f"{at}.effect: Invalid value: {_quote(effect)}: effect must be 'NoExecute' when "
                "`tolerationSeconds` is set"
            )
        if op in ("Equal", ""):
            messages = _label_value_errors(value)
            if messages:
                errors.append(f"{at}.operator: Invalid value: {_quote(value)}: {'; '.join(messages)}")
        elif op == "Exists":
            if value:
                errors.append(
                    f"{at}.operator: Invalid value: {_quote(value)}: value must be empty when `operator` is "
                    "'Exists'"
                )
        else:
            errors.append(
                f'{at}.operator: Unsupported value: {_quote(op)}: supported values: "Equal", "Exists"'
            )
        if effect and effect not in _EFFECTS:
            supported = ", ".join(_quote(e) for e in _EFFECTS)
            errors.append(f"{at}.effect: Unsupported value: {_quote(effect)}: supported values: {supported}")
    return errors


def load_configuration(content: str | None) -> Configuration:
    """loadConfiguration: parse and validate the plugin's config file content (None = defaults)."""
    if content is None:
        return Configuration()
    try:
        raw = yaml.safe_load(content)
    except yaml.YAMLError as error:
        raise ConfigError(f"couldn't parse PodTolerationRestriction configuration: {error}") from None
    if not isinstance(raw, dict):
        raise ConfigError("couldn't get version/kind; json parse error: the configuration is not an object")
    api_version, kind = raw.get("apiVersion"), raw.get("kind")
    if not api_version or not kind:
        raise ConfigError(f"Object 'apiVersion' and 'kind' are missing in '{content.strip()}'")
    if api_version not in API_VERSIONS or kind != "Configuration":
        raise ConfigError(f'no kind "{kind}" is registered for version "{api_version}" in scheme')
    try:
        config = Configuration(
            default=decode_tolerations(raw.get("default")),
            whitelist=decode_tolerations(raw.get("whitelist")),
        )
    except DecodeError as error:
        raise ConfigError(str(error)) from None
    errors = validate_tolerations(config.default, "podtolerationrestriction.default")
    errors += validate_tolerations(config.whitelist, "podtolerationrestriction.whitelist")
    if errors:
        raise ConfigError(f"invalid config: [{' '.join(errors)}]")
    return config
