"""Ranked-choice vote counting: eliminate the weakest candidate round by round until one has a majority."""
# entry: instant_runoff([["ann", "bob", "cy"], ["bob", "ann"], ["cy", "bob", "ann"], ["ann", "cy"], ["bob", "cy"], ["cy", "ann"], ["dee", "cy", "bob"]])

from collections import Counter


def first_choices(ballots, eliminated):
    counts = Counter()
    for ballot in ballots:
        for choice in ballot:
            if choice not in eliminated:
                counts[choice] += 1
                break
    return counts


def weakest(counts, candidates):
    lowest = min(counts.get(c, 0) for c in candidates)
    return sorted(c for c in candidates if counts.get(c, 0) == lowest)[0]


def instant_runoff(ballots):
    candidates = {choice for ballot in ballots for choice in ballot}
    eliminated = set()
    rounds = 0
    while True:
        rounds += 1
        counts = first_choices(ballots, eliminated)
        active = sum(counts.values())
        leader, votes = counts.most_common(1)[0]
        print(f"round {rounds}: {dict(sorted(counts.items()))}")
        if votes * 2 > active:
            break
        loser = weakest(counts, candidates - eliminated)
        eliminated.add(loser)
        print(f"  eliminate {loser}")
    return {"winner": leader, "rounds": rounds, "votes": votes, "of": active}
