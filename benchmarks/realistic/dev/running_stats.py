"""Streaming statistics over sensor readings built from a chain of generators."""
# entry: summarize(["12.5", "13.0", "bad", "", "11.75", "99.0", "12.25", "12.0"])

import math


def parse_readings(raw):
    for item in raw:
        item = item.strip()
        if not item:
            continue
        try:
            yield float(item)
        except ValueError:
            print(f"skipping {item!r}")


def drop_outliers(values, limit):
    for value in values:
        if value <= limit:
            yield value


def running_mean(values):
    total = 0.0
    for count, value in enumerate(values, start=1):
        total += value
        yield count, total / count


def summarize(raw):
    clean = list(drop_outliers(parse_readings(raw), 50.0))
    means = [round(mean, 3) for _, mean in running_mean(clean)]
    mean = sum(clean) / len(clean)
    variance = sum((x - mean) ** 2 for x in clean) / len(clean)
    return {
        "count": len(clean),
        "mean": round(mean, 3),
        "stdev": round(math.sqrt(variance), 3),
        "running": means,
    }
