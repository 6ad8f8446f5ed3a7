"""A Word paragraph's own text, read from its XML, and what it carries besides text.

python-docx reads a paragraph's runs and hyperlinks but not what sits in
other containers: inline content controls (w:sdt), fields (w:fldSimple),
smart tags, tracked insertions, equations (m:oMath, written as LaTeX
between $), symbols (w:sym). Those are read here, in document order.
Tracked deletions (w:del, w:delText), field codes (w:instrText) and ruby
annotations are not text a reader sees, so they are left out.

Drawings can hold text boxes (w:txbxContent) with whole paragraphs and
tables of their own: they are returned to the body reader, which reads
them as blocks after the paragraph they are anchored in. Of a
mc:AlternateContent the first mc:Choice is read, its mc:Fallback only when
the choice holds nothing (both hold the same text box, so reading both would
double it). Pictures, charts and embedded objects hold no text that can be
read; they are counted so that the reader can say so.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from lxml import etree

from services.ingest.readers.docx_math import M, equation

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
_PIC = "http://schemas.openxmlformats.org/drawingml/2006/picture"
_CHART = "http://schemas.openxmlformats.org/drawingml/2006/chart"
_VML = "urn:schemas-microsoft-com:vml"
_OFFICE = "urn:schemas-microsoft-com:office:office"

# Containers whose children are read as if they stood in the paragraph itself.
_TRANSPARENT = {"r", "hyperlink", "ins", "moveTo", "smartTag", "customXml", "fldSimple", "dir", "bdo", "rubyBase"}
_SKIPPED = {"del", "moveFrom", "delText", "instrText", "delInstrText", "rt", "commentReference", "annotationRef"}
_NOTE_REFERENCES = {"footnoteReference": "footnote", "endnoteReference": "endnote"}


@dataclass
class Inline:
    """What one paragraph holds: its text, the text boxes anchored in it, and counts."""

    parts: list[str] = field(default_factory=list)
    boxes: list = field(default_factory=list)  # w:txbxContent elements
    counts: Counter = field(default_factory=Counter)
    display_math: list[str] = field(default_factory=list)
    # Characters of text (spaces aside) in all and in a monospaced font: code looks like this.
    letters: int = 0
    monospaced: int = 0
    font: str = ""  # the first run's font
    # What a reference to a footnote or an endnote reads as, given ("footnote", its w:id): its mark.
    mark: Callable[[str, str], str] | None = None

    def text(self) -> str:
        return " ".join("".join(self.parts).split())

    def raw(self) -> str:
        """The text as typed, its indentation kept: a line of code."""
        return "".join(self.parts).replace("\t", "    ").rstrip()


def _local(element) -> tuple[str, str]:
    if not isinstance(element.tag, str):
        return "", ""
    name = etree.QName(element)
    return name.namespace or "", name.localname


def read_inline(p, mark: Callable[[str, str], str] | None = None) -> Inline:
    """The paragraph's text; a reference to a note reads as `mark` makes it (left out without)."""
    inline = Inline(mark=mark)
    for child in p:
        _walk(child, inline)
    return inline


def _walk(element, inline: Inline) -> None:
    namespace, name = _local(element)
    if namespace == M:
        if name == "oMathPara":
            inline.display_math.append(equation(element))
            inline.counts["equations"] += 1
        elif name == "oMath":
            inline.parts.append(f" ${equation(element)}$ ")
            inline.counts["equations"] += 1
        return
    if namespace == MC and name == "AlternateContent":
        _alternate(element, inline)
        return
    if namespace != W:
        _objects(element, inline)
        return
    if name in _NOTE_REFERENCES:
        if inline.mark is not None:
            inline.parts.append(inline.mark(_NOTE_REFERENCES[name], element.get(f"{{{W}}}id", "")))
        return
    if name in _SKIPPED or name.endswith("Pr"):
        return
    if name == "t":
        text = element.text or ""
        inline.parts.append(text)
        letters = len(text) - text.count(" ")
        inline.letters += letters
        font = run_font(element.getparent())
        inline.monospaced += letters if is_monospace(font) else 0
        inline.font = inline.font or (font if letters else "")
    elif name in ("tab", "ptab"):
        inline.parts.append("\t")
    elif name in ("br", "cr"):
        inline.parts.append("\n")
    elif name == "noBreakHyphen":
        inline.parts.append("-")
    elif name == "sym":
        _symbol(element, inline)
    elif name == "sdt":
        content = element.find(f"{{{W}}}sdtContent")
        if content is not None:
            inline.counts["content controls"] += 1 if _has_text(content) else 0
            for child in content:
                _walk(child, inline)
    elif name in _TRANSPARENT:
        for child in element:
            _walk(child, inline)
    elif name in ("drawing", "pict", "object"):
        _objects(element, inline)


_MONOSPACE = re.compile(r"mono|courier|consol|menlo|monaco|code|inconsolata|typewriter|fixedsys", re.IGNORECASE)


def run_font(properties_holder) -> str:
    """The font a run (or a style, given its element) names for its Latin text, "" if none."""
    rpr = properties_holder.find(f"{{{W}}}rPr") if properties_holder is not None else None
    fonts = rpr.find(f"{{{W}}}rFonts") if rpr is not None else None
    if fonts is None:
        return ""
    return fonts.get(f"{{{W}}}ascii") or fonts.get(f"{{{W}}}hAnsi") or ""


def is_monospace(font: str) -> bool:
    return bool(font) and bool(_MONOSPACE.search(font))


def _has_text(element) -> bool:
    return any((t.text or "").strip() for t in element.iter(f"{{{W}}}t"))


def _symbol(element, inline: Inline) -> None:
    """A w:sym's character, unless it is a private-use code of a symbol font (a Wingdings tick)."""
    try:
        code = int(element.get(f"{{{W}}}char", ""), 16)
    except ValueError:
        return
    if not 0xE000 <= code <= 0xF8FF:
        inline.parts.append(chr(code))


def _alternate(element, inline: Inline) -> None:
    choice = element.find(f"{{{MC}}}Choice")
    fallback = element.find(f"{{{MC}}}Fallback")
    for option in (choice, fallback):
        if option is None:
            continue
        trial = Inline(mark=inline.mark)
        for child in option:
            _walk(child, trial)
        if trial.parts or trial.boxes or trial.counts or trial.display_math:
            inline.parts += trial.parts
            inline.boxes += trial.boxes
            inline.counts += trial.counts
            inline.display_math += trial.display_math
            return


def _objects(element, inline: Inline) -> None:
    """Text boxes (read later as blocks, with whatever they hold), pictures, charts, objects."""
    namespace, name = _local(element)
    if namespace == W and name == "txbxContent":
        inline.boxes.append(element)
        inline.counts["text boxes"] += 1
        return
    if (namespace, name) in ((_PIC, "pic"), (_VML, "imagedata")):
        inline.counts["pictures"] += 1
    elif (namespace, name) in ((_CHART, "chart"), (_OFFICE, "OLEObject")):
        inline.counts["embedded objects"] += 1
    elif namespace == MC and name == "AlternateContent":
        _alternate(element, inline)
        return
    for child in element:
        _objects(child, inline)
