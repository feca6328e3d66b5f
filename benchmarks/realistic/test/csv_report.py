"""A sales report parsed from CSV text held in a string, grouped by region with a generator pipeline."""
# entry: build_report(None)
import csv
import io
from collections import defaultdict, Counter

SALES_CSV = """region,rep,product,units,unit_price
north,ada,widget,12,2.50
south,bo,gadget,3,19.99
north,cy,gadget,5,19.99
east,dee,widget,,2.50
south,bo,widget,40,2.25
north,ada,gizmo,2,105.00
east,dee,gadget,7,18.50
west,eve,widget,abc,2.50
"""


def read_rows(text):
    reader = csv.DictReader(io.StringIO(text))
    for row in reader:
        yield row


def clean(rows, rejected):
    for number, row in enumerate(rows, start=2):
        units = row["units"].strip()
        if not units.isdigit():
            rejected.append((number, row["rep"], units or "<empty>"))
            continue
        row["units"] = int(units)
        row["unit_price"] = float(row["unit_price"])
        yield row


def with_revenue(rows):
    for row in rows:
        row["revenue"] = round(row["units"] * row["unit_price"], 2)
        yield row


def rep_leaderboard(rows, top):
    best = {}
    for row in rows:
        rep = row["rep"]
        best[rep] = best.get(rep, 0) + row["revenue"]
    ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))
    return [f"{place}. {rep} {amount:.2f}" for place, (rep, amount) in enumerate(ranked[:top], start=1)]


def build_report(text=None):
    rejected = []
    totals = defaultdict(float)
    products = Counter()
    kept = []
    for row in with_revenue(clean(read_rows(text or SALES_CSV), rejected)):
        kept.append(row)
        totals[row["region"]] += row["revenue"]
        products[row["product"]] += row["units"]
    lines = []
    for region, revenue in sorted(totals.items(), key=lambda kv: -kv[1]):
        lines.append(f"{region:<6}{revenue:>10.2f}")
    top_product, top_units = products.most_common(1)[0]
    lines.append(f"top product: {top_product} ({top_units} units)")
    lines.extend(rep_leaderboard(kept, 3))
    for number, rep, value in rejected:
        lines.append(f"line {number} ({rep}): bad units {value}")
    print("\n".join(lines))
    return dict(totals), rejected
