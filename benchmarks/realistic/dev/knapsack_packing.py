"""Packs a hiking backpack: a recursive 0/1 knapsack, cached by a decorator factory, chooses gear within a weight limit."""
# entry: plan_trip([["tent", 4, 9], ["stove", 2, 5], ["camera", 1, 3], ["book", 1, 1], ["water", 3, 8], ["jacket", 2, 6]], [6, 9])

CACHE_STATS = {}


def cached(label):
    def decorate(fn):
        table = {}
        CACHE_STATS[label] = {"hits": 0, "misses": 0}

        def wrapper(gear, index, room):
            key = (gear, index, room)
            stats = CACHE_STATS[label]
            if key in table:
                stats["hits"] += 1
            else:
                stats["misses"] += 1
                table[key] = fn(gear, index, room)
            return table[key]

        return wrapper

    return decorate


@cached("best")
def best_value(gear, index, room):
    """The largest value that items index.. of gear reach within room kilograms."""
    if index == len(gear) or room == 0:
        return 0
    _, weight, value = gear[index]
    skip = best_value(gear, index + 1, room)
    if weight > room:
        return skip
    return max(skip, value + best_value(gear, index + 1, room - weight))


def choose(gear, limit):
    picked, room = [], limit
    for index, (name, weight, _) in enumerate(gear):
        if weight <= room and best_value(gear, index, room) != best_value(gear, index + 1, room):
            picked.append(name)
            room -= weight
    return picked, limit - room


def plan_trip(items, limits):
    gear = tuple(tuple(item) for item in items)
    plans = {}
    for limit in limits:
        picked, weight = choose(gear, limit)
        plans[limit] = {"items": picked, "weight": weight, "value": best_value(gear, 0, limit)}
        print(f"{limit} kg: {', '.join(picked)} ({weight} kg)")
    plans["cache"] = dict(CACHE_STATS["best"])
    return plans
