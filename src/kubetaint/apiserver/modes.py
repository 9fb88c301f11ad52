"""The authorization modes `--authorization-mode` accepts (pkg/kubeapiserver/authorizer/modes):
the ones kubetaint runs, and kube-apiserver's others, which it refuses by name."""

from __future__ import annotations

#: The modes kubetaint runs, in kube-apiserver's spelling.
MODES = ("AlwaysAllow", "Node", "RBAC")
#: kube-apiserver's other modes (AuthorizationModeChoices), which kubetaint does not run.
UNSUPPORTED_MODES = ("AlwaysDeny", "ABAC", "Webhook")
