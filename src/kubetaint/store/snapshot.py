"""The pages of a list, and lists at a past resourceVersion: the consistent snapshots behind
continue tokens and `resourceVersionMatch=Exact` (mirrors apiserver/pkg/storage/etcd3/store.go
GetList, which ranges etcd at the first page's revision, and its errors.go).

A store keeps the changes since its compaction point (the watch history); the state at a
retained resourceVersion R is the current state with every later change undone: a key changed
after R holds, at R, the old object of its first change after R (absent when that change is its
creation). Snapshots use no memory beyond that history, and expire with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from kubetaint.api import errors
from kubetaint.api.selectors import FieldSelector, LabelSelector
from kubetaint.store.interface import JSON, ListResult, WatchEvent, object_key
from kubetaint.store.mutation import continue_resource_version, decode_continue, encode_continue, key_order

Key = tuple[str, str]
Row = TypeVar("Row")

#: etcd3/errors.go `expired`, for an exact list at a compacted resourceVersion.
EXPIRED_LIST = "The resourceVersion for the provided list is too old."
#: etcd3/errors.go `inconsistentContinue`, for a continue token whose snapshot is compacted.
INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can start "
    "a new list without the continue parameter, or use the continue token in this response to "
    "retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list."
)
#: A continue token's resourceVersion for "the current state" (storage.EncodeContinue(..., -1)).
INCONSISTENT = -1


def expired_continue(after: Key) -> errors.StatusError:
    """410 Expired whose Status carries, in `metadata.continue`, a token listing the rest of the
    keys at the current state (handleCompactedErrorForPaging)."""
    err = errors.expired(INCONSISTENT_CONTINUE)
    err.list_continue = encode_continue(after, INCONSISTENT)
    return err


def expired_list() -> errors.StatusError:
    return errors.expired(EXPIRED_LIST)


def too_large_resource_version(minimum: int, current: int) -> errors.StatusError:
    """storage.NewTooLargeResourceVersionError(minimum, current, 1): 504 Timeout with the
    ResourceVersionTooLarge cause (the watch cache's resourceVersionTooHighRetrySeconds)."""
    return errors.StatusError(
        504,
        "Timeout",
        f"Timeout: Too large resource version: {minimum}, current: {current}",
        causes=[{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        retry_after_seconds=1,
    )


def state_at(current: Iterable[tuple[Key, JSON]], later: Iterable[WatchEvent]) -> dict[Key, JSON]:
    """The objects at resourceVersion R, from the `current` ones and the changes `later` than R
    (of the same resource, oldest first)."""
    state = dict(current)
    undone: set[Key] = set()
    for event in later:
        if event.type == "BOOKMARK":
            continue
        key = object_key(event.object)
        if key in undone:
            continue
        undone.add(key)
        if event.type == "ADDED" or event.old_object is None:
            state.pop(key, None)
        else:
            state[key] = event.old_object
    return state


def list_origin(continue_token: str | None, resource_version: int | None) -> tuple[Key | None, int | None]:
    """Where a list request starts: the key its page follows (None: the first page) and the
    resourceVersion whose state it lists (None: the current one; a continue token's own when it
    carries one). A token that does not decode: 400 BadRequest."""
    start = decode_continue(continue_token) if continue_token else None
    if continue_token and (token_rv := continue_resource_version(continue_token)) > 0:
        return start, token_rv
    return start, resource_version


def select_page(
    rows: Iterator[Row],
    object_of: Callable[[Row], JSON],
    *,
    labels: LabelSelector,
    fields: FieldSelector,
    limit: int,
    list_rv: int,
    meets_fields: Callable[[JSON], bool] | None = None,
) -> ListResult:
    """One page of a list at `list_rv`: the objects of `rows` (the keys after the page's start,
    in key order; `object_of` reads a row's object) that the selectors match (an object
    `meets_fields` accepts meets `fields` untested), at most `limit` (0: all), with the continue token and
    remainingItemCount (only without selectors, as etcd3 counts keys, not matches)."""
    selecting = not (labels.empty and fields.empty)
    matched: list[JSON] = []
    for row in rows:
        obj = object_of(row)
        if not labels.empty and not labels.matches(obj["metadata"].get("labels")):
            continue
        if (
            not fields.empty
            and not (meets_fields is not None and meets_fields(obj))
            and not fields.matches(obj)
        ):
            continue
        if limit and len(matched) >= limit:
            token = encode_continue(object_key(matched[-1]), list_rv)
            remaining = None if selecting else 1 + sum(1 for _ in rows)
            return ListResult(matched, str(list_rv), token, remaining)
        matched.append(obj)
    return ListResult(matched, str(list_rv))


def list_at(
    current: Iterable[tuple[Key, JSON]],
    later: Iterable[WatchEvent],
    *,
    snapshot: int,
    newest: int,
    compacted: int,
    namespace: str,
    start: Key | None,
    limit: int,
    labels: LabelSelector,
    fields: FieldSelector,
) -> ListResult:
    """A page of the state at `snapshot`, from the `current` objects (at `newest`) and the
    changes `later` than `snapshot` (see `state_at`): 504 for a version after `newest`, 410
    Expired for one before `compacted` (the oldest version the history can rebuild)."""
    if snapshot > newest:
        raise too_large_resource_version(snapshot, newest)
    if snapshot < compacted:
        raise expired_continue(start) if start is not None else expired_list()
    state = state_at(current, later)
    keys = sorted((k for k in state if not namespace or k[0] == namespace), key=key_order)
    if start is not None:
        origin = key_order(start)
        keys = [k for k in keys if key_order(k) > origin]
    return select_page(
        iter(keys), state.__getitem__, labels=labels, fields=fields, limit=limit, list_rv=snapshot
    )
