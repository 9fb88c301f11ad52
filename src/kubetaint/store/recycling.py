"""Recycled versions: speeds up a memory store's round of lease renewals by writing each new version
into the dicts of the version two rounds old when nothing can reach that one any more; off in
reference mode (`Spares` keeps nothing then).

A field write stores, for each object, a copy of the object, of its metadata and of the part
holding the field (three dicts), and the version it replaces is freed a round later: at 5,000
nodes about 1.2 million lease versions an hour are made and freed that way. The round after
renews the very objects this one wrote (`HollowNodePool`'s quiet rounds), and the versions
this one replaced (`FieldWriteGroup.olds`) are then each the object it renews but for the field
and the resourceVersion, with the same keys in the same order. When such a version is held by
nothing but the group's list (the store gave it out, but every reader has let it go: its
reference count says so, as do those of its metadata and part, of the group and of the list)
and the store's bounded history no longer reaches it, setting its field and resourceVersion
makes it exactly the copy the write would store, and no reader can tell: nothing that could
read it before exists.
"""

from __future__ import annotations

from sys import getrefcount

from kubetaint.speed.reference import reference_mode
from kubetaint.store.changes import FieldPath, FieldWriteGroup
from kubetaint.store.interface import JSON
from kubetaint.store.watchhistory import WatchHistory


def _held_once() -> int:
    """What `getrefcount` tells of an object one container and one local variable hold (as
    `recycle_run` and `Spares.take` hold what they look at)."""
    held: list[JSON] = [{}]
    obj = held[0]
    return getrefcount(obj)


_HELD_ONCE = _held_once()
#: Stands for a field an object does not have (equal to no value).
_ABSENT = object()


class Spare:
    """What a field write may recycle: the group before replaced `olds[i]` by `news[i]`, the
    object `names[i]` of `namespace`, setting its field to `value`; the first `reusable` of
    `olds` are out of the history's reach."""

    __slots__ = ("names", "namespace", "news", "olds", "reusable", "value")

    def __init__(self, group: FieldWriteGroup, olds: list[JSON], reusable: int) -> None:
        (self.namespace,) = group.namespaces()
        self.names = group.names
        self.news = group.news
        self.olds = olds
        self.value = group.value
        self.reusable = reusable


class Spares:
    """The field-write groups a store published lately, by their first new object: a write of the
    objects a group wrote, in its order, takes it. A group not taken by the time `LIMIT` more
    were kept is let go (its objects were written otherwise, or are no longer renewed), so
    spares hold at most `LIMIT` groups' versions, and one per heartbeat phase while the rounds
    go on."""

    LIMIT = 8

    __slots__ = ("_groups", "_kept")

    def __init__(self) -> None:
        #: first new object's id -> (the group, the number of groups kept before it)
        self._groups: dict[int, tuple[FieldWriteGroup, int]] = {}
        self._kept = 0

    def __len__(self) -> int:
        return len(self._groups)

    def keep(self, group: FieldWriteGroup) -> None:
        """Keep `group` (just published) for the write that renews its objects."""
        if reference_mode():
            return
        groups, kept = self._groups, self._kept
        groups[id(group.news[0])] = (group, kept)  # (the group holds the object: the id stays its own)
        self._kept = kept + 1
        while True:  # (the oldest first)
            first = next(iter(groups))
            if groups[first][1] > kept - self.LIMIT:
                break
            del groups[first]

    def take(
        self, resource: str, objects: list[JSON], path: FieldPath, history: WatchHistory
    ) -> Spare | None:
        """The spare of a field write of `objects` (`path` of `resource`): from the group kept
        whose first new object is `objects[0]`, its replaced versions the history no longer
        reaches, when nothing but the history holds the group and nothing but the group holds
        their list; None when there is none."""
        if not objects or not self._groups:
            return None
        entry = self._groups.pop(id(objects[0]), None)
        if entry is None:
            return None
        group = entry[0]
        del entry
        if group.news[0] is not objects[0] or group.resource != resource or group.path != path:
            return None
        held, after = history.reach(group)
        if getrefcount(group) != _HELD_ONCE - 1 + held:  # (the history: once per update held)
            return None  # (a batch or a change list holding it may still read its olds)
        olds = group.olds
        if getrefcount(olds) != _HELD_ONCE:
            return None
        # The history reaches the group's last `held` replaced versions. When the group and the
        # updates after it fill the bound, each of those is out of its reach once the object
        # that replaced it is written again (the write's updates push it out): all are spare.
        bound = history.bound
        whole = bound is not None and len(olds) + after >= bound
        reusable = len(olds) if whole else len(olds) - held
        return Spare(group, olds, reusable) if reusable > 0 else None


def recycle_run(
    bucket: dict[str, JSON],
    objects: list[JSON],
    spare: Spare,
    *,
    path: FieldPath,
    value: object,
    first_rv: int,
    written: tuple[list[str], list[JSON], list[JSON]],
) -> bool:
    """`write_current_run` over the first `spare.reusable` objects (at most) of the namespace's
    `bucket`: each plainly current object is replaced by its new version, which is the version it
    replaced (`spare.olds[i]`, when `spare.news[i]` is the object) with the field and the
    resourceVersion set when nothing else holds that version, its metadata or its part, else a
    copy. Its name and new version are appended to `written` (names, news; the caller appends the
    olds). False when it stopped before an object the store's general loop takes.

    An object the spare's group wrote (`spare.news[i]`) is plainly current when its store bucket
    holds it: the group stored it under `spare.names[i]` without a generation, its field set to
    `spare.value` (unlike `value`: else no object is written here)."""
    if spare.value == value:
        return False  # (each object holds the value: the general loop's no-ops)
    names, _, news = written
    part, field = path
    renewed, olds, renamed = spare.news, spare.olds, spare.names
    current_of = bucket.get
    held_once, absent = _HELD_ONCE, _ABSENT
    rv = first_rv
    try:
        for i in range(min(spare.reusable, len(objects), len(renewed))):
            obj = objects[i]
            if renewed[i] is obj:
                name = renamed[i]
                if current_of(name) is not obj:
                    return False
                rv += 1
                old = olds[i]
                if getrefcount(old) == held_once:
                    old_meta = old["metadata"]
                    old_part = old[part]
                    if getrefcount(old_meta) == held_once and getrefcount(old_part) == held_once:
                        old_part[field] = value
                        old_meta["resourceVersion"] = str(rv)
                        bucket[name] = old
                        names.append(name)
                        news.append(old)
                        continue
                meta = obj["metadata"]
                current = obj[part]
            else:
                meta = obj["metadata"]
                name = meta["name"]
                if current_of(name) is not obj or "generation" in meta:
                    return False
                current = obj[part]
                if current.get(field, absent) == value:
                    return False  # unchanged: the general loop's no-op
                rv += 1
            changed = current.copy()
            changed[field] = value
            new_meta = meta.copy()
            new_meta["resourceVersion"] = str(rv)
            stored = obj.copy()
            stored[part] = changed
            stored["metadata"] = new_meta
            bucket[name] = stored
            names.append(name)
            news.append(stored)
    except (KeyError, TypeError, AttributeError):
        return False  # an object of another shape: the general loop takes it
    return True
