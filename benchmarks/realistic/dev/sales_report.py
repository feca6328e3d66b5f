"""A sales report from CSV text: totals per region, best sellers and a month-over-month change."""
# entry: build_report("month,region,product,units,price\n2024-01,north,tea,10,3.5\n2024-01,south,coffee,4,9.0\n2024-01,north,coffee,2,9.0\n2024-02,north,tea,7,3.5\n2024-02,south,tea,12,3.5\n2024-02,south,coffee,6,9.0\n2024-03,north,cocoa,5,4.0\n2024-03,north,tea,9,3.5")

from collections import Counter
from itertools import groupby
from operator import itemgetter


def parse_csv(text):
    header, *rows = text.strip().split("\n")
    names = header.split(",")
    records = []
    for row in rows:
        record = dict(zip(names, row.split(","), strict=True))
        record["units"] = int(record["units"])
        record["price"] = float(record["price"])
        record["revenue"] = record["units"] * record["price"]
        records.append(record)
    return records


def totals_by(records, key):
    ordered = sorted(records, key=itemgetter(key))
    return {k: round(sum(r["revenue"] for r in group), 2) for k, group in groupby(ordered, key=itemgetter(key))}


def best_sellers(records, n):
    units = Counter()
    for record in records:
        units[record["product"]] += record["units"]
    return units.most_common(n)


def month_changes(monthly):
    months = sorted(monthly)
    changes = {}
    for previous, current in zip(months, months[1:], strict=False):
        change = (monthly[current] - monthly[previous]) / monthly[previous]
        changes[current] = f"{change:+.1%}"
    return changes


def build_report(text):
    records = parse_csv(text)
    monthly = totals_by(records, "month")
    report = {
        "regions": totals_by(records, "region"),
        "best": best_sellers(records, 2),
        "monthly": monthly,
        "changes": month_changes(monthly),
    }
    for month, change in report["changes"].items():
        print(f"{month}: {change}")
    return report
