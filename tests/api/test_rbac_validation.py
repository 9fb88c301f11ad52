"""rbac.authorization.k8s.io/v1 validation: upstream's pkg/apis/rbac/validation/validation_test.go
tables as data (each error case's every error has the given type and field), plus the messages."""

from __future__ import annotations

from typing import Any

import pytest

from kubetaint.api.validation import validate

JSON = dict[str, Any]
GROUP = "rbac.authorization.k8s.io"
REQUIRED, INVALID, NOT_SUPPORTED = "FieldValueRequired", "FieldValueInvalid", "FieldValueNotSupported"


def _obj(kind: str, meta: JSON, **fields: Any) -> JSON:
    return {"apiVersion": f"{GROUP}/v1", "kind": kind, "metadata": meta, **fields}


def crb(meta: JSON, ref: JSON, subjects: list[JSON] | None = None) -> JSON:
    return _obj("ClusterRoleBinding", meta, roleRef=ref, subjects=subjects or [])


def rb(meta: JSON, ref: JSON, subjects: list[JSON] | None = None) -> JSON:
    return _obj("RoleBinding", meta, roleRef=ref, subjects=subjects or [])


def ref(kind: str, name: str = "valid", group: str = GROUP) -> JSON:
    return {"apiGroup": group, "kind": kind, "name": name}


DEFAULT = {"namespace": "default", "name": "default"}
MASTER = {"namespace": "default", "name": "master"}


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(
            crb(
                {"name": "master"},
                ref("ClusterRole"),
                [
                    {"name": "validsaname", "namespace": "foo", "kind": "ServiceAccount"},
                    {"name": "valid@username", "kind": "User", "apiGroup": GROUP},
                    {"name": "valid@groupname", "kind": "Group", "apiGroup": GROUP},
                ],
            ),
            id="a valid ClusterRoleBinding",
        ),
        pytest.param(
            rb(
                MASTER,
                ref("Role"),
                [
                    {"name": "validsaname", "kind": "ServiceAccount"},
                    {"name": "valid@username", "kind": "User", "apiGroup": GROUP},
                    {"name": "valid@groupname", "kind": "Group", "apiGroup": GROUP},
                ],
            ),
            id="a valid RoleBinding",
        ),
        pytest.param(_obj("Role", DEFAULT), id="a valid Role"),
        pytest.param(_obj("ClusterRole", {"name": "default"}), id="a valid ClusterRole"),
        pytest.param(
            _obj("ClusterRole", {"name": "default"}, rules=[{"verbs": ["get"], "nonResourceURLs": ["/*"]}]),
            id="a ClusterRole with a non-resource URL",
        ),
        pytest.param(
            _obj("Role", DEFAULT, rules=[{"verbs": ["get"], "apiGroups": ["v1"], "resources": ["pods"]}]),
            id="a Role with a resource rule",
        ),
    ],
)
def test_valid_objects(obj: JSON) -> None:
    assert validate(obj) == []


#: Upstream's two "zero-length namespace" cases are left out: a request's namespace is always
#: filled in before validation (validate_object_meta does not report a missing one).
ERROR_CASES = [
    # TestValidateClusterRoleBinding
    pytest.param(
        crb({"name": "default"}, ref("ClusterRole", group="rbac.GroupName")),
        NOT_SUPPORTED,
        "roleRef.apiGroup",
        id="CRB bad group",
    ),
    pytest.param(crb({"name": "default"}, ref("Type")), NOT_SUPPORTED, "roleRef.kind", id="CRB bad kind"),
    pytest.param(
        crb({"name": "default"}, ref("Role")), NOT_SUPPORTED, "roleRef.kind", id="CRB reference role"
    ),
    pytest.param(crb({}, ref("ClusterRole")), REQUIRED, "metadata.name", id="CRB zero-length name"),
    pytest.param(
        crb({"name": "default"}, ref("ClusterRole", name="")), REQUIRED, "roleRef.name", id="CRB bad role"
    ),
    pytest.param(
        crb({"name": "master"}, ref("ClusterRole"), [{"name": "subject"}]),
        NOT_SUPPORTED,
        "subjects[0].kind",
        id="CRB bad subject kind",
    ),
    pytest.param(
        crb(
            {"name": "master"},
            ref("ClusterRole"),
            [{"namespace": "foo", "name": "subject:bad", "kind": "ServiceAccount"}],
        ),
        INVALID,
        "subjects[0].name",
        id="CRB bad subject name",
    ),
    pytest.param(
        crb({"name": "master"}, ref("ClusterRole"), [{"name": "good", "kind": "ServiceAccount"}]),
        REQUIRED,
        "subjects[0].namespace",
        id="CRB missing SA namespace",
    ),
    pytest.param(
        crb({"name": "master"}, ref("ClusterRole"), [{"namespace": "foo", "kind": "ServiceAccount"}]),
        REQUIRED,
        "subjects[0].name",
        id="CRB missing subject name",
    ),
    # TestValidateRoleBinding
    pytest.param(
        rb(DEFAULT, ref("ClusterRole", group="rbac.GroupName")),
        NOT_SUPPORTED,
        "roleRef.apiGroup",
        id="RB bad group",
    ),
    pytest.param(rb(DEFAULT, ref("Type")), NOT_SUPPORTED, "roleRef.kind", id="RB bad kind"),
    pytest.param(
        rb({"namespace": "default"}, ref("Role")), REQUIRED, "metadata.name", id="RB zero-length name"
    ),
    pytest.param(rb(DEFAULT, ref("Role", name="")), REQUIRED, "roleRef.name", id="RB bad role"),
    pytest.param(
        rb(MASTER, ref("Role"), [{"name": "subject"}]),
        NOT_SUPPORTED,
        "subjects[0].kind",
        id="RB bad subject kind",
    ),
    pytest.param(
        rb(MASTER, ref("Role"), [{"name": "subject:bad", "kind": "ServiceAccount"}]),
        INVALID,
        "subjects[0].name",
        id="RB bad subject name",
    ),
    pytest.param(
        rb(MASTER, ref("Role"), [{"kind": "ServiceAccount"}]),
        REQUIRED,
        "subjects[0].name",
        id="RB missing subject name",
    ),
    # TestValidateRole*
    pytest.param(
        _obj("Role", {"namespace": "default"}), REQUIRED, "metadata.name", id="Role zero-length name"
    ),
    pytest.param(
        _obj("Role", DEFAULT, rules=[{"verbs": ["get"], "nonResourceURLs": ["/*"]}]),
        INVALID,
        "rules[0].nonResourceURLs",
        id="Role namespaced non-resource URL",
    ),
    pytest.param(
        _obj("ClusterRole", {"name": "default"}, rules=[{"verbs": [], "nonResourceURLs": ["/*"]}]),
        REQUIRED,
        "rules[0].verbs",
        id="ClusterRole non-resource URL without verbs",
    ),
    pytest.param(
        _obj(
            "Role",
            DEFAULT,
            rules=[{"verbs": ["get"], "nonResourceURLs": ["/*"], "apiGroups": ["v1"], "resources": ["pods"]}],
        ),
        INVALID,
        "rules[0].nonResourceURLs",
        id="Role mixed non-resource and resource",
    ),
    pytest.param(
        _obj("Role", DEFAULT, rules=[{"verbs": ["get"], "resources": ["pods"]}]),
        REQUIRED,
        "rules[0].apiGroups",
        id="Role no API group",
    ),
    pytest.param(
        _obj("Role", DEFAULT, rules=[{"verbs": ["get"], "apiGroups": ["v1"]}]),
        REQUIRED,
        "rules[0].resources",
        id="Role no resources",
    ),
]


@pytest.mark.parametrize(("obj", "reason", "field"), ERROR_CASES)
def test_error_cases(obj: JSON, reason: str, field: str) -> None:
    errs = validate(obj)
    assert errs
    assert {(e.reason, e.field) for e in errs} == {(reason, field)}


def test_a_binding_update_may_not_change_its_role_ref() -> None:
    old = rb({**MASTER, "resourceVersion": "1"}, ref("Role"))
    assert validate(rb({**MASTER, "resourceVersion": "1"}, ref("Role")), old=old) == []
    errs = validate(rb({**MASTER, "resourceVersion": "1"}, ref("Role", name="changed")), old=old)
    assert [(e.reason, e.field) for e in errs] == [(INVALID, "roleRef")]
    assert errs[0].message == (
        'Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"Role", Name:"changed"}: '
        "cannot change roleRef"
    )


@pytest.mark.parametrize(
    ("obj", "messages"),
    [
        pytest.param(
            _obj(
                "ClusterRole",
                {"name": "a/b"},
                rules=[
                    {
                        "verbs": ["get"],
                        "apiGroups": [""],
                        "resources": ["pods", "nodes"],
                        "resourceNames": ["x"],
                    }
                ],
            ),
            ["metadata.name: Invalid value: \"a/b\": may not contain '/'"],
            id="a path-segment name (resource names may go with several resources)",
        ),
        pytest.param(
            _obj("ClusterRole", {"name": "agg"}, aggregationRule={"clusterRoleSelectors": []}),
            [
                "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required "
                "if aggregationRule is non-nil"
            ],
            id="an aggregation rule without selectors",
        ),
        pytest.param(
            _obj(
                "ClusterRole",
                {"name": "agg"},
                aggregationRule={
                    "clusterRoleSelectors": [{"matchExpressions": [{"key": "a", "operator": "In"}]}]
                },
            ),
            [
                "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values: Required value: must be "
                "specified when `operator` is 'In' or 'NotIn'",
                "aggregationRule.clusterRoleSelectors[0]: Invalid value: <nil>: invalid label selector.",
            ],
            id="an aggregation rule with an invalid selector",
        ),
        pytest.param(
            _obj("Role", DEFAULT, rules=[{"verbs": ["get"], "nonResourceURLs": ["/x"], "apiGroups": [""]}]),
            [
                'rules[0].nonResourceURLs: Invalid value: []string{"/x"}: namespaced rules cannot apply to non-resource URLs',
                'rules[0].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both regular resources '
                "and non-resource URLs",
            ],
            id="non-resource URLs in a Role, mixed with API groups",
        ),
        pytest.param(
            crb(
                {"name": ".."}, ref("ClusterRole", name="%x"), [{"kind": "User", "name": "u", "apiGroup": ""}]
            ),
            [
                "metadata.name: Invalid value: \"..\": may not be '..'",
                "roleRef.name: Invalid value: \"%x\": may not contain '%'",
                'subjects[0].apiGroup: Unsupported value: "": supported values: "rbac.authorization.k8s.io"',
            ],
            id="upstream's messages for names and a subject's group",
        ),
    ],
)
def test_messages(obj: JSON, messages: list[str]) -> None:
    assert [str(e) for e in validate(obj)] == messages
