"""Markdown and plain text into a DocumentTree.

The canonical text of a Markdown or text file is the file's text exactly, so
character offsets from outside (question-set references) stay valid. Every
node carries its [start_char, end_char) range in that text.

Markdown: the blocks of chunklab.text.markdown.scan, the scanner that sentence
splitting and `recursive` share (ADR 0041): ATX and setext headings; fenced
and indented code is one block and never yields headings; lists and tables
are blocks of their own; front matter is left out. Plain text: paragraphs at
blank lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from chunklab.text import markdown
from chunklab.v1 import documents_pb2 as pb

# The tree's node kind of each scanned block; front matter and blank lines
# make no node, and a thematic break or an HTML comment stays a paragraph,
# as it always was.
_NODE_KINDS = {
    markdown.Kind.HEADING: pb.NODE_KIND_HEADING,
    markdown.Kind.PARAGRAPH: pb.NODE_KIND_PARAGRAPH,
    markdown.Kind.THEMATIC_BREAK: pb.NODE_KIND_PARAGRAPH,
    markdown.Kind.HTML_COMMENT: pb.NODE_KIND_PARAGRAPH,
    markdown.Kind.LIST: pb.NODE_KIND_LIST,
    markdown.Kind.TABLE: pb.NODE_KIND_TABLE,
    markdown.Kind.FENCED_CODE: pb.NODE_KIND_CODE,
    markdown.Kind.INDENTED_CODE: pb.NODE_KIND_CODE,
}


@dataclass
class Parsed:
    """An upload's canonical text, tree and what the document says of itself."""

    text: str
    tree: pb.DocumentTree
    metadata: dict[str, str]
    published_at: datetime | None
    language: str = ""  # what the document declares (an HTML page's lang), "" to detect
    # What the reader could not read or had to guess, as sentences a person can act on (the
    # document's ParseReport.warnings): nothing is lost without one.
    warnings: list[str] = field(default_factory=list)


@dataclass
class Line:
    text: str  # without its line ending
    start: int
    end: int  # end of the text, before the line ending


@dataclass
class Block:
    kind: int
    start: int
    end: int
    level: int = 0
    title: str = ""
    items: list[tuple[int, int]] = field(default_factory=list)


def split_lines(text: str) -> list[Line]:
    lines = []
    for match in re.finditer(r"([^\r\n]*)(\r\n|\r|\n|$)", text):
        if match.start() == len(text) and not match.group(1):
            break
        lines.append(Line(match.group(1), match.start(1), match.end(1)))
    return lines


def _blank(line: Line) -> bool:
    return not line.text.strip()


def _trimmed(line: Line) -> tuple[int, int]:
    """The line's range without leading and trailing whitespace."""
    stripped = line.text.strip()
    lead = len(line.text) - len(line.text.lstrip())
    return line.start + lead, line.start + lead + len(stripped)


def markdown_blocks(text: str) -> list[Block]:
    return [
        Block(
            _NODE_KINDS[b.kind],
            b.start,
            b.end,
            b.level,
            b.title,
            [(item.start, item.end) for item in b.children] if b.kind is markdown.Kind.LIST else [],
        )
        for b in markdown.scan(text)
        if b.kind in _NODE_KINDS
    ]


def text_blocks(text: str) -> list[Block]:
    """Plain text: a paragraph is a run of non-blank lines."""
    blocks = []
    run: list[Line] = []
    for line in [*split_lines(text), None]:
        if line is None or _blank(line):
            if run:
                blocks.append(Block(pb.NODE_KIND_PARAGRAPH, _trimmed(run[0])[0], _trimmed(run[-1])[1]))
            run = []
        else:
            run.append(line)
    return blocks


def markdown_table(rows: list[list[str]]) -> list[str]:
    """Rows of cell texts as Markdown table lines, the first row the header:
    cell whitespace collapsed, `|` escaped, empty rows dropped, short rows padded."""
    rows = [[" ".join(cell.split()).replace("|", "\\|") for cell in row] for row in rows]
    rows = [r for r in rows if any(r)]
    if not rows:
        return []
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return lines


class Writer:
    """Renders blocks as Markdown, a blank line between blocks, and records
    each block's range: the canonical text of a format that is not text
    itself (DOCX, HTML) and the blocks of its tree, built together."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.blocks: list[Block] = []

    def _append(self, text: str, separator: str) -> tuple[int, int]:
        if self.parts:
            self.parts.append(separator)
            self.length += len(separator)
        start = self.length
        self.parts.append(text)
        self.length += len(text)
        return start, self.length

    def heading(self, level: int, title: str) -> None:
        start, end = self._append("#" * min(level, 6) + " " + title, "\n\n")
        self.blocks.append(Block(pb.NODE_KIND_HEADING, start, end, level, title))

    def paragraph(self, text: str) -> None:
        start, end = self._append(text, "\n\n")
        self.blocks.append(Block(pb.NODE_KIND_PARAGRAPH, start, end))

    def list_item(self, text: str, marker: str, continues: bool) -> None:
        start, end = self._append(f"{marker} {text}", "\n" if continues else "\n\n")
        if continues:
            block = self.blocks[-1]
            block.end = end
            block.items.append((start, end))
        else:
            self.blocks.append(Block(pb.NODE_KIND_LIST, start, end, items=[(start, end)]))

    def table(self, lines: list[str]) -> None:
        start, end = self._append("\n".join(lines), "\n\n")
        self.blocks.append(Block(pb.NODE_KIND_TABLE, start, end))

    def code(self, code: str, language: str = "") -> None:
        """A fenced block, its fence longer than any run of backticks inside."""
        longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
        fence = "`" * max(3, longest + 1)
        start, end = self._append(f"{fence}{language}\n{code}\n{fence}", "\n\n")
        self.blocks.append(Block(pb.NODE_KIND_CODE, start, end))

    def text(self) -> str:
        return "".join(self.parts)


def build_tree(text: str, blocks: list[Block]) -> pb.DocumentTree:
    """Nests blocks under their headings: a section runs to the next heading
    of the same or a higher level."""
    root = pb.TreeNode(kind=pb.NODE_KIND_DOCUMENT, start_char=0, end_char=len(text))
    stack: list[tuple[int, pb.TreeNode]] = [(0, root)]
    for block in blocks:
        if block.kind == pb.NODE_KIND_HEADING:
            while stack[-1][0] >= block.level:
                stack.pop()
            parent = stack[-1][1]
            path = [*parent.heading_path, block.title]
            section = parent.children.add(
                kind=pb.NODE_KIND_SECTION,
                level=block.level,
                title=block.title,
                heading_path=path,
                start_char=block.start,
                end_char=block.end,
            )
            section.children.add(
                kind=pb.NODE_KIND_HEADING,
                level=block.level,
                title=block.title,
                heading_path=path,
                start_char=block.start,
                end_char=block.end,
            )
            stack.append((block.level, section))
            _grow_sections(stack, block.end)
            continue
        parent = stack[-1][1]
        node = parent.children.add(
            kind=block.kind, heading_path=parent.heading_path, start_char=block.start, end_char=block.end
        )
        for start, end in block.items:
            node.children.add(
                kind=pb.NODE_KIND_LIST_ITEM, heading_path=parent.heading_path, start_char=start, end_char=end
            )
        _grow_sections(stack, block.end)
    return pb.DocumentTree(root=root)


def _grow_sections(stack: list[tuple[int, pb.TreeNode]], end: int) -> None:
    """Open sections grow to cover what they contain."""
    for _, section in stack[1:]:
        section.end_char = max(section.end_char, end)


def parse(text: str, fmt: int) -> pb.DocumentTree:
    if fmt == pb.DOCUMENT_FORMAT_MARKDOWN:
        return build_tree(text, markdown_blocks(text))
    return build_tree(text, text_blocks(text))
