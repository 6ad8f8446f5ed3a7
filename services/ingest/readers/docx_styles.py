"""What a Word paragraph's style means for the tree: heading level, list-ness, numbering.

Title is heading level 1; `Heading n` and w:outlineLvl n - 1 are n + 1
(the reader shifts every level up by one when the document has no Title).
A style's numbering (w:numPr, as numbered Heading styles carry it) applies
to its paragraphs unless they name their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from docx.enum.style import WD_STYLE_TYPE
from docx.oxml.ns import qn

from services.ingest.readers.docx_inline import is_monospace, run_font

_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
_CODE_STYLE = re.compile(r"\b(?:code|preformatted|verbatim|macro text)\b")


def outline_level(element) -> int | None:
    """w:outlineLvl as a heading level (0 -> 1), None for body text (9) or none."""
    ppr = element.find(qn("w:pPr")) if element is not None else None
    level = ppr.find(qn("w:outlineLvl")) if ppr is not None else None
    if level is None:
        return None
    try:
        value = int(level.get(qn("w:val"), "9"))
    except ValueError:
        return None
    return value + 1 if value < 9 else None


def num_pr(element) -> tuple[int | None, int | None] | None:
    """(numId, ilvl) of the w:numPr under an element's w:pPr, None when it has none."""
    ppr = element.find(qn("w:pPr")) if element is not None else None
    numbering = ppr.find(qn("w:numPr")) if ppr is not None else None
    if numbering is None:
        return None

    def value(name: str) -> int | None:
        child = numbering.find(qn(name))
        try:
            return int(child.get(qn("w:val"))) if child is not None else None
        except (TypeError, ValueError):
            return None

    return value("w:numId"), value("w:ilvl")


@dataclass(frozen=True)
class StyleMeaning:
    level: int | None  # heading level (0 for Title), None for body text
    names: str  # lower-case names of the style and its bases
    numbering: tuple[int | None, int | None] | None  # the style's (numId, ilvl)
    code: bool = False  # a code style: named so ("Source Code", "HTML Preformatted") or monospaced

    def named(self, word: str) -> bool:
        """Whether a name of the style or its bases holds the word ("list" is not in "Listing")."""
        return re.search(rf"\b{word}\b", self.names) is not None


class Styles:
    """Each paragraph style's meaning, resolved once per style.

    python-docx looks a paragraph's style up by scanning every style, per
    paragraph; a 100-page document spent most of its parse there.
    """

    def __init__(self, document) -> None:
        self._by_id = {style.style_id: style for style in document.styles if style.style_id}
        default = document.styles.default(WD_STYLE_TYPE.PARAGRAPH)
        self._default_id = default.style_id if default is not None else None
        self._cache: dict[str | None, StyleMeaning] = {}

    def resolve(self, style_id: str | None) -> StyleMeaning:
        style_id = style_id or self._default_id
        if style_id not in self._cache:
            level, names, numbering, fonts = None, [], None, []
            style = self._by_id.get(style_id)
            while style is not None:
                name = (style.name or "").lower()
                names.append(name)
                fonts.append(run_font(style.element))
                if level is None:
                    match = _HEADING_STYLE.match(name)
                    level = 0 if name == "title" else int(match.group(1)) if match else outline_level(style.element)
                if numbering is None:
                    numbering = num_pr(style.element)
                style = style.base_style
            font = next((f for f in fonts if f), "")
            code = _CODE_STYLE.search(" ".join(names)) is not None or is_monospace(font)
            self._cache[style_id] = StyleMeaning(level, " ".join(names), numbering, code and level is None)
        return self._cache[style_id]


def paragraph_style_id(p) -> str | None:
    ppr = p.find(qn("w:pPr"))
    style = ppr.find(qn("w:pStyle")) if ppr is not None else None
    return style.get(qn("w:val")) if style is not None else None


def heading_level(p, styles: Styles) -> int | None:
    """1 for Title; n + 1 for `Heading n` or w:outlineLvl n - 1; None for body text."""
    level = outline_level(p)
    if level is not None:
        return level + 1
    level = styles.resolve(paragraph_style_id(p)).level
    return None if level is None else level + 1
