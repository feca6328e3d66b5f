"""Drafts from seen text (engine/draft.py): where `propose` looks, and what it offers."""

from __future__ import annotations

import pytest

from model_backend.engine.draft import DRAFT_TOKENS, pack, propose
from model_backend.engine.neural import DRAFT_ENV, default_draft_tokens


def test_a_draft_is_what_followed_the_latest_earlier_occurrence_of_the_last_tokens() -> None:
    context = [9, 1, 2, 3, 4, 5, 1, 2, 3, 7, 8, 1, 2, 3]
    assert propose(context, 0, [], k=3) == [7, 8, 1]


def test_a_draft_never_reaches_back_before_start() -> None:
    context = [1, 2, 3, 4, 5, 6, 1, 2, 3]
    assert propose(context, 0, [], k=2) == [4, 5]
    assert propose(context, 2, [], k=2) == []  # [2, 3] before index 2 is out of reach


def test_the_context_comes_before_the_references_and_the_references_in_order() -> None:
    context = [5, 6, 1, 2, 9, 1, 2]
    assert propose(context, 0, [pack([1, 2, 7])], k=4) == [9, 1, 2]
    assert propose([5, 1, 2], 0, [pack([0, 1, 2, 7, 7]), pack([1, 2, 8])], k=4) == [7, 7]


def test_three_matching_tokens_win_over_two() -> None:
    context = [4, 2, 3, 8, 1, 2, 3, 9, 1, 2, 3]
    # [1, 2, 3] last occurred before 9; [2, 3] alone would also match before 8, further back.
    assert propose(context, 0, [], k=1) == [9]
    assert propose([7, 2, 3], 0, [pack([1, 2, 3, 6]), pack([7, 2, 3, 5])], k=1) == [5]


def test_ids_match_whole_and_never_across_the_packing() -> None:
    big = 0x01020304
    # Packed little-endian, [big, big] holds the bytes of other ids at offsets that are not whole ids.
    context = [big, big, 3, big, big]
    assert propose(context, 0, [], k=2) == [3, big]
    assert propose([0x02030401, 0x03040102], 0, [pack([big, big, 5])], k=2) == []


def test_no_draft_without_a_match_room_or_tokens() -> None:
    assert propose([1, 2, 3], 0, [pack([4, 5, 6])], k=4) == []
    assert propose([1, 2], 0, [pack([1, 2, 6])], k=0) == []
    assert propose([1, 2, 3], 0, [pack([1, 2, 3])], k=4) == []  # nothing follows the match


@pytest.mark.parametrize(("value", "tokens"), [(None, DRAFT_TOKENS), ("0", 0), ("4", 4), ("-2", DRAFT_TOKENS),
                                                ("lots", DRAFT_TOKENS)])
def test_ndb_draft_sets_the_longest_draft_and_a_bad_value_keeps_the_default(
        monkeypatch: pytest.MonkeyPatch, value: str | None, tokens: int) -> None:
    if value is None:
        monkeypatch.delenv(DRAFT_ENV, raising=False)
    else:
        monkeypatch.setenv(DRAFT_ENV, value)
    assert default_draft_tokens() == tokens
