"""A controller's history of ControllerRevisions (mirrors pkg/controller/history)."""

from kubetaint.controllers.history.history import (
    HASH_LABEL,
    RESOURCE,
    History,
    equal_revision,
    find_equal_revisions,
    go_json,
    hash_controller_revision,
    new_controller_revision,
    next_revision,
    revision_name,
    sort_revisions,
)

__all__ = [
    "HASH_LABEL",
    "RESOURCE",
    "History",
    "equal_revision",
    "find_equal_revisions",
    "go_json",
    "hash_controller_revision",
    "new_controller_revision",
    "next_revision",
    "revision_name",
    "sort_revisions",
]
