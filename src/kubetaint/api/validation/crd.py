"""ValidateCustomResourceDefinition and ValidateCustomResourceDefinitionUpdate for
apiextensions.k8s.io/v1 (mirrors k8s.io/apiextensions-apiserver
pkg/apis/apiextensions/validation/validation.go and the structural-schema checks of
pkg/apiserver/schema/validation.go), and the object-meta checks of custom resources.

Checked: the name (`<plural>.<group>`), the group, the scope, the versions (names, exactly one
storage version, unique names), the names (plural, singular, kind, listKind, short names,
categories), each version's schema (required and structural: types, `items` of arrays,
`properties` and `additionalProperties` exclusive, the root's type and metadata, preserve-unknown
and int-or-string extensions, patterns that compile), subresources' scale paths, printer columns,
and status.storedVersions; on update, group and plural are immutable and, once established,
scope and kind. A versions list printed as a bad value is shortened (upstream prints the Go
struct with its memory addresses).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubetaint.api import gopattern
from kubetaint.api.goquote import go_quote
from kubetaint.api.validation import field as f
from kubetaint.api.validation.metaupdate import validate_metadata
from kubetaint.api.validation.names import is_dns1035_label, is_dns1123_subdomain, name_is_dns_subdomain

Obj = Mapping[str, Any]
SCOPES = ("Cluster", "Namespaced")
PRINTER_COLUMN_TYPES = ("boolean", "date", "integer", "number", "string")
PRINTER_COLUMN_FORMATS = ("byte", "date", "date-time", "double", "float", "int32", "int64", "password")
OPENAPI_TYPES = ("array", "boolean", "integer", "number", "object", "string")


def _m(obj: Any, name: str) -> Obj:
    value = obj.get(name) if isinstance(obj, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def _l(obj: Any, name: str) -> list[Any]:
    value = obj.get(name) if isinstance(obj, Mapping) else None
    return value if isinstance(value, list) else []


def _s(obj: Obj, name: str) -> str:
    value = obj.get(name)
    return value if isinstance(value, str) else ""


def _version_text(version: Any) -> str:
    v = version if isinstance(version, Mapping) else {}
    served = "true" if v.get("served") is True else "false"
    storage = "true" if v.get("storage") is True else "false"
    return (
        "apiextensions.CustomResourceDefinitionVersion{"
        f"Name:{go_quote(_s(v, 'name'))}, Served:{served}, Storage:{storage}, ...}}"
    )


def versions_value(versions: list[Any]) -> f.GoValue:
    """spec.versions as a bad value (shortened: names, served and storage)."""
    if not versions:
        return f.GoValue(versions, "[]apiextensions.CustomResourceDefinitionVersion(nil)")
    parts = ", ".join(_version_text(v) for v in versions)
    return f.GoValue(versions, "[]apiextensions.CustomResourceDefinitionVersion{" + parts + "}")


def version_value(version: Any) -> f.GoValue:
    """One version as a bad value (shortened as versions_value)."""
    return f.GoValue(version, _version_text(version))


def validate_crd(obj: Obj, old: Obj | None, allow_comparison: bool = False) -> list[f.FieldError]:
    """ValidateCustomResourceDefinition (create) or ValidateCustomResourceDefinitionUpdate."""
    spec = _m(obj, "spec")
    names = _m(spec, "names")
    required_name = f"{_s(names, 'plural')}.{_s(spec, 'group')}"

    def name_fn(name: str, prefix: bool = False) -> list[str]:
        found = name_is_dns_subdomain(name, prefix)
        if name != required_name:
            found = [*found, 'must be spec.names.plural+"."+spec.group']
        return found

    errs = validate_metadata(obj, old, namespaced=False, name_fn=name_fn)
    errs.extend(_spec_errors(spec))
    if old is not None:
        errs.extend(_update_errors(spec, _m(old, "spec"), _established(old)))
    errs.extend(_names_errors(_m(_m(obj, "status"), "acceptedNames"), "status.acceptedNames"))
    errs.extend(_stored_versions_errors(_l(_m(obj, "status"), "storedVersions"), _l(spec, "versions")))
    return errs


def _established(crd: Obj) -> bool:
    for cond in _l(_m(crd, "status"), "conditions"):
        if isinstance(cond, Mapping) and cond.get("type") == "Established":
            return cond.get("status") == "True"
    return False


def _update_errors(spec: Obj, old: Obj, established: bool) -> list[f.FieldError]:
    errs = []
    pairs = [("spec.group", spec.get("group"), old.get("group"))]
    names, old_names = _m(spec, "names"), _m(old, "names")
    if established:
        pairs = [
            ("spec.scope", spec.get("scope"), old.get("scope")),
            ("spec.names.kind", names.get("kind"), old_names.get("kind")),
            *pairs,
        ]
    pairs.append(("spec.names.plural", names.get("plural"), old_names.get("plural")))
    for path, new, was in pairs:
        if new != was:
            errs.append(f.invalid(path, new if new is not None else "", "field is immutable"))
    return errs


def _spec_errors(spec: Obj) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    group = _s(spec, "group")
    if not group:
        errs.append(f.required("spec.group"))
    elif found := is_dns1123_subdomain(group):
        errs.append(f.invalid("spec.group", group, ",".join(found)))
    elif len(group.split(".")) < 2:
        errs.append(f.invalid("spec.group", group, "should be a domain with at least one dot"))
    scope = _s(spec, "scope")
    if not scope:
        errs.append(f.required("spec.scope"))
    elif scope not in SCOPES:
        errs.append(f.not_supported("spec.scope", scope, SCOPES))
    versions = _l(spec, "versions")
    for i, item in enumerate(versions):
        version = item if isinstance(item, Mapping) else {}
        path = f"spec.versions[{i}]"
        schema = _m(version, "schema").get("openAPIV3Schema")
        if not isinstance(schema, Mapping):
            errs.append(f.required(f"{path}.schema.openAPIV3Schema", "schemas are required"))
    storage = 0
    seen: set[str] = set()
    unique = True
    for i, item in enumerate(versions):
        version = item if isinstance(item, Mapping) else {}
        if version.get("storage") is True:
            storage += 1
        name = _s(version, "name")
        if name in seen:
            unique = False
        seen.add(name)
        if found := is_dns1035_label(name):
            errs.append(f.invalid(f"spec.versions[{i}].name", name, ",".join(found)))
        errs.extend(_version_errors(version, f"spec.versions[{i}]"))
    if not unique:
        errs.append(f.invalid("spec.versions", versions_value(versions), "must contain unique version names"))
    if storage != 1:
        errs.append(
            f.invalid(
                "spec.versions",
                versions_value(versions),
                "must have exactly one version marked as storage version",
            )
        )
    names = _m(spec, "names")
    for key in ("plural", "singular", "kind", "listKind"):
        if not _s(names, key):
            errs.append(f.required(f"spec.names.{key}"))
    errs.extend(_names_errors(names, "spec.names"))
    conversion = _m(spec, "conversion")
    strategy = _s(conversion, "strategy")
    if strategy and strategy not in ("None", "Webhook"):
        errs.append(f.not_supported("spec.conversion.strategy", strategy, ["None", "Webhook"]))
    if strategy == "Webhook" and not isinstance(conversion.get("webhook"), Mapping):
        errs.append(f.required("spec.conversion.webhook", "required when strategy is set to Webhook"))
    if spec.get("preserveUnknownFields") is True:
        errs.append(
            f.invalid(
                "spec.preserveUnknownFields",
                True,
                "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in "
                "spec.versions[*].schema instead",
            )
        )
    return errs


def _version_errors(version: Obj, path: str) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    schema = _m(version, "schema").get("openAPIV3Schema")
    subresources = _m(version, "subresources")
    if isinstance(schema, Mapping):
        schema_path = f"{path}.schema.openAPIV3Schema"
        errs.extend(_schema_errors(schema, schema_path))
        structural = structural_errors(schema, schema_path)
        errs.extend(structural)
    scale = subresources.get("scale")
    if isinstance(scale, Mapping):
        errs.extend(_scale_errors(scale, f"{path}.subresources.scale"))
    for i, column in enumerate(_l(version, "additionalPrinterColumns")):
        errs.extend(
            _column_errors(
                column if isinstance(column, Mapping) else {}, f"{path}.additionalPrinterColumns[{i}]"
            )
        )
    return errs


def _names_errors(names: Obj, path: str) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    for key in ("plural", "singular"):
        value = _s(names, key)
        if value and (found := is_dns1035_label(value)):
            errs.append(f.invalid(f"{path}.{key}", value, ",".join(found)))
    for key in ("kind", "listKind"):
        value = _s(names, key)
        if value and (found := is_dns1035_label(value.lower())):
            errs.append(
                f.invalid(
                    f"{path}.{key}",
                    value,
                    "may have mixed case, but should otherwise match: " + ",".join(found),
                )
            )
    for i, short in enumerate(_l(names, "shortNames")):
        text = short if isinstance(short, str) else ""
        if found := is_dns1035_label(text):
            errs.append(f.invalid(f"{path}.shortNames[{i}]", text, ",".join(found)))
    kind = _s(names, "kind")
    if kind and kind == _s(names, "listKind"):
        errs.append(f.invalid(f"{path}.listKind", kind, "kind and listKind may not be the same"))
    for i, category in enumerate(_l(names, "categories")):
        text = category if isinstance(category, str) else ""
        if found := is_dns1035_label(text):
            errs.append(f.invalid(f"{path}.categories[{i}]", text, ",".join(found)))
    return errs


def _stored_versions_errors(stored: list[Any], versions: list[Any]) -> list[f.FieldError]:
    path = "status.storedVersions"
    if not stored:
        return [f.invalid(path, f.GoValue(stored, "[]string(nil)"), "must have at least one stored version")]
    errs: list[f.FieldError] = []
    index = {str(v): i for i, v in enumerate(stored)}
    for item in versions:
        version = item if isinstance(item, Mapping) else {}
        name = _s(version, "name")
        if version.get("storage") is True and name not in index:
            errs.append(f.invalid(path, version_value(version), f"must have the storage version {name}"))
        index.pop(name, None)
    for name, i in index.items():
        errs.append(f.invalid(f"{path}[{i}]", name, "must appear in spec.versions"))
    return errs


def _scale_errors(scale: Obj, path: str) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    spec_path = _s(scale, "specReplicasPath")
    if not spec_path:
        errs.append(f.required(f"{path}.specReplicasPath", ""))
    elif not spec_path.startswith(".spec."):
        errs.append(f.invalid(f"{path}.specReplicasPath", spec_path, "should be a json path under .spec"))
    status_path = _s(scale, "statusReplicasPath")
    if not status_path:
        errs.append(f.required(f"{path}.statusReplicasPath", ""))
    elif not status_path.startswith(".status."):
        errs.append(
            f.invalid(f"{path}.statusReplicasPath", status_path, "should be a json path under .status")
        )
    selector = _s(scale, "labelSelectorPath")
    if selector and not (selector.startswith(".spec.") or selector.startswith(".status.")):
        errs.append(
            f.invalid(
                f"{path}.labelSelectorPath", selector, "should be a json path under either .spec or .status"
            )
        )
    return errs


def _column_errors(column: Obj, path: str) -> list[f.FieldError]:
    errs: list[f.FieldError] = []
    if not _s(column, "name"):
        errs.append(f.required(f"{path}.name"))
    kind = _s(column, "type")
    types = ",".join(PRINTER_COLUMN_TYPES)
    if not kind:
        errs.append(f.required(f"{path}.type", f"must be one of {types}"))
    elif kind not in PRINTER_COLUMN_TYPES:
        errs.append(f.invalid(f"{path}.type", kind, f"must be one of {types}"))
    fmt = _s(column, "format")
    if fmt and fmt not in PRINTER_COLUMN_FORMATS:
        errs.append(f.invalid(f"{path}.format", fmt, "must be one of " + ",".join(PRINTER_COLUMN_FORMATS)))
    json_path = _s(column, "jsonPath")
    if not json_path:
        errs.append(f.required(f"{path}.jsonPath"))
    elif not json_path.startswith("."):
        errs.append(f.invalid(f"{path}.jsonPath", json_path, "must be a simple json path starting with ."))
    return errs


def _schema_errors(schema: Obj, path: str) -> list[f.FieldError]:
    """ValidateCustomResourceDefinitionOpenAPISchema's checks that users meet most."""
    errs: list[f.FieldError] = []
    kind = schema.get("type")
    if isinstance(kind, str) and kind and kind not in OPENAPI_TYPES:
        errs.append(f.not_supported(f"{path}.type", kind, OPENAPI_TYPES))
    if schema.get("uniqueItems") is True:
        errs.append(
            f.forbidden(
                f"{path}.uniqueItems",
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    additional = schema.get("additionalProperties")
    if _m(schema, "properties") and (additional is False or isinstance(additional, Mapping)):
        errs.append(
            f.forbidden(
                f"{path}.additionalProperties", "additionalProperties and properties are mutual exclusive"
            )
        )
    if schema.get("x-kubernetes-preserve-unknown-fields") is False:
        errs.append(
            f.invalid(f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined")
        )
    if "$ref" in schema:
        errs.append(f.forbidden(f"{path}.$ref", "$ref is not supported"))
    list_type = schema.get("x-kubernetes-list-type")
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        errs.append(f.not_supported(f"{path}.x-kubernetes-list-type", list_type, ["atomic", "map", "set"]))
    if list_type == "map" and not _l(schema, "x-kubernetes-list-map-keys"):
        errs.append(
            f.required(
                f"{path}.x-kubernetes-list-map-keys", "must not be empty if x-kubernetes-list-type is map"
            )
        )
    if isinstance(additional, Mapping):
        errs.extend(_schema_errors(additional, f"{path}.additionalProperties"))
    for name in sorted(_m(schema, "properties")):
        sub = _m(schema, "properties").get(name)
        if isinstance(sub, Mapping):
            errs.extend(_schema_errors(sub, f"{path}.properties[{name}]"))
    items = schema.get("items")
    if isinstance(items, Mapping):
        errs.extend(_schema_errors(items, f"{path}.items"))
    elif isinstance(items, list):
        errs.append(f.forbidden(f"{path}.items", "items must be a schema object and not an array"))
    return errs


def structural_errors(schema: Obj, path: str) -> list[f.FieldError]:
    """ValidateStructural's invariants (sorted by their text, as upstream sorts them)."""
    errs: list[f.FieldError] = []
    _structural(schema, "root", path, errs)
    return sorted(errs, key=str)


def _structural(s: Obj, level: str, path: str, errs: list[f.FieldError]) -> None:
    kind = _s(s, "type")
    if kind == "array" and not isinstance(s.get("items"), Mapping):
        errs.append(f.required(f"{path}.items", "must be specified"))
    items = s.get("items")
    if isinstance(items, Mapping):
        _structural(items, "item", f"{path}.items", errs)
    props = _m(s, "properties")
    for name, sub in props.items():
        if isinstance(sub, Mapping):
            _structural(sub, "field", f"{path}.properties[{name}]", errs)
    additional = s.get("additionalProperties")
    if additional is not None:
        if level == "root":
            errs.append(f.forbidden(f"{path}.additionalProperties", "must not be used at the root"))
        if isinstance(additional, Mapping):
            _structural(additional, "field", f"{path}.additionalProperties", errs)
    int_or_string = s.get("x-kubernetes-int-or-string") is True
    preserve = s.get("x-kubernetes-preserve-unknown-fields") is True
    embedded = s.get("x-kubernetes-embedded-resource") is True
    if int_or_string and preserve:
        errs.append(
            f.invalid(
                f"{path}.x-kubernetes-preserve-unknown-fields",
                True,
                "must be false if x-kubernetes-int-or-string is true",
            )
        )
    if int_or_string and embedded:
        errs.append(
            f.invalid(
                f"{path}.x-kubernetes-embedded-resource",
                True,
                "must be false if x-kubernetes-int-or-string is true",
            )
        )
    for junctor in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(_l(s, junctor)):
            if isinstance(sub, Mapping) and not (int_or_string and junctor in ("anyOf", "allOf")):
                _nested(sub, f"{path}.{junctor}[{i}]", errs)
    if isinstance(s.get("not"), Mapping):
        _nested(_m(s, "not"), f"{path}.not", errs)
    pattern = s.get("pattern")
    if isinstance(pattern, str) and (error := gopattern.compile_error(pattern)) is not None:
        errs.append(
            f.invalid(f"{path}.pattern", pattern, f"must be a valid regular expression, but isn't: {error}")
        )
    if embedded and kind != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        errs.append(
            f.required(f"{path}.type", detail) if not kind else f.invalid(f"{path}.type", kind, detail)
        )
    elif not kind and not int_or_string and not preserve:
        detail = {
            "root": "must not be empty at the root",
            "item": "must not be empty for specified array items",
            "field": "must not be empty for specified object fields",
        }[level]
        errs.append(f.required(f"{path}.type", detail))
    if level == "root" and kind and kind != "object":
        errs.append(f.invalid(f"{path}.type", kind, "must be object at the root"))
    check_meta = level == "root" or embedded
    for name, want in (("kind", "string"), ("apiVersion", "string"), ("metadata", "object")):
        sub = props.get(name)
        if check_meta and isinstance(sub, Mapping) and _s(sub, "type") != want:
            errs.append(f.invalid(f"{path}.properties[{name}].type", _s(sub, "type"), f"must be {want}"))
    metadata = props.get("metadata")
    if level == "root" and isinstance(metadata, Mapping):
        inner = set(_m(metadata, "properties"))
        rest = {k for k in metadata if k not in ("type", "properties", "default")}
        if (inner - {"name", "generateName"}) or rest:
            errs.append(
                f.forbidden(
                    f"{path}.properties[metadata]",
                    "must not specify anything other than name and generateName, "
                    "but metadata is implicitly specified",
                )
            )
    if embedded and not preserve and not props:
        errs.append(
            f.required(
                f"{path}.properties",
                "must not be empty if x-kubernetes-embedded-resource is true "
                "without x-kubernetes-preserve-unknown-fields",
            )
        )


def _nested(v: Obj, path: str, errs: list[f.FieldError]) -> None:
    """validateNestedValueValidation: what a value validation under a junctor may not set."""
    for key, detail in (
        ("type", "must be empty to be structural"),
        ("additionalProperties", "must be undefined to be structural"),
        ("default", "must be undefined to be structural"),
        ("title", "must be empty to be structural"),
        ("description", "must be empty to be structural"),
        ("nullable", "must be false to be structural"),
        ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
        ("x-kubernetes-embedded-resource", "must be false to be structural"),
        ("x-kubernetes-int-or-string", "must be false to be structural"),
        ("x-kubernetes-list-map-keys", "must be empty to be structural"),
        ("x-kubernetes-list-type", "must be undefined to be structural"),
    ):
        if v.get(key) not in (None, False, "", []):
            errs.append(f.forbidden(f"{path}.{key}", detail))
    if "metadata" in _m(v, "properties"):
        errs.append(f.forbidden(f"{path}.properties[metadata]", "must not be specified in a nested context"))
    for name, sub in _m(v, "properties").items():
        if isinstance(sub, Mapping):
            _nested(sub, f"{path}.properties[{name}]", errs)
    if isinstance(v.get("items"), Mapping):
        _nested(_m(v, "items"), f"{path}.items", errs)


def validate_custom_resource_meta(obj: Obj, old: Obj | None, *, namespaced: bool) -> list[f.FieldError]:
    """The metadata checks of a custom resource (ValidateObjectMetaAccessor, DNS subdomain names)."""
    return validate_metadata(obj, old, namespaced=namespaced, name_fn=name_is_dns_subdomain)
