"""Offsets to pages and how pages read, for paged documents (PDF)."""

from chunklab.text.pages import page_at, page_label, page_span

STARTS = [0, 100, 250]  # page 1 is [0, 100), page 2 [100, 250), page 3 from 250


def test_an_offset_is_on_the_page_whose_start_it_has_passed():
    assert [page_at(STARTS, o) for o in (0, 99, 100, 249, 250, 10_000)] == [1, 1, 2, 2, 3, 3]


def test_a_range_ending_at_a_page_start_does_not_touch_that_page():
    assert page_span(STARTS, 50, 100) == (1, 1)
    assert page_span(STARTS, 50, 101) == (1, 2)
    assert page_span(STARTS, 120, 120) == (2, 2)


def test_documents_without_pages_have_page_zero_and_no_label():
    assert page_at([], 5) == 0
    assert page_span([], 0, 10) == (0, 0)
    assert page_label(0, 0) == ""


def test_labels_read_as_in_a_citation():
    assert page_label(12) == "p. 12"
    assert page_label(12, 12) == "p. 12"
    assert page_label(12, 13) == "pp. 12\u201313"
