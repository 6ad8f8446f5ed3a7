"""Right-to-left lines of a PDF page in logical order (ADR 0099).

A PDF draws its glyphs where they show, left to right; PDFium's text puts
a right-to-left line back into reading order itself, but not faithfully: a
glyph that stands for two letters (Arabic lam-alef, "لأ") keeps its letters
the wrong way round ("أل"), a comma or bracket beside a number lands on the
wrong side of it, and a space after a Latin word moves. So each line that
holds right-to-left letters is rebuilt from where its glyphs are drawn:
letters sorted left to right by their boxes (the visual order), spaces put
back at the widest gaps between them, and the Unicode bidirectional
algorithm (python-bidi, with bracket mirroring) turns that visual order into
logical order. The line keeps its length, so PDFium's text indices still
name its characters' boxes.
"""

from __future__ import annotations

import ctypes
import re

import pypdfium2.raw as pdfium_c
from bidi.algorithm import get_display

# Hebrew, Arabic, Syriac, Thaana, NKo ... and their presentation forms.
_RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]")


def _visual(raw, text: str, begin: int) -> str | None:
    """The line's characters in drawing order, left to right, its spaces at
    the widest gaps between glyphs; None where PDFium has no box for one."""
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    glyphs: list[tuple[float, float, int, str]] = []
    for offset, char in enumerate(text):
        if char.isspace():
            continue
        index = pdfium_c.FPDFText_GetCharIndexFromTextIndex(raw, begin + offset)
        if index < 0 or not pdfium_c.FPDFText_GetCharBox(raw, index, left, right, bottom, top):
            return None
        glyphs.append((round(left.value, 2), right.value, offset, char))
    # Two letters of one glyph share its box: they stay in the order PDFium
    # gives them, which is the drawing order of the glyph's letters.
    glyphs.sort(key=lambda g: (g[0], g[2]))
    spaces = len(text) - len(glyphs)
    gaps = sorted(range(1, len(glyphs)), key=lambda i: glyphs[i][0] - glyphs[i - 1][1], reverse=True)
    wide = set(gaps[:spaces])
    pieces = []
    for i, glyph in enumerate(glyphs):
        if i in wide:
            pieces.append(" ")
        pieces.append(glyph[3])
    visual = "".join(pieces)
    return visual + " " * (len(text) - len(visual))


def logical_line(raw, text: str, begin: int) -> str:
    """One line of PDFium's text (starting at text index `begin`) in logical
    order when it holds right-to-left letters; as it was otherwise."""
    core = text.strip()
    if not core or not _RTL.search(core):
        return text
    lead = len(text) - len(text.lstrip())
    visual = _visual(raw, core, begin + lead)
    if visual is None:
        return text
    logical = get_display(visual, base_dir="R")
    if len(logical) != len(core):
        return text
    return text[:lead] + logical + text[lead + len(core) :]


def logical_text(raw, text: str) -> str:
    """A page's text (PDFium's, lines split by CR LF) with every line that holds
    right-to-left letters in logical order; the same length as `text`."""
    if not _RTL.search(text):
        return text
    out, position = [], 0
    for piece in text.split("\r\n"):
        out.append(logical_line(raw, piece, position))
        position += len(piece) + 2
    return "\r\n".join(out)
