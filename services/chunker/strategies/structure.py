"""Reading the DocumentTree: sections, blocks and heading paths.

Ingest nests blocks (paragraphs, lists, tables, code, heading lines) under
sections; a section's own blocks come before its first subsection. Plain
text and documents without headings have blocks directly under the root.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from chunklab.v1 import documents_pb2 as pb

SECTION = pb.NODE_KIND_SECTION
HEADING = pb.NODE_KIND_HEADING
_PARAGRAPH_RUN = re.compile(r"\S(?:.*?\S)?(?=\s*(?:\n[ \t]*\n|\r\n[ \t]*\r\n|$))", re.DOTALL)


@dataclass
class Unit:
    """A run of consecutive blocks that belong together (a section's own
    content, or the content before the first heading)."""

    start: int
    end: int
    heading_path: list[str]
    blocks: list[pb.TreeNode] = field(default_factory=list)
    section: pb.TreeNode | None = None

    def block_ranges(self, *, headings: bool = True) -> list[tuple[int, int]]:
        return [(b.start_char, b.end_char) for b in self.blocks if headings or b.kind != HEADING]


def has_tree(tree: pb.DocumentTree) -> bool:
    return tree.HasField("root") and len(tree.root.children) > 0


def own_units(tree: pb.DocumentTree) -> list[Unit]:
    """Every section's own blocks (its heading line and what precedes its
    first subsection), plus the blocks before the first heading, in order."""
    units: list[Unit] = []

    def walk(node: pb.TreeNode) -> None:
        own = [c for c in node.children if c.kind != SECTION]
        if own:
            section = node if node.kind == SECTION else None
            units.append(Unit(own[0].start_char, own[-1].end_char, list(node.heading_path), own, section))
        for child in node.children:
            if child.kind == SECTION:
                walk(child)

    if has_tree(tree):
        walk(tree.root)
    return units


def title_section(tree: pb.DocumentTree) -> pb.TreeNode | None:
    """The document's title: its only top-level section, whatever its heading
    level and whatever blocks come before it (ADR 0043). Markdown's lone
    "# Title", DOCX's Title style (ingest renders it one level above Heading
    1) and any reader's single top-level heading alike: the rule reads the
    tree only. Two top-level sections mean no title."""
    if not has_tree(tree):
        return None
    tops = [c for c in tree.root.children if c.kind == SECTION]
    return tops[0] if len(tops) == 1 else None


def top_sections(tree: pb.DocumentTree) -> list[pb.TreeNode]:
    """The parts the document is divided into first: the sections under its
    title when it has one (a title divides nothing), else its top-level
    sections."""
    title = title_section(tree)
    body = title if title is not None else tree.root
    return [c for c in body.children if c.kind == SECTION]


def structure_units(tree: pb.DocumentTree) -> list[Unit]:
    """Leaf-section units for the structure strategies: a section holding
    only its heading line is joined to its first subsection, so that no
    chunk is a bare heading ("# Title" then "## Part 1" make one unit)."""
    merged: list[Unit] = []
    pending: Unit | None = None
    for unit in own_units(tree):
        if pending is not None:
            unit = Unit(pending.start, unit.end, unit.heading_path, pending.blocks + unit.blocks, unit.section)
            pending = None
        only_heading = all(b.kind == HEADING for b in unit.blocks)
        if only_heading:
            pending = unit
            continue
        merged.append(unit)
    if pending is not None:
        merged.append(pending)
    return merged


def sections(tree: pb.DocumentTree) -> list[pb.TreeNode]:
    """All section nodes in document order."""
    found: list[pb.TreeNode] = []

    def walk(node: pb.TreeNode) -> None:
        for child in node.children:
            if child.kind == SECTION:
                found.append(child)
                walk(child)

    if has_tree(tree):
        walk(tree.root)
    return found


def paragraph_ranges(text: str, tree: pb.DocumentTree) -> list[tuple[int, int]]:
    """Block ranges in order, from the tree when there is one, else runs of
    non-blank lines."""
    if has_tree(tree):
        return [r for unit in own_units(tree) for r in unit.block_ranges()]
    return [m.span() for m in _PARAGRAPH_RUN.finditer(text)]


class HeadingPaths:
    """The heading path at any position: that of the innermost section
    containing it (empty before the first heading)."""

    def __init__(self, tree: pb.DocumentTree) -> None:
        self._sections = sections(tree)
        self._starts = [s.start_char for s in self._sections]

    def at(self, position: int) -> list[str]:
        i = bisect_right(self._starts, position) - 1
        # Preorder: the innermost section containing the position is the
        # last one starting at or before it that has not ended yet.
        while i >= 0:
            section = self._sections[i]
            if section.start_char <= position < max(section.end_char, section.start_char + 1):
                return list(section.heading_path)
            i -= 1
        return []


def paragraphs_with_headings(text: str, tree: pb.DocumentTree) -> list[tuple[int, int]]:
    """Block ranges in order, each heading line joined to the block after it
    (a heading alone says little; with its first paragraph it situates it)."""
    blocks = _blocks_with_kinds(tree) if has_tree(tree) else [(a, b, False) for a, b in paragraph_ranges(text, tree)]
    out: list[tuple[int, int]] = []
    pending: int | None = None
    for start, end, is_heading in blocks:
        if is_heading:
            pending = start if pending is None else pending
            continue
        out.append((start if pending is None else pending, end))
        pending = None
    if pending is not None:
        out.append((pending, blocks[-1][1]))
    return out


def _blocks_with_kinds(tree: pb.DocumentTree) -> list[tuple[int, int, bool]]:
    return [(b.start_char, b.end_char, b.kind == HEADING) for unit in own_units(tree) for b in unit.blocks]
