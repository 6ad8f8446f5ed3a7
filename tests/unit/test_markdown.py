"""The one Markdown block scanner (chunklab.text.markdown): exact block ranges on
hand-built documents, fence rules, and agreement with a CommonMark parser."""

from __future__ import annotations

from bisect import bisect_right

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from chunklab.text import markdown
from chunklab.text.markdown import Kind

DOCUMENT = (
    "---\n"
    "title: Handbook\n"
    "# a YAML comment\n"
    "---\n"
    "# Handbook #\n"
    "\n"
    "Intro line one\n"
    "line two.\n"
    "- first item\n"
    "  continued\n"
    "2. second item\n"
    "\n"
    "```python\n"
    "# not a heading\n"
    "\n"
    "x = 1\n"
    "```\n"
    "~~~\n"
    "# not a heading either\n"
    "~~~\n"
    "<!-- a comment\n"
    "# still the comment -->\n"
    "Setext title\n"
    "============\n"
    "| a | b |\n"
    "|---|---|\n"
    "\n"
    "    indented code\n"
    "\n"
    "* * *\n"
    "  ## Indented heading\n"
    "Last words.\n"
)

EXPECTED = [
    (Kind.FRONT_MATTER, "---\ntitle: Handbook\n# a YAML comment\n---"),
    (Kind.HEADING, "# Handbook #"),
    (Kind.BLANK, "\n"),
    (Kind.PARAGRAPH, "Intro line one\nline two."),
    (Kind.LIST, "- first item\n  continued\n2. second item"),
    (Kind.BLANK, "\n"),
    (Kind.FENCED_CODE, "```python\n# not a heading\n\nx = 1\n```"),
    (Kind.FENCED_CODE, "~~~\n# not a heading either\n~~~"),
    (Kind.HTML_COMMENT, "<!-- a comment\n# still the comment -->"),
    (Kind.HEADING, "Setext title\n============"),
    (Kind.TABLE, "| a | b |\n|---|---|"),
    (Kind.BLANK, "\n"),
    (Kind.INDENTED_CODE, "indented code"),
    (Kind.BLANK, "\n"),
    (Kind.THEMATIC_BREAK, "* * *"),
    (Kind.HEADING, "## Indented heading"),
    (Kind.PARAGRAPH, "Last words."),
]


def kinds_and_texts(text: str) -> list[tuple[Kind, str]]:
    return [(b.kind, text[b.start : b.end]) for b in markdown.scan(text)]


def test_every_block_of_a_hand_built_document_with_its_exact_range():
    assert kinds_and_texts(DOCUMENT) == EXPECTED
    blocks = markdown.scan(DOCUMENT)
    headings = [(b.level, b.title, b.markup) for b in blocks if b.kind is Kind.HEADING]
    assert headings == [(1, "Handbook", "#"), (1, "Setext title", "="), (2, "Indented heading", "##")]
    lists = [b for b in blocks if b.kind is Kind.LIST]
    assert [(DOCUMENT[i.start : i.end], i.markup) for i in lists[0].children] == [
        ("- first item\n  continued", "-"),
        ("2. second item", "2."),
    ]
    table = next(b for b in blocks if b.kind is Kind.TABLE)
    assert [DOCUMENT[r.start : r.end] for r in table.children] == ["| a | b |", "|---|---|"]
    assert [b.markup for b in blocks if b.kind is Kind.FENCED_CODE] == ["```", "~~~"]


def test_ranges_stay_exact_with_windows_and_old_mac_line_breaks():
    for newline in ("\r\n", "\r"):
        text = DOCUMENT.replace("\n", newline)
        assert [(k, t.replace(newline, "\n")) for k, t in kinds_and_texts(text)] == EXPECTED


def test_heading_lines_are_the_starts_of_the_atx_heading_lines_only():
    text = "# One\n```\n# not a heading\n```\n   ## Two\nSetext\n---\n<!--\n# not either\n-->\n#hashtag\n"
    assert markdown.heading_lines(text) == [0, text.index("   ## Two")]
    assert [b.title for b in markdown.scan(text) if b.kind is Kind.HEADING] == ["One", "Two", "Setext"]


def test_a_fence_closes_only_with_the_same_character_at_least_as_long_and_nothing_after():
    text = "````\n```\n~~~\n````py\n# inside\n`````\n# outside\n"
    assert kinds_and_texts(text) == [
        (Kind.FENCED_CODE, "````\n```\n~~~\n````py\n# inside\n`````"),
        (Kind.HEADING, "# outside"),
    ]


def test_an_unclosed_fence_runs_to_the_end_and_inline_code_opens_none():
    assert kinds_and_texts("```\n# in code\n\nstill code\n\n") == [
        (Kind.FENCED_CODE, "```\n# in code\n\nstill code"),
        (Kind.BLANK, "\n"),
    ]
    assert kinds_and_texts("``` a`b\n# Heading") == [(Kind.PARAGRAPH, "``` a`b"), (Kind.HEADING, "# Heading")]


def test_setext_underlines_thematic_breaks_and_lists_that_look_alike():
    assert kinds_and_texts("Title\nsecond line\n---\n---\n- - -\n-\n") == [
        (Kind.HEADING, "Title\nsecond line\n---"),
        (Kind.THEMATIC_BREAK, "---"),
        (Kind.THEMATIC_BREAK, "- - -"),
        (Kind.LIST, "-"),
    ]
    heading = markdown.scan("Title\nsecond line\n---")[0]
    assert (heading.level, heading.title, heading.markup) == (2, "Title second line", "-")
    assert kinds_and_texts("Text\n***\n") == [(Kind.PARAGRAPH, "Text"), (Kind.THEMATIC_BREAK, "***")]


def test_indented_code_after_a_blank_line_but_not_inside_a_paragraph_or_after_a_list():
    assert kinds_and_texts("Para\n    lazy line\n\n    code\n\n      more\n") == [
        (Kind.PARAGRAPH, "Para\n    lazy line"),
        (Kind.BLANK, "\n"),
        (Kind.INDENTED_CODE, "code\n\n      more"),
    ]
    assert kinds_and_texts("- item\n\n    more of the item\n") == [
        (Kind.LIST, "- item"),
        (Kind.BLANK, "\n"),
        (Kind.PARAGRAPH, "more of the item"),
    ]


def test_lists_end_at_a_heading_a_table_or_a_fence_that_is_not_indented_to_the_item():
    text = "- item\n  ```\n  # code of the item\n\n  ```\n- next\n```\n# code\n```\n"
    assert kinds_and_texts(text) == [
        (Kind.LIST, "- item\n  ```\n  # code of the item\n\n  ```\n- next"),
        (Kind.FENCED_CODE, "```\n# code\n```"),
    ]
    assert kinds_and_texts("- a\n| row |\n# H\n") == [
        (Kind.LIST, "- a"),
        (Kind.TABLE, "| row |"),
        (Kind.HEADING, "# H"),
    ]


def test_only_bullets_and_lists_from_1_interrupt_a_paragraph():
    assert kinds_and_texts("It was in\n2019. The year\n") == [(Kind.PARAGRAPH, "It was in\n2019. The year")]
    assert kinds_and_texts("Steps:\n1. one\n2. two\n") == [(Kind.PARAGRAPH, "Steps:"), (Kind.LIST, "1. one\n2. two")]


def test_empty_and_blank_texts():
    assert markdown.scan("") == [] and markdown.heading_lines("") == []
    assert kinds_and_texts(" \n\t\n") == [(Kind.BLANK, " \n\t\n")]


# -- properties -------------------------------------------------------------

LINES = [
    "# H",
    "## Two ##",
    "  ### three",
    "#x",
    "####### seven",
    "text",
    "more text.",
    "",
    "",
    "```",
    "```py",
    "````",
    "~~~",
    "~~~ info",
    "    indented",
    "    # indented hash",
    "---",
    "***",
    "===",
    "- - -",
    "<!-- c -->",
    "<!--",
    "-->",
    "#",
    "#\tTab",
    " ```",
    "\t",
    "   ",
    "``` a`b",
]
CONTAINERS = ["- item", "1. one", "2. two", "* star", "  continued", "  - nested", "| a | b |", "> quote", "  ```"]


def line_starts(text: str) -> list[int]:
    starts = [0]
    for line in text.split("\n")[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    return starts


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.sampled_from(LINES + CONTAINERS), max_size=20), newline=st.sampled_from(["\n", "\r\n"]))
def test_blocks_are_ordered_trimmed_and_cover_every_non_blank_character(lines, newline):
    text = newline.join(lines)
    covered = [False] * len(text)
    previous_end = 0
    for block in markdown.scan(text):
        assert previous_end <= block.start < block.end <= len(text)
        if block.kind is Kind.BLANK:
            assert text[block.start : block.end].isspace()
        else:
            assert not text[block.start].isspace() and not text[block.end - 1].isspace()
        for child in block.children:
            assert block.start <= child.start < child.end <= block.end
        covered[block.start : block.end] = [True] * (block.end - block.start)
        previous_end = block.end
    assert all(covered[i] or text[i].isspace() for i in range(len(text)))
    lf = text.replace("\r\n", " \n")
    starts = line_starts(lf)
    atx = [
        starts[bisect_right(starts, b.start) - 1]
        for b in markdown.scan(text)
        if b.kind is Kind.HEADING and b.markup.startswith("#")
    ]
    assert markdown.heading_lines(text) == atx


COMMONMARK = MarkdownIt("commonmark")


def commonmark_blocks(text: str) -> list[tuple[str, int, int, int]]:
    """(kind, heading level, first line, last line) of the top-level headings,
    code blocks, HTML blocks and thematic breaks markdown-it-py finds."""
    kinds = {
        "fence": "fenced code",
        "code_block": "indented code",
        "html_block": "html comment",
        "hr": "thematic break",
    }
    lines = text.split("\n")
    found = []
    for token in COMMONMARK.parse(text):
        if token.level or token.map is None or token.type not in (*kinds, "heading_open"):
            continue
        first, end = token.map
        while end - 1 > first and not lines[end - 1].strip():  # its map takes in blank lines after a block
            end -= 1
        level = int(token.tag[1]) if token.type == "heading_open" else 0
        found.append((kinds.get(token.type, "heading"), level, first, end - 1))
    return found


def our_blocks(text: str) -> list[tuple[str, int, int, int]]:
    starts = line_starts(text)
    kinds = (Kind.HEADING, Kind.FENCED_CODE, Kind.INDENTED_CODE, Kind.HTML_COMMENT, Kind.THEMATIC_BREAK)
    return [
        (b.kind.value, b.level, bisect_right(starts, b.start) - 1, bisect_right(starts, b.end - 1) - 1)
        for b in markdown.scan(text)
        if b.kind in kinds
    ]


@settings(max_examples=500, deadline=None)
@given(lines=st.lists(st.sampled_from(LINES), min_size=1, max_size=14))
def test_headings_code_and_breaks_are_those_of_commonmark_outside_containers(lines):
    """Without lists, tables or block quotes (which the scanner does not nest)
    every heading, code block, comment and thematic break is where
    markdown-it-py, a CommonMark parser, puts it. The text opens with a
    paragraph, so a first `---` line is no front matter (CommonMark has none)."""
    text = "Intro\n\n" + "\n".join(lines)
    assert our_blocks(text) == commonmark_blocks(text)
