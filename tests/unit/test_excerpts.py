"""Locating excerpts (chunklab.text.excerpts), sampling a generator's passages and
reading its replies (services.evaluator.questions.generation, question_prompt): exact
values on hand-built texts."""

from __future__ import annotations

import pytest

from chunklab.text.excerpts import SIMILARITY_THRESHOLD, Located, locate, similarity, snap
from services.evaluator.questions.generation import PASSAGE_CHARS, allocate, sample_passages
from services.evaluator.questions.question_prompt import Draft, UnusableReply, parse_reply

TEXT = "The council approved the ferry budget on Monday. Storm warnings closed the harbour for two days."


def test_an_exact_excerpt_is_its_first_occurrence_or_the_one_in_the_window():
    assert locate(TEXT, "the ferry budget") == Located(21, 37, "the ferry budget", 1.0, True)
    twice = "alpha beta. alpha beta."
    assert locate(twice, "alpha beta").start == 0
    assert locate(twice, "alpha beta", window=(10, 23)).start == 12


def test_a_paraphrase_snaps_to_whole_words_of_the_text():
    found = locate(TEXT, "storm warning closed the harbor")
    assert (found.start, found.end, found.span) == (49, 82, "Storm warnings closed the harbour")
    assert TEXT[found.start : found.end] == found.span and not found.exact and found.located
    # "storm warning closed the harbor" (31) against "Storm warnings closed the harbour" (33): S/s 2,
    # the missing "s" 1, the missing "u" 1: 4 of 64.
    assert found.similarity == pytest.approx(1 - 4 / 64)


def test_a_span_is_refined_to_the_word_edges_that_match_best():
    # The aligned window (41 characters, the excerpt's length) ends in " on"; without it the span
    # differs by T/t (2) and "has " (4): 6 of 41 + 37.
    found = locate(TEXT, "the council has approved the ferry budget")
    assert (found.start, found.end, found.span) == (0, 37, "The council approved the ferry budget")
    assert found.similarity == pytest.approx(1 - 6 / 78)


def test_an_absent_excerpt_gets_its_closest_span_below_the_threshold():
    found = locate(TEXT, "completely unrelated sentence about cats")
    assert not found.located and found.similarity < SIMILARITY_THRESHOLD
    assert TEXT[found.start : found.end] == found.span
    assert locate(TEXT, "   ") is None and locate("", "x") is None


def test_snapping_widens_cut_words_and_trims_spaces():
    assert snap("one two three", 5, 9) == (4, 13)  # "wo t" -> "two three"
    assert snap("one two three", 3, 8) == (4, 7)  # " two " -> "two"
    assert similarity("a  b\n c", "a b c") == 1.0


def test_passages_cover_every_part_of_each_document_the_same_way_for_the_same_seed():
    long = " ".join(f"w{i:04d}" for i in range(6000))  # 35,999 characters: ninths of 4,000
    short = "short text of one passage"
    passages = sample_passages([("a", long), ("b", short)], 9, seed=5)
    assert allocate([len(long), len(short)], 9) == [9, 0]
    assert [p.number for p in passages] == list(range(1, 10)) and {p.document_id for p in passages} == {"a"}
    for i, p in enumerate(passages):
        lo, hi = i * len(long) // 9, (i + 1) * len(long) // 9
        assert lo - 5 <= p.start and p.end <= hi + 5  # inside its ninth of the text, widened to whole words
        assert PASSAGE_CHARS - 12 <= p.end - p.start <= PASSAGE_CHARS + 10 and long[p.start] != " "
    assert sample_passages([("a", long), ("b", short)], 9, seed=5) == passages
    assert sample_passages([("a", long), ("b", short)], 9, seed=6) != passages
    both = sample_passages([("a", long), ("b", long[:4000])], 10, seed=1)
    assert [p.document_id for p in both] == ["a"] * 9 + ["b"]
    tiled = sample_passages([("a", long[:3000])], 3, seed=1)  # strata shorter than a passage are asked whole
    # Words are 6 characters with their space: offsets 1000 and 2000 cut w0166 (996..1001) and
    # w0333 (1998..2003), which both neighbours take whole; the trailing space is trimmed.
    assert [(p.start, p.end) for p in tiled] == [(0, 1001), (996, 2003), (1998, 2999)]


def test_allocation_follows_the_lengths_by_largest_remainders():
    assert allocate([100, 100, 100], 4) == [2, 1, 1]
    assert allocate([300, 100], 3) == [2, 1]
    assert allocate([0, 0], 3) == [0, 0]


@pytest.mark.parametrize(
    "text, draft",
    [
        (
            '{"question": "Why?", "answer": "Because", "excerpts": ["It rained."]}',
            Draft("Why?", "Because", ["It rained."]),
        ),
        ('```json\n{"question": "Why?", "excerpts": "It rained."}\n```', Draft("Why?", "", ["It rained."])),
        (
            'Here you go: {"text": "Why?", "expected_answer": "B", "references": [{"content": "It rained."}]} Enjoy!',
            Draft("Why?", "B", ["It rained."]),
        ),
        ('[{"question": "Why?", "answer": "B", "excerpts": []}]', Draft("Why?", "B", [])),
    ],
)
def test_replies_are_read_defensively(text, draft):
    assert parse_reply(text) == draft


@pytest.mark.parametrize(
    "text, problem",
    [
        ("No JSON at all.", "not JSON (unreadable at character 0)"),
        ('{"answer": "B"}', "no question in it (keys ['answer'])"),
        ('"just a string"', "a JSON str, not an object"),
    ],
)
def test_unusable_replies_say_what_is_wrong(text, problem):
    with pytest.raises(
        UnusableReply, match=problem.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[").replace("]", r"\]")
    ):
        parse_reply(text)


def test_a_question_longer_than_a_question_may_be_is_unusable():
    with pytest.raises(UnusableReply, match="a question of 8,001 characters, over the 8,000 a question may have"):
        parse_reply('{"question": "%s", "excerpts": ["a"]}' % ("x" * 8001))
