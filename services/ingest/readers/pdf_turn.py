"""How a PDF page is turned to be read: by the angle most of its characters are set at, so
that its lines run left to right and follow each other down the page.

A landscape page is often drawn sideways on a portrait page and shown upright by the page's
/Rotate (a CAD drawing, a wide table in a report); a table can be set sideways on a page shown
as it is. Either way its characters are set at 90 or 270 degrees, and read in the page's own
coordinates their lines run down the page: columns, order and paragraphs all come out wrong.
Every position the layout reads (characters, drawings) goes through the page's Turn.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import pypdfium2.raw as pdfium_c

# Characters sampled, spread over the page, to find the angle most are set at.
SAMPLES = 200


@dataclass(frozen=True)
class Turn:
    """A page turned by `angle` degrees (0, 90, 180 or 270) clockwise: the angle its text is set
    at, anticlockwise. `width` and `height` are the page's own, unturned."""

    angle: int
    width: float
    height: float

    @property
    def size(self) -> tuple[float, float]:
        """The turned page's width and height."""
        return (self.height, self.width) if self.angle in (90, 270) else (self.width, self.height)

    def point(self, x: float, y: float) -> tuple[float, float]:
        """A point of the page (PDF space: from its bottom left, y up) on the turned page, from its
        top left with y down, as the layout reads positions."""
        if self.angle == 90:
            return y, x
        if self.angle == 180:
            return self.width - x, y
        if self.angle == 270:
            return self.height - y, self.width - x
        return x, self.height - y

    def box(self, left: float, bottom: float, right: float, top: float) -> tuple[float, float, float, float]:
        """A box of the page (PDF space) on the turned page: (x0, top, x1, bottom), y down."""
        (ax, ay), (bx, by) = self.point(left, bottom), self.point(right, top)
        return min(ax, bx), min(ay, by), max(ax, bx), max(ay, by)


def page_turn(textpage, pdf_page) -> Turn:
    """The turn that sets most of the page's characters upright (more than half of SAMPLES
    spread over it; else none): a rotated label or a sideways table header on an upright
    page does not turn it. PDFium gives the page's size as shown (after /Rotate), its
    characters' positions in the page's own space."""
    width, height = pdf_page.get_size()
    if pdf_page.get_rotation() in (90, 270):
        width, height = height, width
    count = pdfium_c.FPDFText_CountChars(textpage)
    matrix = pdfium_c.FS_MATRIX()
    angles: Counter[int] = Counter()
    for index in range(0, count, max(1, count // SAMPLES)):
        if pdfium_c.FPDFText_GetMatrix(textpage, index, matrix):
            angles[round(math.degrees(math.atan2(matrix.b, matrix.a)) / 90) % 4 * 90] += 1
    angle, seen = angles.most_common(1)[0] if angles else (0, 0)
    return Turn(angle if seen * 2 > sum(angles.values()) else 0, width, height)
