"""Which of a web page's blocks are its main text: trafilatura's choice, applied to our own blocks (ADR 0102).

trafilatura (Apache-2.0; offline, given the parsed page) scores a page's parts by text and link
density and its own rules for furniture (related links, share bars, bylines, "read more"
teasers, comment forms, language lists, category blocks). What it keeps is its main text, in
reading order. ChunkLab renders the page's blocks itself (headings, lists, tables, code, quotes:
html_render), then keeps a block only where its words are found, in order, in trafilatura's
main text: a block matches a run of whole lines of it from where the last kept block ended, or,
when the page's markup and trafilatura's lines differ, any run of its words close after that
point. So the structure is the page's and the selection is trafilatura's.

Kept whatever trafilatura says: the page's level-1 heading when it is the page's title
(trafilatura moves the title to its metadata), and everything on a page with too little text for
a choice to be worth making (an HTML export, a table on its own): below MIN_WORDS words of
content of which links hold less than LINK_SHARE, or when trafilatura finds no main text at all;
and everything on a page too long to choose from in bounded time (MAX_CHOOSING_CHARS).
"""

from __future__ import annotations

import copy
import logging
import re
from collections import Counter

from services.ingest.readers.markdown import Writer

# Below this many words, a page's content is kept whole: trafilatura's scores need more text than
# this (its own floor is 250 characters) and a page so short holds little furniture.
MIN_WORDS = 150
# How far past the last kept block a block's words may start in trafilatura's text when they do not
# line up with its lines (its line breaks differ from the page's blocks): a few short lines.
NEAR_CHARS = 300

# A block this long found far ahead is the block itself (what lay between was not rendered alike);
# a shorter one is as likely a repeat of its words further down the page.
LONG_WORDS = 8
# A block of fewer words found inside one of trafilatura's lines is kept, but the search goes on
# from where it was: a heading "Training" found in "...group training" two lines down skipped
# the paragraph between.
SHORT_WORDS = 3
# The share of a block's words that must come next in the main text when its words do not line up
# with trafilatura's (a paragraph whose tail it cut).
COVERED = 0.8
# Links carry at least this share of a short page's words when it is a web page with furniture (menus,
# share bars, related posts) rather than an HTML export or a table on its own.
LINK_SHARE = 0.1
# Above this many characters of content a page is read whole: trafilatura's time grows faster than
# the page (8.5 MB of source code took it 160 s), and a page so long is a book, a manual or a
# listing rather than an article amid furniture. The boilerplate rule still applies (ADR 0168).
MAX_CHOOSING_CHARS = 500_000
# Below this share of trafilatura's main-text words in the blocks written, the page is read whole:
# its blocks and trafilatura's lines did not line up (a page's whole text as one line of
# trafilatura's), and keeping what matched would lose most of the article.
MIN_WRITTEN_SHARE = 0.5

_WORD = re.compile(r"\w+")
log = logging.getLogger(__name__)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def too_long(content) -> bool:
    """Whether the content is past what trafilatura is asked to choose from (MAX_CHOOSING_CHARS)."""
    return len(content.text_content()) > MAX_CHOOSING_CHARS


def worth_choosing(content) -> bool:
    """Whether the content is long enough, or link-heavy enough, to hold furniture worth removing."""
    count = len(words(content.text_content()))
    linked = sum(len(words(link.text_content())) for link in content.iter("a"))
    return count >= MIN_WORDS or linked >= LINK_SHARE * count > 0


def main_text(root) -> str | None:
    """trafilatura's main text of the page (its tables, no comments), one line per block, as
    lower-case words; None when it finds none. root is left as it was (trafilatura edits a copy)."""
    import trafilatura  # imported on first use: it loads its date and language rules

    try:
        text = trafilatura.extract(
            copy.deepcopy(root),
            include_comments=False,
            include_tables=True,
            with_metadata=False,
            deduplicate=False,
        )
    except Exception:  # a page trafilatura cannot score is read whole, as before it
        log.warning("trafilatura could not score the page; its content is read whole", exc_info=True)
        return None
    lines = [" ".join(words(line)) for line in (text or "").splitlines()]
    kept = "\n".join(line for line in lines if line)
    return kept or None


class MainTextWriter(Writer):
    """A Writer that writes only the blocks found in the main text, in order (see the module)."""

    def __init__(self, kept: str, title: str) -> None:
        super().__init__()
        self.kept = f"\n{kept}\n"
        # The same text with its line breaks as spaces (the same offsets): a block's words are
        # searched in it as one string, and the line breaks around a find are read in `kept`.
        self.flat = self.kept.replace("\n", " ")
        self.cursor = 0  # where the next block is looked for: the start of a line
        # Where the last block found ended: past the cursor when it was part of a line, so that
        # the blocks after it are looked for near it, not near the start of its (long) line.
        self.near = 0
        self.title = words(title)
        self.dropped = 0
        self._in_list = False

    def found(self, text: str) -> bool:
        found = words(text)
        if not found:
            return False
        run = " ".join(found)
        # A run of whole lines; a short line far ahead is a repeat (a menu's "Compare editions"),
        # not this block, so it is looked for near the cursor only.
        near = self.cursor + NEAR_CHARS + len(run) + 1  # where a find starting NEAR_CHARS past the cursor ends
        start = self._find(run, self.cursor, None if len(found) >= LONG_WORDS else near, whole_lines=True)
        if start is not None:
            self.cursor = self.near = start + len(run)
            return True
        # Part of a line (trafilatura joined blocks the page keeps apart), near where the last block
        # found ended: the line stays open to the blocks after this one.
        base = max(self.cursor, self.near)
        start = self._find(run, base, base + NEAR_CHARS + len(run) + 1, whole_lines=False)
        if start is not None:
            if len(found) >= SHORT_WORDS:  # a word or two inside a later line moves nothing on
                self.cursor = self.kept.rindex("\n", 0, start + 1)
                self.near = start + len(run)
            return True
        if self._mostly_near(found):
            return True
        self.dropped += 1
        return False

    def _find(self, run: str, cursor: int, end: int | None, whole_lines: bool) -> int | None:
        """Where the words `run` (joined by spaces) first start at or after the cursor, between
        word boundaries (whole_lines: between line breaks), ending before `end`; None when nowhere.
        str.find, not a regular expression per block: a page of thousands of blocks was read in
        tens of seconds, each search compiled and run to the end of the text."""
        bounded = f" {run} "
        at = self.flat.find(bounded, max(cursor - 1, 0), end)
        while at != -1:
            if not whole_lines or (self.kept[at] == "\n" and self.kept[at + len(run) + 1] == "\n"):
                return at + 1
            at = self.flat.find(bounded, at + 1, end)
        return None

    def written_share(self) -> float:
        """The share of the main text's words that the blocks written hold (1.0 for no main text)."""
        main = len(self.kept.split())
        return len(words(self.text())) / main if main else 1.0

    def _mostly_near(self, found: list[str]) -> bool:
        """Whether most of the block's words come next in the main text, a few differing (trafilatura
        cut a paragraph's tail, or left out an inline part of it). The cursor stays: the words may
        be spread over lines that later blocks match exactly (a caption repeating a sentence)."""
        base = max(self.cursor, self.near)
        window = self.kept[base : base + NEAR_CHARS + 2 * sum(len(w) + 1 for w in found)]
        ahead = Counter(window.split())
        return sum((Counter(found) & ahead).values()) >= COVERED * len(found)

    def _is_title(self, level: int, title: str) -> bool:
        found = " ".join(words(title))
        return level == 1 and bool(found) and f" {found} " in f" {' '.join(self.title)} "

    def heading(self, level: int, title: str) -> None:
        if self._is_title(level, title) or self.found(title):
            super().heading(level, title)
            self._in_list = False

    def paragraph(self, text: str) -> None:
        if self.found(text):
            super().paragraph(text)
            self._in_list = False

    def list_item(self, text: str, marker: str, continues: bool) -> None:
        """An item dropped from a list leaves the list's other items together."""
        continues = continues and self._in_list
        if self.found(text):
            super().list_item(text, marker, continues)
            self._in_list = True
        elif not continues:
            self._in_list = False

    def table(self, lines: list[str]) -> None:
        if self.found(" ".join(lines)):
            super().table(lines)
            self._in_list = False

    def code(self, code: str, language: str = "") -> None:
        if self.found(code):
            super().code(code, language)
            self._in_list = False
