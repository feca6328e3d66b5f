"""Weekly cron-style schedules: parse 'minute hour weekday name' lines, then list each job's next runs and a merged agenda."""
# entry: upcoming(["*/20 9-10 mon-fri backup", "0,30 12 * lunch-report", "15 */8 sun rotate-logs", "70 1 * broken", "5 4 sat-mon cleanup", "0 8 1-5"], [1, 10, 0], 3)
# kind: parser

import heapq
import re
from collections import namedtuple
from itertools import count, islice, product

DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("weekday", 0, 6))
PART_RE = re.compile(r"^(\*|\d+|[a-z]{3})(?:-(\d+|[a-z]{3}))?(?:/(\d+))?$")

Job = namedtuple("Job", "name minutes hours weekdays")


class ScheduleError(Exception):
    pass


def parse_value(text, name, low, high):
    if text.isdigit():
        value = int(text)
    elif name == "weekday" and text in DAY_NAMES:
        value = DAY_NAMES.index(text)
    else:
        raise ScheduleError(f"{text!r} is not a {name}")
    if not low <= value <= high:
        raise ScheduleError(f"{name} {value} is outside {low}-{high}")
    return value


def parse_field(spec, name, low, high):
    values = set()
    for part in spec.split(","):
        match = PART_RE.match(part)
        if match is None:
            raise ScheduleError(f"cannot read {name} {part!r}")
        start, end, step = match.groups()
        if start == "*":
            first, last = low, high
        else:
            first = parse_value(start, name, low, high)
            last = parse_value(end, name, low, high) if end else (high if step else first)
        if last < first:
            raise ScheduleError(f"empty {name} range {part}")
        values.update(range(first, last + 1, int(step or 1)))
    return sorted(values)


def parse_line(line):
    *specs, name = line.split()
    if len(specs) != len(FIELDS):
        raise ScheduleError(f"expected {len(FIELDS)} fields before the name, got {len(specs)}")
    minutes, hours, weekdays = (parse_field(spec, *field) for spec, field in zip(specs, FIELDS, strict=True))
    return Job(name, minutes, hours, weekdays)


def firing_times(job, start):
    """Every (week, weekday, hour, minute) at or after start, week 0 being the current one."""
    for week in count():
        for slot in product(job.weekdays, job.hours, job.minutes):
            if week == 0 and list(slot) < start:
                continue
            yield (week, *slot)


def labelled(times, name):
    for week, day, hour, minute in times:
        prefix = "next " if week else ""
        yield (week, day, hour, minute), f"{prefix}{DAY_NAMES[day]} {hour:02d}:{minute:02d} {name}"


def upcoming(lines, start, per_job):
    jobs, errors = [], []
    for number, line in enumerate(lines, 1):
        try:
            jobs.append(parse_line(line))
        except ScheduleError as exc:
            errors.append(f"line {number}: {exc}")
    runs = {}
    for job in jobs:
        runs[job.name] = [text for _, text in islice(labelled(firing_times(job, start), job.name), per_job)]
    streams = [labelled(firing_times(job, start), job.name) for job in jobs]
    agenda = [text for _, text in islice(heapq.merge(*streams), 2 * per_job)]
    for error in errors:
        print(error)
    return {"runs": runs, "agenda": agenda}
