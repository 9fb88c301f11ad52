"""Object metadata checks (mirrors staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go and
pkg/apis/meta/v1/validation's ValidateLabels)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

from kubetaint.api.validation import field as f
from kubetaint.api.validation.names import (
    is_qualified_name,
    is_valid_label_name,
    is_valid_label_value,
    name_is_dns_label,
)
from kubetaint.api.validation.ownerrefs import validate_finalizers, validate_owner_references
from kubetaint.speed.memo import Memo

NameFunc = Callable[[str, bool], list[str]]
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * (1 << 10)
IS_NEGATIVE_ERROR = "must be greater than or equal to 0"


def validate_label_name(name: str, path: str) -> list[f.FieldError]:
    """metav1validation.ValidateLabelName: one Invalid per IsQualifiedName message."""
    return [f.invalid(path, name, msg) for msg in is_qualified_name(name)]


def validate_labels(labels: Mapping[str, Any], path: str) -> list[f.FieldError]:
    """metav1validation.ValidateLabels (keys in sorted order; Go's map order is random). Each
    label's errors depend on its key, its value's text and the path only: remembered per label
    (a node's labels are its group's but for its hostname)."""
    errs: list[f.FieldError] = []
    for key in sorted(labels):
        value = labels[key]
        text = "" if value is None else str(value)
        memo_key = (key, text, path)
        found = _LABEL_ERRORS.get(memo_key) if type(key) is str else None
        if found is None:
            found = (
                *validate_label_name(key, path),
                *(f.invalid(path, text, msg) for msg in is_valid_label_value(text)),
            )
            if type(key) is str:
                _LABEL_ERRORS.put(memo_key, found)
        errs.extend(found)
    return errs


#: validate_labels' errors of one label by (key, value text, path) (FieldErrors are frozen).
_LABEL_ERRORS: Memo[tuple[str, str, str], tuple[f.FieldError, ...]] = Memo(
    "api.validation.objectmeta.label_errors", limit=1 << 16
)


def validate_annotations(annotations: Mapping[str, Any], path: str) -> list[f.FieldError]:
    """apimachinery ValidateAnnotations: lower-cased qualified-name keys, 256 KiB in total."""
    errs: list[f.FieldError] = []
    total = 0
    for key in sorted(annotations):
        errs.extend(f.invalid(path, key, msg) for msg in is_qualified_name(key.lower()))
        value = annotations[key]
        total += len(key.encode()) + len(("" if value is None else str(value)).encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(f.too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


#: Results of the generation, label, annotation, owner reference and finalizer checks by the
#: content they depend on (all of it immutable): the pods of one template (or adopted by one
#: ReplicaSet), a lease renewal or a pod status update carry the same labels and owners again
#: and again. Names differ from object to object, so they are checked every time (the
#: name checks remember their own results, see names.remembered).
_REMEMBERED: Memo[Hashable, tuple[f.FieldError, ...]] = Memo(
    "api.validation.objectmeta.content", limit=1 << 16
)


def _string_items(mapping: Any) -> tuple[tuple[str, str], ...] | None:
    """The items of a labels/annotations mapping (None when absent); TypeError unless every key
    and value is a string."""
    if mapping is None:
        return None
    if type(mapping) is not dict and not isinstance(mapping, Mapping):
        return None
    items = tuple(mapping.items())
    for k, v in items:
        if type(k) is not str or type(v) is not str:
            raise TypeError("not a string")
    return items


def _owner_items(refs: Any) -> tuple[tuple[tuple[str, Any], ...], ...] | None:
    """The items of each owner reference (None when absent); TypeError unless the list holds
    dicts of strings and booleans only (so `True` and `1` can never share a key)."""
    if refs is None:
        return None
    if type(refs) is not list:
        raise TypeError("not a list")
    out = []
    for ref in refs:
        if type(ref) is not dict:
            raise TypeError("not a dict")
        items = tuple(ref.items())
        for k, v in items:
            if type(k) is not str or (type(v) is not str and type(v) is not bool and v is not None):
                raise TypeError("not a string")
        out.append(items)
    return tuple(out)


def _finalizer_items(finalizers: Any) -> tuple[str, ...] | None:
    if finalizers is None:
        return None
    if type(finalizers) is not list or any(type(v) is not str for v in finalizers):
        raise TypeError("not a list of strings")
    return tuple(finalizers)


def _content_key(meta: Mapping[str, Any], path: str) -> Hashable:
    """Everything _validate_meta_content reads, as a hashable value; TypeError unless every label,
    annotation, owner reference field and finalizer is a string (or an owner reference's boolean),
    so equal keys can never stand for differently printed values."""
    generation = meta.get("generation")
    key = (
        generation if type(generation) is int and generation < 0 else None,
        _string_items(meta.get("labels")),
        _string_items(meta.get("annotations")),
        _owner_items(meta.get("ownerReferences")),
        _finalizer_items(meta.get("finalizers")),
        path,
    )
    hash(key)
    return key


def _labels_only_key(meta: Mapping[str, Any], path: str) -> Hashable | None:
    """_content_key of a plain dict `meta` with neither generation, annotations, owner
    references nor finalizers (a scenario's or a template's pod, a node): the same key, worked
    out with fewer steps; None for any other `meta`. TypeError as _content_key raises it."""
    if (
        type(meta) is not dict
        or "generation" in meta
        or "annotations" in meta
        or "ownerReferences" in meta
        or "finalizers" in meta
    ):
        return None
    labels = meta.get("labels")
    if labels is None:
        return (None, None, None, None, None, path)
    if type(labels) is not dict:
        return None
    items = tuple(labels.items())
    for k, v in items:
        if type(k) is not str or type(v) is not str:
            raise TypeError("not a string")
    return (None, items, None, None, None, path)


def _valid_names_at_once(
    meta: Mapping[str, Any], namespaced: bool, name_fn: NameFunc
) -> list[f.FieldError] | None:
    """[] when `meta` (a plain dict) has a name `name_fn` accepts, no generateName, and a
    namespace that is absent, or a valid DNS label on a namespaced kind: what _validate_names
    finds then (each check passes, no other is made). None: _validate_names has to look."""
    if type(meta) is not dict or meta.get("generateName"):
        return None
    name = meta.get("name")
    if type(name) is not str or not name or name_fn(name, False):
        return None
    namespace = meta.get("namespace")
    if not namespace:
        return []
    if namespaced and type(namespace) is str and is_valid_label_name(namespace):
        return []
    return None


def validate_object_meta(
    meta: Mapping[str, Any], *, namespaced: bool, name_fn: NameFunc, path: str = "metadata"
) -> list[f.FieldError]:
    """ValidateObjectMetaAccessor for a create: the name checks, then the content checks
    (remembered by content).

    Like kube-apiserver, a namespaced object without a namespace gets the request's namespace
    (so it is not reported), and a generateName stands in for the name that would be generated.
    """
    errs = _valid_names_at_once(meta, namespaced, name_fn)
    if errs is None:
        errs = _validate_names(meta, namespaced=namespaced, name_fn=name_fn, path=path)
    try:
        key = _labels_only_key(meta, path)
        if key is None:
            key = _content_key(meta, path)
    except TypeError:
        errs.extend(_validate_meta_content(meta, path))
        return errs
    found = _REMEMBERED.get(key)
    if found is None:
        found = _REMEMBERED.put(key, tuple(_validate_meta_content(meta, path)))
    errs.extend(found)
    return errs


#: validate_owner_references' results by the references' content (_owner_items): the pods one
#: ReplicaSet adopts all gain the same references.
_REMEMBERED_OWNERS: Memo[Hashable, tuple[f.FieldError, ...]] = Memo(
    "api.validation.objectmeta.owner_references", limit=1 << 16
)


def owner_reference_errors(meta: Mapping[str, Any], path: str = "metadata") -> list[f.FieldError]:
    """The errors of `meta`'s owner references alone, as validate_object_meta reports them
    (remembered by content)."""
    refs = meta.get("ownerReferences")
    if not isinstance(refs, list):
        return []
    try:
        key = (_owner_items(refs), path)
    except TypeError:
        return validate_owner_references(refs, f.child(path, "ownerReferences"))
    found = _REMEMBERED_OWNERS.get(key)
    if found is None:
        found = _REMEMBERED_OWNERS.put(
            key, tuple(validate_owner_references(refs, f.child(path, "ownerReferences")))
        )
    return list(found)


def _validate_names(
    meta: Mapping[str, Any], *, namespaced: bool, name_fn: NameFunc, path: str
) -> list[f.FieldError]:
    """generateName, name and namespace."""
    errs: list[f.FieldError] = []
    generate_name = str(meta.get("generateName") or "")
    name = str(meta.get("name") or "")
    if generate_name:
        errs.extend(
            f.invalid(f.child(path, "generateName"), generate_name, m) for m in name_fn(generate_name, True)
        )
    if not name:
        if not generate_name:
            errs.append(f.required(f.child(path, "name"), "name or generateName is required"))
    else:
        errs.extend(f.invalid(f.child(path, "name"), name, m) for m in name_fn(name, False))
    namespace = str(meta.get("namespace") or "")
    if namespaced:
        if namespace:
            errs.extend(
                f.invalid(f.child(path, "namespace"), namespace, m)
                for m in name_is_dns_label(namespace, False)
            )
    elif namespace:
        errs.append(f.forbidden(f.child(path, "namespace"), "not allowed on this type"))
    return errs


def _validate_meta_content(meta: Mapping[str, Any], path: str) -> list[f.FieldError]:
    """generation, labels, annotations, owner references and finalizers (managedFields are not
    modelled)."""
    errs: list[f.FieldError] = []
    generation = meta.get("generation")
    if isinstance(generation, int) and not isinstance(generation, bool) and generation < 0:
        errs.append(f.invalid(f.child(path, "generation"), generation, IS_NEGATIVE_ERROR))
    labels = meta.get("labels")
    if isinstance(labels, Mapping):
        errs.extend(validate_labels(labels, f.child(path, "labels")))
    annotations = meta.get("annotations")
    if isinstance(annotations, Mapping):
        errs.extend(validate_annotations(annotations, f.child(path, "annotations")))
    refs = meta.get("ownerReferences")
    if isinstance(refs, list):
        errs.extend(validate_owner_references(refs, f.child(path, "ownerReferences")))
    finalizers = meta.get("finalizers")
    if isinstance(finalizers, list):
        errs.extend(validate_finalizers(finalizers, f.child(path, "finalizers")))
    return errs
