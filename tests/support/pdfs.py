"""PDFs the tests and benchmarks generate with fpdf2, with what a reader
should find in them (headings with their levels and pages).

`book` is a handbook of any length: a title, chapters that open a page,
sections, body paragraphs, a running header and a "Page n" footer; with
or without an outline (bookmarks), its fonts are the same either way.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timezone

from fpdf import FPDF

WORDS = (
    "retrieval chunk document section article paragraph policy employee leave contract payment "
    "invoice customer service quality report annual budget market growth risk control audit data "
    "model system process review approval deadline meeting team project result value"
).split()
HEADER = "ChunkLab Employee Handbook - internal"
CREATED = datetime(2024, 3, 5, 9, 30, tzinfo=timezone.utc)
# Font sizes in points: title, chapter, section, body.
TITLE_SIZE, CHAPTER_SIZE, SECTION_SIZE, BODY_SIZE = 22, 16, 13, 10


@dataclass
class Generated:
    data: bytes
    headings: list[tuple[int, str, int]] = field(default_factory=list)  # (level, title, page)
    pages: int = 0


class _Book(FPDF):
    """Running header and footer on every page but the first."""

    furniture = True

    def header(self) -> None:
        if self.furniture and self.page_no() > 1:
            self.set_font("Helvetica", "", 8)
            self.cell(0, 6, HEADER, align="C")
            self.ln(10)

    def footer(self) -> None:
        if self.furniture and self.page_no() > 1:
            self.set_y(-15)
            self.set_font("Helvetica", "", 8)
            self.cell(0, 10, f"Page {self.page_no()}", align="C")


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 18))).capitalize() + "."


def new_pdf(title: str = "Employee Handbook", author: str = "People Team") -> _Book:
    pdf = _Book(format="A4")
    pdf.set_title(title)
    pdf.set_author(author)
    pdf.set_creation_date(CREATED)
    pdf.set_auto_page_break(True, margin=20)
    pdf.set_margins(20, 15, 20)
    return pdf


def heading(pdf: _Book, out: Generated, level: int, title: str, size: int, outline: bool) -> None:
    pdf.set_font("Helvetica", "B", size)
    if pdf.will_page_break(size * 1.5):
        pdf.add_page()
    if outline:
        pdf.start_section(title, level=level - 1)
    pdf.multi_cell(0, size * 0.5, title, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)
    out.headings.append((level, title, pdf.page_no()))


def paragraph(pdf: _Book, text: str) -> None:
    pdf.set_font("Helvetica", "", BODY_SIZE)
    pdf.multi_cell(0, 5, text, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)


def book(pages: int = 100, outline: bool = True, seed: int = 1) -> Generated:
    """A handbook of `pages` pages: chapter k opens a page every ~10 pages,
    sections of about four paragraphs under it."""
    rng = random.Random(seed)
    pdf = new_pdf()
    out = Generated(b"")
    pdf.add_page()
    heading(pdf, out, 1, "Employee Handbook", TITLE_SIZE, outline)
    chapter = 0
    while True:
        chapter += 1
        if chapter > 1:
            pdf.add_page()
        heading(pdf, out, 2, f"Chapter {chapter}: {rng.choice(WORDS).capitalize()} rules", CHAPTER_SIZE, outline)
        for section in range(1, 7):
            heading(pdf, out, 3, f"{chapter}.{section} {rng.choice(WORDS).capitalize()} and "
                    f"{rng.choice(WORDS)}", SECTION_SIZE, outline)
            for _ in range(rng.randint(3, 5)):
                paragraph(pdf, " ".join(sentence(rng) for _ in range(rng.randint(3, 6))))
                if pdf.page_no() >= pages:
                    break
            if pdf.page_no() >= pages:
                break
        if pdf.page_no() >= pages:
            break
    out.pages = pdf.page_no()
    out.data = bytes(pdf.output())
    return out
