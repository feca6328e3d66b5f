"""Summary statistics for weather-station readings stored as namedtuples."""
# entry: summarize([("oslo", 3.5), ("oslo", -1.0), ("lima", 18.25), ("oslo", 2.0), ("lima", 21.0), ("cairo", 30.5), ("cairo", 27.75), ("lima", 16.5)])
import math
from collections import namedtuple

Reading = namedtuple("Reading", ["station", "celsius"])
Summary = namedtuple("Summary", ["station", "count", "mean", "stdev", "max_f"])


def to_fahrenheit(celsius):
    return celsius * 9 / 5 + 32


def mean_and_stdev(values):
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, 0.0
    variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    return mean, math.sqrt(variance)


def summarize(raw):
    readings = [Reading(*item) for item in raw]
    by_station = {}
    for reading in readings:
        by_station.setdefault(reading.station, []).append(reading.celsius)
    summaries = []
    for station in sorted(by_station):
        values = by_station[station]
        mean, stdev = mean_and_stdev(values)
        hottest = to_fahrenheit(max(values))
        summaries.append(Summary(station, len(values), round(mean, 2), round(stdev, 3), hottest))
    for s in summaries:
        print(f"{s.station:<6} n={s.count} mean={s.mean:6.2f} sd={s.stdev:.3f} max={s.max_f:.1f}F")
    return summaries
