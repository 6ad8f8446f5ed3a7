"""The one Markdown block scanner: a text's blocks with exact character ranges.

Ingest builds its DocumentTree from `scan`, sentence splitting never lets a
sentence cross one of its blocks, and `recursive` cuts at `heading_lines`,
which are the very ATX headings `scan` finds (ADR 0041). So a `# comment`
inside fenced code is a heading for none of them.

A block's range is [start, end) in code points of the text as given, trimmed
of white space at both ends: `text[block.start:block.end]` is the block as
written. A BLANK block is a run of whole blank lines, line breaks included.
Every other character that is not white space lies in exactly one block.

What is a block, in order of precedence at the start of a line:
- front matter: `---` on the first line up to a `---` or `...` line;
- fenced code: a ``` or ~~~ line (at most three spaces in) up to a closing
  fence of the same character, at least as long, with nothing after it; an
  unclosed fence runs to the end;
- an HTML comment: a `<!--` line up to the line that holds `-->`.
  Front matter, fences and comments are found before anything else, so
  nothing inside one is a heading, a list or a table;
- an ATX heading (`## Title`, at most three spaces in): one line;
- a table: a run of lines that start with `|`, one TABLE_ROW per line;
- a thematic break (`***`, `- - -`, `___`);
- a list: list-item lines (`-`, `*`, `+`, `1.`, `1)`) up to a blank line,
  each with its continuation lines; a fence indented to an item's content
  belongs to the item;
- indented code: lines four spaces in, where no paragraph or list continues;
- a paragraph, up to a blank line or the start of another block; a line of
  `=` or `-` under it makes it a setext heading (level 1 or 2).
Containers are not nested: a blockquote is paragraph text, and a heading
line inside a list item ends the list.
"""

from __future__ import annotations

import enum
import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate


class Kind(enum.Enum):
    HEADING = "heading"
    PARAGRAPH = "paragraph"
    LIST = "list"
    LIST_ITEM = "list item"
    TABLE = "table"
    TABLE_ROW = "table row"
    FENCED_CODE = "fenced code"
    INDENTED_CODE = "indented code"
    THEMATIC_BREAK = "thematic break"
    HTML_COMMENT = "html comment"
    FRONT_MATTER = "front matter"
    BLANK = "blank lines"


@dataclass(slots=True)  # not frozen: a frozen dataclass takes five times as long to build
class Block:
    kind: Kind
    start: int
    end: int
    level: int = 0  # a heading's level, 1-6
    title: str = ""  # a heading's text
    # What marks the block: "##" (ATX), "=" or "-" (setext), "```" or "~~~",
    # a list item's marker ("-", "1."), a thematic break's character.
    markup: str = ""
    children: tuple[Block, ...] = ()  # a list's items, a table's rows


# A line that opens or closes a fence, opens an HTML comment or is an ATX
# heading, found from the line break before it: a pattern that starts with a
# literal is searched much faster than one that starts with ^ (the first
# line is tried apart).
_LITERAL_OR_ATX_AT = re.compile(r"\n {0,3}(?:```|~~~|<!--|#{1,6}(?=[ \t\n]|\Z))")
_ATX_AT = re.compile(r"\n {0,3}#{1,6}(?=[ \t\n]|\Z)")  # the same, faster, for text with no fence or comment
_FRONT_MATTER_END = re.compile(r"\n(?:---|\.\.\.)[ \t]*(?=\n|\Z)")
# Whole-line patterns, matched against one line without its line break.
_FENCE = re.compile(r" {0,3}((`{3,})|~{3,})(.*)")
_ATX = re.compile(r" {0,3}(#{1,6})")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_THEMATIC = re.compile(r" {0,3}(?:(-)[ \t]*(?:-[ \t]*){2,}|(\*)[ \t]*(?:\*[ \t]*){2,}|(_)[ \t]*(?:_[ \t]*){2,})$")
_LIST_ITEM = re.compile(r" {0,3}([-*+]|\d{1,9}[.)])(?=[ \t]|$)")
_TABLE_ROW = re.compile(r" {0,3}\|")
_INDENTED = re.compile(r" {0,3}\t| {4}")
_LITERAL_KINDS = {"---": Kind.FRONT_MATTER, "<!--": Kind.HTML_COMMENT}


def _lf(text: str) -> str:
    """The text with every line break as one "\\n", at the same offsets
    ("\\r\\n" becomes " \\n": trailing white space counts for no rule)."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", " \n").replace("\r", "\n")


def _candidate_lines(lf: str) -> list[tuple[int, str]]:
    """(line start, last character of what starts it: "`", "~", "-" or "#")
    of the lines that open or close a fence, open an HTML comment or are ATX
    headings, and of some that only look like fences (```a`b)."""
    literal = "```" in lf or "~~~" in lf or "<!--" in lf
    pattern = _LITERAL_OR_ATX_AT if literal else _ATX_AT
    found = [(m.start() + 1, m.group()[-1]) for m in pattern.finditer(lf)]
    first = pattern.match("\n" + lf[:16])
    if first:
        found.insert(0, (0, first.group()[-1]))
    return found


def _line_at(lf: str, start: int) -> str:
    end = lf.find("\n", start)
    return lf[start:] if end < 0 else lf[start:end]


def _front_matter_end(lf: str) -> int:
    """Where the front matter's closing line ends (0 when there is none)."""
    if not lf.startswith("---") or _line_at(lf, 0).rstrip() != "---":
        return 0
    closing = _FRONT_MATTER_END.search(lf, 3)
    return closing.end() if closing else 0


def _literals_and_headings(lf: str) -> tuple[list[tuple[int, int, str]], list[int]]:
    """(start, end, markup) of the front matter, every fenced code block and
    every HTML comment, from the start of the opening line to the end of the
    closing one; and the line starts of the ATX headings outside them."""
    literals: list[tuple[int, int, str]] = []
    headings: list[int] = []
    inside_until = _front_matter_end(lf)  # candidates before this are inside a literal
    if inside_until:
        literals.append((0, inside_until, "---"))
    opened: tuple[int, str] | None = None  # an open fence's start and marker
    for start, what in _candidate_lines(lf):
        if start < inside_until:
            continue
        if what == "#":
            if opened is None:
                headings.append(start)
            continue
        if what == "-":  # <!--: up to the line holding -->, or the end
            if opened is None:
                close = lf.find("-->", lf.index("<!--", start) + 4)
                end = len(lf.rstrip()) if close < 0 else close + len(_line_at(lf, close))
                literals.append((start, end, "<!--"))
                inside_until = end
            continue
        line = _line_at(lf, start)
        fence = _FENCE.match(line)
        marker, backticks, rest = fence.group(1), fence.group(2), fence.group(3)
        if opened is None:
            if not (backticks and "`" in rest):  # ```a`b is inline code, not a fence
                opened = (start, marker)
        elif marker[0] == opened[1][0] and len(marker) >= len(opened[1]) and not rest.strip(" \t"):
            literals.append((opened[0], start + len(line), opened[1]))
            opened = None
    if opened is not None:  # an unclosed fence runs to the end
        literals.append((opened[0], len(lf.rstrip()), opened[1]))
    return literals, headings


def heading_lines(text: str) -> list[int]:
    """Where each ATX heading line of `scan(text)` starts (the line's first
    character, before any indentation), in order: the header cut points of
    the `recursive` cascade. Found without visiting every line, since the
    cascade asks for them on every document it splits."""
    if "#" not in text:
        return []
    return _literals_and_headings(_lf(text))[1]


def _atx_title(line: str) -> str:
    """An ATX heading's text, without its #s and any closing #s."""
    rest = line.strip(" \t").lstrip("#")
    stripped = rest.rstrip(" \t").rstrip("#")
    if not stripped or stripped[-1] in " \t":  # a closing sequence follows a space
        rest = stripped
    return rest.strip()


def scan(text: str) -> list[Block]:
    """The blocks of a Markdown text, in order (see the module docstring)."""
    return _Scanner(text).blocks()


class _Scanner:
    """One pass over the lines; fences and ATX headings are found first."""

    def __init__(self, text: str) -> None:
        lf = _lf(text)
        self.text = text
        self.lines = lf.split("\n")
        if self.lines[-1] == "":  # the text ends with a line break, or is empty
            self.lines.pop()
        self.starts = list(accumulate((len(line) + 1 for line in self.lines[:-1]), initial=0))
        self.blank = [not line.strip() for line in self.lines]
        literals, headings = _literals_and_headings(lf)
        # opening line -> (closing line, markup)
        self.literal = {self._index(a): (self._index(b - 1), markup) for a, b, markup in literals}
        self.atx = {self._index(a) for a in headings}

    def _index(self, position: int) -> int:
        return bisect_right(self.starts, position) - 1

    def span(self, first: int, last: int) -> tuple[int, int]:
        """Lines first..last trimmed of white space at both ends."""
        head, tail = self.lines[first], self.lines[last]
        return self.starts[first] + len(head) - len(head.lstrip()), self.starts[last] + len(tail.rstrip())

    def ends_paragraph(self, i: int) -> bool:
        """Whether line i starts a block that interrupts a paragraph."""
        line = self.lines[i]
        if i in self.literal or i in self.atx or _TABLE_ROW.match(line) or _THEMATIC.match(line):
            return True
        item = _LIST_ITEM.match(line)
        # A list item interrupts a paragraph when it has content and, if
        # ordered, starts at 1 (CommonMark): "in\n2019. The year" is one paragraph.
        return item is not None and bool(line[item.end() :].strip()) and item.group(1)[:-1] in ("", "1")

    def blocks(self) -> list[Block]:
        out: list[Block] = []
        lines, blank = self.lines, self.blank
        i, n = 0, len(lines)
        after_list = False  # indented blocks after a list continue it: no indented code
        while i < n:
            line = lines[i]
            if blank[i]:
                j = i + 1
                while j < n and blank[j]:
                    j += 1
                out.append(Block(Kind.BLANK, self.starts[i], self.starts[j] if j < n else len(self.text)))
                i = j
                continue
            indented = _INDENTED.match(line) is not None
            after_list = after_list and indented
            if i in self.literal:
                last, markup = self.literal[i]
                kind = _LITERAL_KINDS.get(markup, Kind.FENCED_CODE)
                out.append(Block(kind, *self.span(i, last), markup=markup))
                i = last + 1
            elif i in self.atx:
                hashes = _ATX.match(line).group(1)
                out.append(Block(Kind.HEADING, *self.span(i, i), len(hashes), _atx_title(line), hashes))
                i += 1
            elif _TABLE_ROW.match(line):
                j = i + 1
                while j < n and _TABLE_ROW.match(lines[j]):
                    j += 1
                rows = tuple(Block(Kind.TABLE_ROW, *self.span(k, k)) for k in range(i, j))
                out.append(Block(Kind.TABLE, rows[0].start, rows[-1].end, children=rows))
                i = j
            elif _THEMATIC.match(line):
                out.append(Block(Kind.THEMATIC_BREAK, *self.span(i, i), markup=line.strip()[0]))
                i += 1
            elif _LIST_ITEM.match(line):
                block, i = self.list_block(i)
                out.append(block)
                after_list = True
            elif indented and not after_list:
                j = k = i  # j: the last non-blank line of the code
                while k + 1 < n and (blank[k + 1] or _INDENTED.match(lines[k + 1])):
                    k += 1
                    j = j if blank[k] else k
                out.append(Block(Kind.INDENTED_CODE, *self.span(i, j)))
                i = j + 1
            else:
                block, i = self.paragraph(i)
                out.append(block)
        return out

    def list_block(self, i: int) -> tuple[Block, int]:
        """Items from line i up to a blank line or another block; returns the
        list and the line after it."""
        items: list[list] = []  # [first line, last line, marker]
        content_column = 0
        n = len(self.lines)
        while i < n and not self.blank[i]:
            line = self.lines[i]
            if i in self.literal:
                if len(line) - len(line.lstrip(" ")) < content_column:
                    break
                items[-1][1] = i = self.literal[i][0]  # the fence belongs to the item
            elif i in self.atx or _TABLE_ROW.match(line) or _THEMATIC.match(line):
                break
            elif item := _LIST_ITEM.match(line):
                items.append([i, i, item.group(1)])
                content_column = item.end() + 1
            else:  # a continuation line belongs to the item above
                items[-1][1] = i
            i += 1
        children = tuple(Block(Kind.LIST_ITEM, *self.span(a, b), markup=marker) for a, b, marker in items)
        return Block(Kind.LIST, children[0].start, children[-1].end, markup=children[0].markup, children=children), i

    def paragraph(self, i: int) -> tuple[Block, int]:
        """Lines from i up to a blank line or another block, or a setext
        heading when a `=` or `-` line comes under them."""
        j, n = i, len(self.lines)
        while j + 1 < n and not self.blank[j + 1]:
            underline = _SETEXT.match(self.lines[j + 1])
            if underline:
                start, end = self.span(i, j + 1)
                title = " ".join(self.text[start : self.span(i, j)[1]].split())
                level = 1 if underline.group(1)[0] == "=" else 2
                return Block(Kind.HEADING, start, end, level, title, underline.group(1)[0]), j + 2
            if self.ends_paragraph(j + 1):
                break
            j += 1
        return Block(Kind.PARAGRAPH, *self.span(i, j)), j + 1
