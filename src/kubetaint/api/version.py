"""The one Kubernetes version kubetaint follows (docs/version.md).

Everything that names a Kubernetes version reads it here: the API server's `/version` and the
`info.version` of its OpenAPI documents, the hollow kubelets' `nodeInfo.kubeletVersion`, the
OpenAPI schema file shipped in `kubetaint.api.openapi_data`, `kubetaint --version` and the
feature gates' defaults (`kubetaint.api.features`).
"""

from __future__ import annotations

#: kube-apiserver's `version.Info` fields for the release kubetaint follows.
MAJOR = "1"
MINOR = "35"
PATCH = "0"
#: `gitVersion`: what kubectl prints as the server version and the kubelets report.
KUBERNETES_VERSION = f"v{MAJOR}.{MINOR}.{PATCH}"
#: The remaining `version.Info` fields, as a v1.35.0 release build reports them.
GIT_COMMIT = "66452049f3d692768c39c797b21b793dce80314e"
GIT_TREE_STATE = "clean"
BUILD_DATE = "2025-12-17T12:32:06Z"
GO_VERSION = "go1.25.5"
COMPILER = "gc"
PLATFORM = "linux/amd64"
#: kubectl's emulation/compatibility fields (`version.Info` since 1.33): both the release itself.
EMULATION_MAJOR = MAJOR
EMULATION_MINOR = MINOR
MIN_COMPATIBILITY_MAJOR = MAJOR
MIN_COMPATIBILITY_MINOR = str(int(MINOR) - 1)

#: The OpenAPI v3 schemas file in kubetaint/api/openapi_data (scripts/build_openapi_data.py).
OPENAPI_SCHEMA_FILE = f"schemas-v{MAJOR}.{MINOR}.json.gz"


def version_info() -> dict[str, str]:
    """The body of `GET /version` (apimachinery/pkg/version.Info as kube-apiserver v1.35 fills it)."""
    return {
        "major": MAJOR,
        "minor": MINOR,
        "emulationMajor": EMULATION_MAJOR,
        "emulationMinor": EMULATION_MINOR,
        "minCompatibilityMajor": MIN_COMPATIBILITY_MAJOR,
        "minCompatibilityMinor": MIN_COMPATIBILITY_MINOR,
        "gitVersion": KUBERNETES_VERSION,
        "gitCommit": GIT_COMMIT,
        "gitTreeState": GIT_TREE_STATE,
        "buildDate": BUILD_DATE,
        "goVersion": GO_VERSION,
        "compiler": COMPILER,
        "platform": PLATFORM,
    }
