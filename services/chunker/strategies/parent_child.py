"""parent_child: structural parents, paragraph children.

The three parent levels read the DocumentTree only, so they mean the same on
Markdown, DOCX and any later reader, with or without a title (ADR 0043):
- article: a unit, i.e. a section's own content (its heading line and the
  blocks before its first subsection), or the content before the first
  heading: the deepest heading level above the paragraphs;
- section: a top-level part of the document with everything under it. A
  title (the tree's only top-level section) is not a level: its
  subsections are the parts, and its own content is a parent of its own,
  like the content before the first heading;
- paragraph: one block.
"""

from __future__ import annotations

from chunklab.v1 import chunker_pb2, common_pb2
from chunklab.v1 import documents_pb2 as pb
from services.chunker.strategies.base import REGISTRY, ChunkingContext, Knob, SourceDocument, Strategy
from services.chunker.strategies.families import Family, capped, family_chunks
from services.chunker.strategies.spans import NEWLINE, Spans
from services.chunker.strategies.structure import HEADING, SECTION, has_tree, own_units, paragraph_ranges, top_sections

LEVELS = ("article", "section", "paragraph")


@REGISTRY.register
class ParentChild(Strategy):
    name = "parent_child"
    expansion = common_pb2.EXPANSION_KIND_PARENT
    description = (
        "Searches paragraph children and returns their structural parent: the article (deepest heading "
        "level above the paragraphs), the top-level part it is in (below the title, if any), or the "
        "paragraph itself."
    )
    knobs = (
        Knob(
            "parent_level",
            chunker_pb2.KNOB_TYPE_CHOICE,
            "article",
            "What a parent is: article = the deepest heading level above the paragraphs, section = a "
            "top-level part of the document with all its articles (a title, the document's only top-level "
            "heading, is not a level), paragraph = one paragraph.",
            choices=LEVELS,
        ),
        Knob(
            "child_max_tokens",
            chunker_pb2.KNOB_TYPE_INT,
            256,
            "Hard maximum tokens per child; longer paragraphs are cut into pieces.",
            16,
            8192,
        ),
        Knob(
            "parent_max_tokens",
            chunker_pb2.KNOB_TYPE_INT,
            2048,
            "Hard maximum tokens per parent; a bigger one is cut between its children. Without headings, "
            "paragraphs are grouped up to this size.",
            16,
            32768,
        ),
    )

    def chunk(self, source: SourceDocument, context: ChunkingContext | None = None):
        """Children are the blocks under a parent (paragraphs, lists, tables,
        code; heading lines stay in the parent only), cut into pieces of at
        most child_max_tokens. Parents are exact slices from their heading to
        their last block (ADR 0012)."""
        text = source.text
        index = Spans.of(source)
        level = self.values["parent_level"]
        if _has_headings(source.tree):
            families = self._families(source, level, index)
        else:  # no headings: paragraph groups (or single paragraphs)
            ranges = paragraph_ranges(text, source.tree)
            if level == "paragraph":
                families = [Family(a, b, [], self._children(index, [(a, b)])) for a, b in ranges]
            else:
                families = [Family(ranges[0][0], ranges[-1][1], [], self._children(index, ranges))] if ranges else []
        families = [f for family in families for f in capped(index, family, self.values["parent_max_tokens"])]
        return family_chunks(self, source, index, families)

    def _children(self, index: Spans, ranges: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
        limit = self.values["child_max_tokens"]
        out = []
        for start, end in ranges:
            count = index.exact(start, end)
            out += [(start, end, count)] if count <= limit else index.split(start, end, limit, level=NEWLINE)
        return out

    def _families(self, source: SourceDocument, level: str, index: Spans) -> list[Family]:
        units = own_units(source.tree)
        if level == "paragraph":
            return [
                Family(b.start_char, b.end_char, unit.heading_path, self._children(index, [(b.start_char, b.end_char)]))
                for unit in units
                for b in unit.blocks
                if b.kind != HEADING
            ]
        if level == "article":
            return [
                Family(u.start, u.end, u.heading_path, self._children(index, u.block_ranges(headings=False)))
                for u in units
            ]
        # section: a top-level part's own unit comes first and opens its
        # parent; the units inside the part join it, so parents never
        # overlap. Units outside every part (before the first heading, the
        # title's own content) are parents of their own.
        parts = {s.start_char: s for s in top_sections(source.tree)}
        families: list[Family] = []
        open_until = -1
        for unit in units:
            children = self._children(index, unit.block_ranges(headings=False))
            if families and unit.start < open_until:
                families[-1].children += children
                families[-1].end = max(families[-1].end, unit.end)
                continue
            owner = parts.get(unit.section.start_char) if unit.section is not None else None
            if owner is None:
                families.append(Family(unit.start, unit.end, unit.heading_path, children))
                open_until = -1
            else:
                families.append(Family(owner.start_char, unit.end, list(owner.heading_path), children))
                open_until = owner.end_char
        return families


def _has_headings(tree: pb.DocumentTree) -> bool:
    return has_tree(tree) and any(c.kind == SECTION for c in tree.root.children)
