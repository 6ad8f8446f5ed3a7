"""Markdown and plain text into a DocumentTree.

The canonical text of a Markdown or text file is the file's text exactly, so
character offsets from outside (question-set references) stay valid. Every
node carries its [start_char, end_char) range in that text.

Markdown: ATX (`## Title`) and setext (`Title` over `===`/`---`) headings;
fenced code (``` or ~~~) is one block and never yields headings; lists and
tables are blocks of their own. Plain text: paragraphs at blank lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from chunklab.v1 import documents_pb2 as pb

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_TABLE_ROW = re.compile(r"^ {0,3}\|")


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


def _front_matter_end(lines: list[Line]) -> int:
    """Index of the first line after YAML front matter (0 when there is none);
    front matter is metadata, not a heading or a paragraph."""
    if not lines or lines[0].text.rstrip() != "---":
        return 0
    for j in range(1, len(lines)):
        if lines[j].text.rstrip() in ("---", "..."):
            return j + 1
    return 0


def markdown_blocks(text: str) -> list[Block]:
    lines = split_lines(text)
    blocks: list[Block] = []
    i = _front_matter_end(lines)
    while i < len(lines):
        line = lines[i]
        if _blank(line):
            i += 1
            continue
        fence = _FENCE.match(line.text)
        if fence:
            marker = fence.group(1)
            j = i + 1
            while j < len(lines) and not lines[j].text.lstrip().startswith(marker[0] * len(marker)):
                j += 1
            last = lines[min(j, len(lines) - 1)]
            blocks.append(Block(pb.NODE_KIND_CODE, line.start, last.end))
            i = j + 1
            continue
        atx = _ATX.match(line.text)
        if atx:
            start, end = _trimmed(line)
            blocks.append(Block(pb.NODE_KIND_HEADING, start, end, len(atx.group(1)), (atx.group(2) or "").strip()))
            i += 1
            continue
        if _TABLE_ROW.match(line.text):
            j = i
            while j + 1 < len(lines) and _TABLE_ROW.match(lines[j + 1].text):
                j += 1
            blocks.append(Block(pb.NODE_KIND_TABLE, _trimmed(line)[0], _trimmed(lines[j])[1]))
            i = j + 1
            continue
        if _LIST_ITEM.match(line.text):
            items: list[tuple[int, int]] = []
            j = i
            while j < len(lines) and not _blank(lines[j]):
                if _LIST_ITEM.match(lines[j].text) or not items:
                    items.append(_trimmed(lines[j]))
                else:  # a continuation line belongs to the item above
                    items[-1] = (items[-1][0], _trimmed(lines[j])[1])
                j += 1
            blocks.append(Block(pb.NODE_KIND_LIST, items[0][0], items[-1][1], items=items))
            i = j
            continue
        # A paragraph: up to a blank line, a heading, a fence, or a setext underline.
        j = i
        setext_level = 0
        while j + 1 < len(lines):
            nxt = lines[j + 1]
            if _blank(nxt) or _ATX.match(nxt.text) or _FENCE.match(nxt.text):
                break
            underline = _SETEXT.match(nxt.text)
            if underline:
                setext_level = 1 if underline.group(1).startswith("=") else 2
                break
            j += 1
        start, end = _trimmed(line)[0], _trimmed(lines[j])[1]
        if setext_level:
            title = " ".join(text[start:end].split())
            blocks.append(Block(pb.NODE_KIND_HEADING, start, _trimmed(lines[j + 1])[1], setext_level, title))
            i = j + 2
        else:
            blocks.append(Block(pb.NODE_KIND_PARAGRAPH, start, end))
            i = j + 1
    return blocks


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
                kind=pb.NODE_KIND_SECTION, level=block.level, title=block.title,
                heading_path=path, start_char=block.start, end_char=block.end,
            )
            section.children.add(
                kind=pb.NODE_KIND_HEADING, level=block.level, title=block.title,
                heading_path=path, start_char=block.start, end_char=block.end,
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
