"""Sentence splitting with character offsets, for the twelve languages.

Shared by the chunker (semantic, sentence_window, hybrid strategies) and the
evaluator (extractive answers). `split(text, language)` returns (start, end)
spans such that text[start:end] is one sentence, trimmed of surrounding
whitespace, in document order and never overlapping. Every non-whitespace
character of the text lies in exactly one span.

How:
1. The text is cut into blocks first: those its document's tree gives (`within`,
   chunklab.text.structure), or for a text without one the blocks of chunklab.text.markdown.scan
   (the scanner ingest and `recursive` share), each list item and each table
   row on its own, and at blank lines inside a block (in code). A sentence
   never crosses a block, so a heading without a full stop does not swallow
   the paragraph under it; a `# comment` inside fenced code is code.
2. Each block goes through sentencex (Wikimedia's rule-based segmenter, MIT,
   offline, with abbreviation lists for ~300 languages: "Dr.", "z.B.",
   "e.g.", decimals, ellipses, closing quotes after the full stop). Blocks are
   passed one at a time: sentencex slows down badly on long inputs.
   A heading, a table row or a thematic break is one sentence whatever its
   full stops ("## Article 1. Scope").
3. Full-width terminators 。！？ (and Arabic ؟) end a sentence in any language,
   also where no space follows, unless a Japanese quotative particle (と, って)
   continues the sentence after a closing bracket: 「行こう。」と言った。 is one.
4. A sentence that ends in a title or an abbreviation that never ends one
   (French "M.", "Mme.", Dutch "Mevr.", Russian "т.е.", Indonesian "Bpk." …,
   where sentencex's lists fall short) runs on into the next.
"""

from __future__ import annotations

import re

import sentencex

from chunklab.text import markdown

# Languages whose rules sentencex knows under another code, and documents
# whose language is unknown ("und"): English rules are the broadest default.
_LANGUAGE_ALIASES = {"": "en", "und": "en"}

# Blocks that are one sentence each, whatever their full stops.
_WHOLE = (markdown.Kind.HEADING, markdown.Kind.TABLE_ROW, markdown.Kind.THEMATIC_BREAK)
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
_WIDE_END = re.compile(r"[。！？!?]*[。！？؟][」』”’）)》】〕\"']*")
_WIDE_TERMINATOR = re.compile(r"[。！？؟]")  # what every _WIDE_END match ends with
_QUOTATIVE = ("と", "って")
_CLOSERS = "」』”’）)》】〕\"'"
_WHITESPACE = frozenset(" \t\r\n\f\v\u00a0\u2028\u2029\u3000\u200b\ufeff")

# Words with a full stop that stand before what they qualify, so never end a
# sentence: titles before a name, and abbreviations like "i.e." that introduce
# what follows. Matched as a sentence's last word, as written or with a
# capital first letter (at the start of a sentence). Abbreviations that can
# end a sentence ("etc.", "usw.", "и т.д.") are not here.
NEVER_LAST = {
    "en": {"Mr.", "Mrs.", "Ms.", "Dr.", "Prof.", "e.g.", "i.e.", "vs.", "cf."},
    "de": {"Hr.", "Fr.", "Dr.", "Prof.", "z.B.", "d.h.", "u.a.", "bzw.", "vgl.", "ggf.", "Nr.", "sog."},
    "fr": {"M.", "MM.", "Mme.", "Mmes.", "Mlle.", "Mlles.", "Dr.", "Pr.", "Me.", "Mgr.", "cf.", "c.-à-d.", "p.ex."},
    "es": {"Sr.", "Sra.", "Srta.", "Sres.", "Dr.", "Dra.", "D.", "Dña.", "Ud.", "Uds.", "p.ej."},
    "pt": {"Sr.", "Sra.", "Srta.", "Dr.", "Dra.", "D.", "p.ex."},
    "it": {"Sig.", "Sigg.", "Sig.ra", "Dott.", "Dott.ssa", "Prof.", "Ing.", "Avv.", "p.es."},
    "nl": {"Dhr.", "Mevr.", "Mw.", "Dr.", "Prof.", "Ir.", "Drs.", "o.a.", "d.w.z.", "m.a.w.", "bijv.", "bv."},
    "id": {"Bpk.", "Bp.", "Sdr.", "Sdri.", "Dr.", "Prof.", "Ir.", "Hj.", "drg.", "mis."},
    "ru": {"т.е.", "т.к.", "т.н.", "см.", "напр.", "им.", "ул.", "проф.", "акад.", "тов."},
}


def split(text: str, language: str = "en", within: list[tuple[int, int, bool]] | None = None) -> list[tuple[int, int]]:
    """Sentence spans (start, end) in code points, trimmed, in order. `within`: the blocks to
    split, (start, end, whole) as `blocks` gives them, when the document's tree says what they
    are (chunklab.text.structure.sentence_blocks); by default the text's Markdown blocks."""
    language = _LANGUAGE_ALIASES.get(language, language).split("-")[0].lower() or "en"
    spans: list[tuple[int, int]] = []
    for block_start, block_end, whole in blocks(text) if within is None else within:
        if whole:
            a, b = trim(text, block_start, block_end)
            if a < b:
                spans.append((a, b))
            continue
        block = text[block_start:block_end]
        first = len(spans)
        wide = _WIDE_TERMINATOR.search(block) is not None  # most blocks have none: no sentence to look into
        for piece in _boundaries(language, block):
            start = block_start + piece["start_index"]
            end = block_start + piece["end_index"]
            for a, b in _split_wide(text, start, end) if wide else ((start, end),):
                a, b = trim(text, a, b)
                if a >= b:
                    continue
                if spans and spans[-1][1] == a and text[a - 1] in _CLOSERS and text.startswith(_QUOTATIVE, a):
                    spans[-1] = (spans[-1][0], b)  # 「…。」と言った。 is one sentence
                else:
                    spans.append((a, b))
        spans[first:] = _join_after_abbreviations(text, spans[first:], NEVER_LAST.get(language, ()))
    return spans


_SPACE_LIKE = re.compile(r"[^\S ]")  # every whitespace but the plain space (non-break, tab, ...)
# Where sentencex panics: an ASCII capital, whitespace holding a multi-byte space, a full stop.
_PANICS = re.compile(r"[A-Z]\s*[^\S\x00-\x7f]\s*\.")


def _boundaries(language: str, block: str) -> list[dict]:
    """sentencex's sentences of one block. sentencex panics on some blocks (a capital, a non-break
    space and a full stop, "D\u00a0.": it slices inside the space's bytes), and its panic writes a
    Rust backtrace to the process's stderr before Python sees it. A block of that shape is read
    with its other whitespace as plain spaces from the start (the same code points, so the offsets
    hold); a block that panics all the same is read so afterwards, and failing that it is one
    sentence."""
    if not block.isascii() and _PANICS.search(block):  # the shape needs a multi-byte space
        block = _SPACE_LIKE.sub(" ", block)
    try:
        return sentencex.get_sentence_boundaries(language, block)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # pyo3's PanicException derives from BaseException
        pass
    try:
        return sentencex.get_sentence_boundaries(language, _SPACE_LIKE.sub(" ", block))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:
        return [{"start_index": 0, "end_index": len(block)}]


def _join_after_abbreviations(text: str, spans: list[tuple[int, int]], never_last) -> list[tuple[int, int]]:
    """Runs a sentence that ends in one of `never_last` on into the next (one block's spans)."""
    if not never_last or len(spans) < 2:
        return spans
    joined = [spans[0]]
    for a, b in spans[1:]:
        start, end = joined[-1]
        words = text[start:end].split()
        last = words[-1] if words else ""
        if last in never_last or last[:1].lower() + last[1:] in never_last:
            joined[-1] = (start, b)
        else:
            joined.append((a, b))
    return joined


def sentences(text: str, language: str = "en") -> list[str]:
    """The sentences themselves (convenience for callers that need no offsets)."""
    return [text[a:b] for a, b in split(text, language)]


def blocks(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, whole) of the ranges of text that no sentence crosses, in
    order; `whole` when the range is one sentence (a heading, a table row, a
    thematic break)."""
    found: list[tuple[int, int, bool]] = []
    for block in markdown.scan(text):
        if block.kind is markdown.Kind.BLANK:
            continue
        for part in block.children or (block,):  # each list item, each table row
            if part.kind in _WHOLE:
                found.append((part.start, part.end, True))
            elif part.kind is markdown.Kind.PARAGRAPH:
                found.append((part.start, part.end, False))
            else:
                found += [(a, b, False) for a, b in between_blank_lines(text, part.start, part.end)]
    return found


def between_blank_lines(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """[start, end) cut at its blank lines (code, comments, a list item with
    code in it)."""
    found = []
    for match in _LINE.finditer(text, start, end):
        line_start, line_end = match.span()
        if line_start == line_end:
            break
        if not match.group().strip():
            if start < line_start:
                found.append((start, line_start))
            start = line_end
    if start < end:
        found.append((start, end))
    return found


def _split_wide(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Cuts after full-width (CJK) and Arabic terminators inside one span."""
    cuts = []
    for match in _WIDE_END.finditer(text, start, end):
        cut = match.end()
        if cut >= end:
            continue
        closed = match.group()[-1] in _CLOSERS
        if closed and text.startswith(_QUOTATIVE, cut):
            continue
        if match.group()[-1] == "؟" and text[cut] not in _WHITESPACE:
            continue
        cuts.append(cut)
    if not cuts:
        return [(start, end)]
    bounds = [start, *cuts, end]
    return list(zip(bounds, bounds[1:]))


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """The range without whitespace at either end (empty when all blank)."""
    while start < end and text[start] in _WHITESPACE:
        start += 1
    while end > start and text[end - 1] in _WHITESPACE:
        end -= 1
    return start, end
