"""Cron schedules as the CronJob controller parses them: robfig/cron v3 `ParseStandard` (five
fields minute, hour, day of month, month, day of week; `*` and `?`, ranges, steps, lists, month and
weekday names; the descriptors `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`,
`@midnight`, `@hourly` and `@every <duration>`; a `TZ=` or `CRON_TZ=` prefix), with its error
messages and its `Next` (the first activation strictly after a time, in the schedule's time zone;
day of month and day of week match either when both are restricted).

A schedule without a time zone is read in UTC (kube-controller-manager's local time zone in its
usual container image).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from kubetaint.core import durations

STAR_BIT = 1 << 63
_MONTHS = {
    name: i + 1
    for i, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
    )
}
_DAYS = {name: i for i, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}


@dataclass(frozen=True)
class Bounds:
    low: int
    high: int
    names: dict[str, int] | None = None


MINUTES = Bounds(0, 59)
HOURS = Bounds(0, 23)
DOM = Bounds(1, 31)
MONTHS = Bounds(1, 12, _MONTHS)
DOW = Bounds(0, 6, _DAYS)


class ScheduleError(ValueError):
    """A schedule robfig/cron refuses; the message is its error's."""


def _bits(low: int, high: int, step: int) -> int:
    """getBits."""
    if step == 1:
        return ~(-1 << (high + 1)) & (-1 << low)
    bits = 0
    for i in range(low, high + 1, step):
        bits |= 1 << i
    return bits


def _all(bounds: Bounds) -> int:
    return _bits(bounds.low, bounds.high, 1) | STAR_BIT


def _must_parse_int(expr: str) -> int:
    try:
        if not re.fullmatch(r"[+-]?[0-9]+", expr):
            raise ValueError
        number = int(expr)
    except ValueError:
        raise ScheduleError(
            f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax'
        ) from None
    if number < 0:
        raise ScheduleError(f"negative number ({number}) not allowed: {expr}")
    return number


def _int_or_name(expr: str, names: dict[str, int] | None) -> int:
    if names is not None and expr.lower() in names:
        return names[expr.lower()]
    return _must_parse_int(expr)


def _range(expr: str, bounds: Bounds) -> int:
    """getRange."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    extra = 0
    if low_and_high[0] in ("*", "?"):
        start, end, extra = bounds.low, bounds.high, STAR_BIT
    else:
        start = _int_or_name(low_and_high[0], bounds.names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], bounds.names)
        else:
            raise ScheduleError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _must_parse_int(range_and_step[1])
        if single:  # "N/step" means "N-max/step"
            end = bounds.high
        if step > 1:
            extra = 0
    else:
        raise ScheduleError(f"too many slashes: {expr}")
    if start < bounds.low:
        raise ScheduleError(f"beginning of range ({start}) below minimum ({bounds.low}): {expr}")
    if end > bounds.high:
        raise ScheduleError(f"end of range ({end}) above maximum ({bounds.high}): {expr}")
    if start > end:
        raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ScheduleError(f"step of range should be a positive number: {expr}")
    return _bits(start, end, step) | extra


def _field(field: str, bounds: Bounds) -> int:
    bits = 0
    for expr in (part for part in field.split(",") if part):
        bits |= _range(expr, bounds)
    return bits


def parse_duration(text: str) -> float:
    """time.ParseDuration, in seconds (robfig/cron's `@every` argument)."""
    try:
        return durations.parse_go_duration(text)
    except durations.DurationError as err:
        raise ScheduleError(f"failed to parse duration {text}: {err}") from None


@dataclass(frozen=True)
class SpecSchedule:
    """A parsed cron schedule (robfig's SpecSchedule)."""

    second: int
    minute: int
    hour: int
    dom: int
    month: int
    dow: int
    location: tzinfo

    def next(self, when: float) -> float | None:
        """The first activation strictly after `when` (seconds since the epoch), or None when
        there is none within five years (robfig's zero time)."""
        return _next(self, when)


@dataclass(frozen=True)
class EverySchedule:
    """`@every <duration>` (ConstantDelaySchedule): activations `delay` apart, on whole seconds."""

    delay: float

    def next(self, when: float) -> float | None:
        return math.floor(when) + self.delay


Schedule = SpecSchedule | EverySchedule


def _location(name: str) -> tzinfo:
    if name in ("", "UTC"):
        return UTC
    if name == "Local":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(f"provided bad location {name}: unknown time zone {name}") from None


def load_location(name: str) -> tzinfo:
    """time.LoadLocation: "" and "UTC" are UTC; an IANA name; anything else an error saying so."""
    if name in ("", "UTC"):
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(f"unknown time zone {name}") from None


def parse_standard(spec: str) -> Schedule:
    """cron.ParseStandard."""
    if not spec:
        raise ScheduleError("empty spec string")
    location: tzinfo = UTC
    if spec.startswith(("TZ=", "CRON_TZ=")):
        space = spec.find(" ")
        equals = spec.find("=")
        name = spec[equals + 1 : space] if space >= 0 else spec[equals + 1 :]
        location = _location(name)
        spec = spec[space:].strip() if space >= 0 else ""
    if spec.startswith("@"):
        return _descriptor(spec, location)
    fields = spec.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    return SpecSchedule(
        second=1 << 0,
        minute=_field(fields[0], MINUTES),
        hour=_field(fields[1], HOURS),
        dom=_field(fields[2], DOM),
        month=_field(fields[3], MONTHS),
        dow=_field(fields[4], DOW),
        location=location,
    )


def _descriptor(spec: str, location: tzinfo) -> Schedule:
    once = 1 << 0
    if spec in ("@yearly", "@annually"):
        return SpecSchedule(once, once, once, 1 << 1, 1 << 1, _all(DOW), location)
    if spec == "@monthly":
        return SpecSchedule(once, once, once, 1 << 1, _all(MONTHS), _all(DOW), location)
    if spec == "@weekly":
        return SpecSchedule(once, once, once, _all(DOM), _all(MONTHS), 1 << 0, location)
    if spec in ("@daily", "@midnight"):
        return SpecSchedule(once, once, once, _all(DOM), _all(MONTHS), _all(DOW), location)
    if spec == "@hourly":
        return SpecSchedule(once, once, _all(HOURS), _all(DOM), _all(MONTHS), _all(DOW), location)
    if spec.startswith("@every "):
        delay = parse_duration(spec[len("@every ") :])
        delay = max(delay, 1.0)
        return EverySchedule(float(math.floor(delay)))
    raise ScheduleError(f"unrecognized descriptor: {spec}")


def _day_matches(schedule: SpecSchedule, t: datetime) -> bool:
    dom_match = (1 << t.day) & schedule.dom > 0
    dow_match = (1 << (t.isoweekday() % 7)) & schedule.dow > 0
    if schedule.dom & STAR_BIT or schedule.dow & STAR_BIT:
        return dom_match and dow_match
    return dom_match or dow_match


def _at(location: tzinfo, year: int, month: int, day: int, *clock: int) -> datetime:
    """time.Date in `location` (a wall time in a DST gap or overlap takes the earlier offset)."""
    hour, minute, second = (*clock, 0, 0, 0)[:3]
    wall = datetime(year, month, day, hour, minute, second, tzinfo=location)
    return wall.astimezone(UTC).astimezone(location)


def _plus(t: datetime, seconds: float) -> datetime:
    """t.Add: absolute time."""
    return (t.astimezone(UTC) + timedelta(seconds=seconds)).astimezone(t.tzinfo)


def _next_month(t: datetime) -> datetime:
    year, month = (t.year + 1, 1) if t.month == 12 else (t.year, t.month + 1)
    return _at(t.tzinfo or UTC, year, month, t.day, t.hour, t.minute, t.second)


def _next_day(t: datetime) -> datetime:
    """t.AddDate(0, 0, 1): the same wall time the next day."""
    following = t.replace(tzinfo=None) + timedelta(days=1)
    return _at(t.tzinfo or UTC, following.year, following.month, following.day, t.hour, t.minute, t.second)


def _next(schedule: SpecSchedule, when: float) -> float | None:
    """SpecSchedule.Next."""
    location = schedule.location
    t = datetime.fromtimestamp(math.floor(when) + 1, tz=UTC).astimezone(location)
    added = False
    year_limit = t.year + 5
    while True:  # WRAP
        if t.year > year_limit:
            return None
        wrapped = False
        while (1 << t.month) & schedule.month == 0:
            if not added:
                added = True
                t = _at(location, t.year, t.month, 1)
            t = _next_month(t)
            if t.month == 1:
                wrapped = True
                break
        if wrapped:
            continue
        while not _day_matches(schedule, t):
            if not added:
                added = True
                t = _at(location, t.year, t.month, t.day)
            t = _next_day(t)
            if t.hour != 0:  # the hour is no longer midnight across a DST change
                t = _plus(t, (24 - t.hour) * 3600.0) if t.hour > 12 else _plus(t, -t.hour * 3600.0)
            if t.day == 1:
                wrapped = True
                break
        if wrapped:
            continue
        while (1 << t.hour) & schedule.hour == 0:
            if not added:
                added = True
                t = _at(location, t.year, t.month, t.day, t.hour)
            t = _plus(t, 3600.0)
            if t.hour == 0:
                wrapped = True
                break
        if wrapped:
            continue
        while (1 << t.minute) & schedule.minute == 0:
            if not added:
                added = True
                t = _truncate(t, 60)
            t = _plus(t, 60.0)
            if t.minute == 0:
                wrapped = True
                break
        if wrapped:
            continue
        while (1 << t.second) & schedule.second == 0:
            if not added:
                added = True
                t = _truncate(t, 1)
            t = _plus(t, 1.0)
            if t.second == 0:
                wrapped = True
                break
        if wrapped:
            continue
        return t.timestamp()


def _truncate(t: datetime, seconds: int) -> datetime:
    """t.Truncate on absolute time."""
    stamp = t.timestamp()
    return datetime.fromtimestamp(stamp - stamp % seconds, tz=UTC).astimezone(t.tzinfo)
