"""Who makes a request (mirrors apiserver/pkg/authentication/user): the authenticated user the
API server hands to admission (`admission.Attributes.user`) and to the registry's storage checks
(RBAC's privilege-escalation check)."""

from __future__ import annotations

from dataclasses import dataclass

ANONYMOUS_USER = "system:anonymous"
UNAUTHENTICATED_GROUP = "system:unauthenticated"
AUTHENTICATED_GROUP = "system:authenticated"
MASTERS_GROUP = "system:masters"
NODES_GROUP = "system:nodes"
NODE_USER_PREFIX = "system:node:"


@dataclass(frozen=True, slots=True)
class UserInfo:
    """user.DefaultInfo: a name, a uid, groups and extra values (key, values)."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def anonymous(self) -> bool:
        return self.name == ANONYMOUS_USER

    def node_name(self) -> str | None:
        """nodeidentifier.NodeIdentity: the node name of a `system:node:<name>` user in the
        `system:nodes` group ("" when the name is missing), or None for any other user."""
        if not self.name.startswith(NODE_USER_PREFIX) or NODES_GROUP not in self.groups:
            return None
        return self.name.removeprefix(NODE_USER_PREFIX)
