"""A document's structure as its tree says it, for everything downstream that cuts its text
(issue 28, ADR 0105): where its headings start and the blocks no sentence crosses.

The canonical text is a Markdown rendering, but a paragraph may itself start with "# " or
"1. " (a PDF's "# of items", a web page's "#hashtag", a plain-text comment): scanning the text
again would read it as a heading. So the strategies, the sentence splitter and the viewer read
the tree that ingest stored; only a text without a parse (a bare string in a test, a chunk's
own content) is scanned as Markdown (chunklab.text.markdown).
"""

from __future__ import annotations

from chunklab.text import markdown, sentences
from chunklab.v1 import documents_pb2 as pb

# The tree's leaves that hold text, and whether each is one sentence whatever its full stops.
_LEAVES = (pb.NODE_KIND_HEADING, pb.NODE_KIND_PARAGRAPH, pb.NODE_KIND_LIST, pb.NODE_KIND_TABLE, pb.NODE_KIND_CODE)


def parsed(tree: pb.DocumentTree | None) -> bool:
    """Whether there is a tree to read (a document's parse has a root with children)."""
    return tree is not None and len(tree.root.children) > 0


def _leaves(node: pb.TreeNode):
    for child in node.children:
        if child.kind in _LEAVES:
            yield child
        else:
            yield from _leaves(child)


def heading_starts(text: str, tree: pb.DocumentTree | None) -> list[int]:
    """Where each heading starts, in order: the tree's headings, or the ATX heading lines of a
    text without a parse."""
    if not parsed(tree):
        return markdown.heading_lines(text)
    return sorted(n.start_char for n in _leaves(tree.root) if n.kind == pb.NODE_KIND_HEADING)


def _parts(text: str, node: pb.TreeNode) -> list[tuple[int, int, bool]]:
    """(start, end, whole) of one leaf: a heading whole; a paragraph as it is; each list item;
    each line of a table whole (one row); code between its blank lines."""
    if node.kind == pb.NODE_KIND_HEADING:
        return [(node.start_char, node.end_char, True)]
    if node.kind == pb.NODE_KIND_PARAGRAPH:
        return [(node.start_char, node.end_char, False)]
    if node.kind == pb.NODE_KIND_LIST and node.children:
        return [(item.start_char, item.end_char, False) for item in node.children]
    if node.kind == pb.NODE_KIND_TABLE:
        found, start = [], node.start_char
        for line in text[node.start_char : node.end_char].split("\n"):
            if line.strip():
                found.append((start, start + len(line), True))
            start += len(line) + 1
        return found
    return [(a, b, False) for a, b in sentences.between_blank_lines(text, node.start_char, node.end_char)]


def sentence_blocks(text: str, tree: pb.DocumentTree | None) -> list[tuple[int, int, bool]]:
    """(start, end, whole) of the ranges no sentence crosses (sentences.split's `within`), from
    the tree; text no leaf covers (a Markdown file's front matter) between its blank lines. A text
    without a parse: sentences.blocks, its Markdown blocks."""
    if not parsed(tree):
        return sentences.blocks(text)
    found: list[tuple[int, int, bool]] = []
    position = 0
    for node in sorted(_leaves(tree.root), key=lambda n: (n.start_char, n.end_char)):
        if node.start_char < position:
            continue  # inside one already taken (never in a tree ingest built)
        if text[position : node.start_char].strip():
            found += [(a, b, False) for a, b in sentences.between_blank_lines(text, position, node.start_char)]
        found += _parts(text, node)
        position = max(position, node.end_char)
    if text[position:].strip():
        found += [(a, b, False) for a, b in sentences.between_blank_lines(text, position, len(text))]
    return found


def within(blocks: list[tuple[int, int, bool]], start: int, end: int) -> list[tuple[int, int, bool]]:
    """The blocks clipped to [start, end)."""
    return [(max(a, start), min(b, end), whole) for a, b, whole in blocks if a < end and b > start]
