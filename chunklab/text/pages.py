"""Pages of paged documents (PDF): which page a character offset is on, and
how a range of pages reads ("p. 12", "pp. 12–13").

A paged document's tree carries `page_starts`: the canonical-text offset at
which each page begins. Everything that shows a page (the chunker stamping
chunks, the UI, the reports) asks this module, so the rule is one edit.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence


def page_at(page_starts: Sequence[int], offset: int) -> int:
    """The page, from 1, holding the character at `offset`; 0 without pages."""
    if not page_starts:
        return 0
    return max(1, bisect_right(page_starts, offset))


def page_span(page_starts: Sequence[int], start: int, end: int) -> tuple[int, int]:
    """(first, last) page that [start, end) touches; (0, 0) without pages."""
    if not page_starts:
        return 0, 0
    return page_at(page_starts, start), page_at(page_starts, max(start, end - 1))


def page_label(first: int, last: int = 0) -> str:
    """ "p. 12", "pp. 12–13", or "" when there are no pages."""
    if first <= 0:
        return ""
    if last <= first:
        return f"p. {first}"
    return f"pp. {first}\u2013{last}"


# The metadata key under which a paged format's reader records its page count.
PAGE_COUNT_KEY = "pages"
