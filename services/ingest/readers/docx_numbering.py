"""Word's list numbering: the label a numbered paragraph shows ("2.", "1.3.", "b)").

A paragraph is numbered by a w:numPr (its own, or its style's: numbered
headings take theirs from the Heading styles). The w:numId names a w:num,
which names an abstract definition whose w:lvl gives each level's format
(decimal, letters, roman, bullet), its start and its text ("%1.%2.").
Counters run per abstract definition, as Word shows them: a level counts up,
the levels below it start again, and a level skipped on the way down counts
from its start (a 2.1.1 right under 2 reads 2.1.1). A numId the part does
not define, or a document without a numbering part, is reported by the
caller as read as bullets.
"""

from __future__ import annotations

from dataclasses import dataclass

from docx.oxml.ns import qn

_ROMAN = [(1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc")]
_ROMAN += [(50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")]


@dataclass(frozen=True)
class Level:
    fmt: str  # w:numFmt: decimal, bullet, lowerLetter, upperRoman, none, ...
    text: str  # w:lvlText: "%1.%2."
    start: int


def _roman(n: int) -> str:
    out = []
    for value, digits in _ROMAN:
        while n >= value:
            out.append(digits)
            n -= value
    return "".join(out)


def _letters(n: int) -> str:
    # Word's letters repeat past z: a..z, aa..zz, aaa..
    n = max(n, 1)
    return chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1)


def format_number(n: int, fmt: str) -> str:
    if fmt in ("lowerLetter", "upperLetter"):
        text = _letters(n)
        return text.upper() if fmt == "upperLetter" else text
    if fmt in ("lowerRoman", "upperRoman"):
        text = _roman(n)
        return text.upper() if fmt == "upperRoman" else text
    if fmt == "decimalZero":
        return f"{n:02d}"
    return str(n)


def _int(element, default: int) -> int:
    try:
        return int(element.get(qn("w:val"))) if element is not None else default
    except (TypeError, ValueError):
        return default


class Numbering:
    """The numbering part of one document, and the counters as the body is read in order."""

    def __init__(self, numbering_element) -> None:
        self._abstract: dict[int, dict[int, Level]] = {}
        self._num: dict[int, tuple[int, dict[int, int]]] = {}
        self._counters: dict[int, dict[int, int]] = {}
        self._started: set[int] = set()
        if numbering_element is None:
            return
        for abstract in numbering_element.findall(qn("w:abstractNum")):
            levels = {}
            for lvl in abstract.findall(qn("w:lvl")):
                fmt = lvl.find(qn("w:numFmt"))
                text = lvl.find(qn("w:lvlText"))
                levels[int(lvl.get(qn("w:ilvl"), "0"))] = Level(
                    fmt.get(qn("w:val"), "decimal") if fmt is not None else "decimal",
                    text.get(qn("w:val"), "") if text is not None else "",
                    _int(lvl.find(qn("w:start")), 1),
                )
            self._abstract[int(abstract.get(qn("w:abstractNumId"), "-1"))] = levels
        for num in numbering_element.findall(qn("w:num")):
            abstract_id = _int(num.find(qn("w:abstractNumId")), -1)
            overrides = {
                int(o.get(qn("w:ilvl"), "0")): _int(o.find(qn("w:startOverride")), 1)
                for o in num.findall(qn("w:lvlOverride"))
                if o.find(qn("w:startOverride")) is not None
            }
            self._num[int(num.get(qn("w:numId"), "-1"))] = (abstract_id, overrides)

    def level(self, num_id: int, ilvl: int) -> Level | None:
        """The level's definition, None when the document does not define it."""
        abstract_id, _ = self._num.get(num_id, (-1, {}))
        return self._abstract.get(abstract_id, {}).get(ilvl)

    def label(self, num_id: int, ilvl: int) -> str | None:
        """Counts the paragraph and returns its label ("1.2."), "" for a bullet or an
        unnumbered level, None when the definition is missing."""
        level = self.level(num_id, ilvl)
        if level is None:
            return None
        abstract_id, overrides = self._num[num_id]
        levels = self._abstract[abstract_id]
        counters = self._counters.setdefault(abstract_id, {})
        if num_id not in self._started:
            self._started.add(num_id)
            for lvl, start in overrides.items():
                counters[lvl] = start - 1
        for upper in range(ilvl):
            if counters.get(upper, 0) == 0 and upper in levels:
                counters[upper] = levels[upper].start
        counters[ilvl] = counters.get(ilvl, level.start - 1) + 1
        for deeper in [k for k in counters if k > ilvl]:
            del counters[deeper]
        if level.fmt in ("bullet", "none"):
            return ""
        label = level.text
        for lvl in range(ilvl, -1, -1):
            fmt = levels[lvl].fmt if lvl in levels else "decimal"
            label = label.replace(f"%{lvl + 1}", format_number(counters.get(lvl, 1), fmt))
        return label.strip()
