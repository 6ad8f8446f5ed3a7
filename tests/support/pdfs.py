"""PDFs the tests and benchmarks generate with fpdf2, with what a reader
should find in them (headings with their levels and pages).

`book` is a handbook of any length: a title, chapters that open a page,
sections, body paragraphs, a running header and a "Page n" footer; with
or without an outline (bookmarks), its fonts are the same either way
(`without_outline` copies the pages of one that has an outline).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime

from fpdf import FPDF

WORDS = [
    "retrieval",
    "chunk",
    "document",
    "section",
    "article",
    "paragraph",
    "policy",
    "employee",
    "leave",
    "contract",
    "payment",
    "invoice",
    "customer",
    "service",
    "quality",
    "report",
    "annual",
    "budget",
    "market",
    "growth",
    "risk",
    "control",
    "audit",
    "data",
    "model",
    "system",
    "process",
    "review",
    "approval",
    "deadline",
    "meeting",
    "team",
    "project",
    "result",
    "value",
]
HEADER = "ChunkLab Employee Handbook - internal"
CREATED = datetime(2024, 3, 5, 9, 30, tzinfo=UTC)
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


def wrapped_paragraph(pdf: _Book, text: str, widths: dict[str, float]) -> None:
    """`paragraph`, wrapped here one cell per line: fpdf2's own wrapping
    measures a line once per character (13 s for 100 pages)."""
    pdf.set_font("Helvetica", "", BODY_SIZE)
    space = pdf.get_string_width(" ")
    line: list[str] = []
    width = 0.0
    for word in text.split():
        if word not in widths:
            widths[word] = pdf.get_string_width(word)
        if line and width + space + widths[word] > pdf.epw:
            pdf.cell(0, 5, " ".join(line), new_x="LMARGIN", new_y="NEXT")
            line, width = [], 0.0
        width += (space if line else 0) + widths[word]
        line.append(word)
    pdf.cell(0, 5, " ".join(line), new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)


def book(pages: int = 100, outline: bool = True, seed: int = 1) -> Generated:
    """A handbook of `pages` pages: chapter k opens a page every ~10 pages,
    sections of about four paragraphs under it."""
    rng = random.Random(seed)
    pdf = new_pdf()
    out = Generated(b"")
    widths: dict[str, float] = {}
    pdf.add_page()
    heading(pdf, out, 1, "Employee Handbook", TITLE_SIZE, outline)
    chapter = 0
    while True:
        chapter += 1
        if chapter > 1:
            pdf.add_page()
        heading(pdf, out, 2, f"Chapter {chapter}: {rng.choice(WORDS).capitalize()} rules", CHAPTER_SIZE, outline)
        for section in range(1, 7):
            heading(
                pdf,
                out,
                3,
                f"{chapter}.{section} {rng.choice(WORDS).capitalize()} and {rng.choice(WORDS)}",
                SECTION_SIZE,
                outline,
            )
            for _ in range(rng.randint(3, 5)):
                wrapped_paragraph(pdf, " ".join(sentence(rng) for _ in range(rng.randint(3, 6))), widths)
                if pdf.page_no() >= pages:
                    break
            if pdf.page_no() >= pages:
                break
        if pdf.page_no() >= pages:
            break
    out.pages = pdf.page_no()
    out.data = bytes(pdf.output())
    return out


LEFT_COLUMN = (
    "The left column opens the page and is read first by anyone who reads the page, "
    "so its words come before the right column's in the canonical text."
)
RIGHT_COLUMN = (
    "The right column follows it, although this generator draws it first, so the order "
    "of the content stream is the wrong order to read in."
)
TABLE_ROWS = [
    ["Leave type", "Days", "Paid"],
    ["Annual", "25", "yes"],
    ["Parental", "90", "yes"],
    ["Unpaid", "30", "no"],
]


def layout_sample() -> Generated:
    """Four pages without an outline: hyphenation across line breaks, two
    columns drawn right column first, a ruled table, a bullet list; a running
    header and page numbers on every page but the first."""
    pdf = new_pdf("Layout sample", "Layout Team")
    out = Generated(b"")
    pdf.add_page()
    heading(pdf, out, 1, "Layout sample", TITLE_SIZE, False)
    paragraph(
        pdf,
        "Every reader needs an exam-\nple of a word hyphenated at a line break, and a well-\n"
        "known pair that this page also writes as well-known on one line. The COVID-\n"
        "19 rules stay as they are, and so does this sentence.",
    )
    paragraph(pdf, "A second paragraph starts after a gap and ends here.")
    pdf.add_page()
    heading(pdf, out, 2, "Two columns", CHAPTER_SIZE, False)
    top = pdf.get_y()
    pdf.set_font("Helvetica", "", BODY_SIZE)
    for x, text in ((110, RIGHT_COLUMN), (20, LEFT_COLUMN)):
        pdf.set_xy(x, top)
        pdf.multi_cell(80, 5, text)
    pdf.set_y(top + 60)
    pdf.add_page()
    heading(pdf, out, 2, "A table", CHAPTER_SIZE, False)
    pdf.set_font("Helvetica", "", BODY_SIZE)
    with pdf.table(col_widths=(60, 30, 30), text_align="LEFT", first_row_as_headings=False) as table:
        for cells in TABLE_ROWS:
            row = table.row()
            for cell in cells:
                row.cell(cell)
    pdf.ln(4)
    paragraph(pdf, "The table ends above this paragraph.")
    pdf.add_page()
    heading(pdf, out, 2, "A list", CHAPTER_SIZE, False)
    pdf.set_font("Helvetica", "", BODY_SIZE)
    for item in (
        "- First item, long enough that it wraps onto a second line of the list in this generated page of the sample",
        "- Second item",
        "3. Third, numbered as the page numbers it",
        "4. Fourth",
    ):
        pdf.multi_cell(0, 5, item, new_x="LMARGIN", new_y="NEXT")
    out.pages = pdf.page_no()
    out.data = bytes(pdf.output())
    return out


def outline_sample() -> Generated:
    """Two pages with an outline: a bookmark whose title is printed (wrapped
    over two lines, in body type), one whose title is on no page, and one
    that leaves out the section number its heading prints."""
    pdf = new_pdf("Outline sample", "Outline Team")
    pdf.furniture = False
    out = Generated(b"")
    pdf.add_page()
    pdf.start_section("Overview of the leave policy for every employee", level=0)
    pdf.set_font("Helvetica", "", BODY_SIZE)
    pdf.multi_cell(60, 5, "Overview of the leave policy for every employee", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)
    paragraph(pdf, "The overview says what the policy covers.")
    pdf.add_page()
    pdf.start_section("Appendix: figures", level=0)
    paragraph(pdf, "Figures follow without a printed title.")
    pdf.start_section("Definitions", level=1)
    pdf.set_font("Helvetica", "B", SECTION_SIZE)
    pdf.cell(0, 6, "A.1 Definitions", new_x="LMARGIN", new_y="NEXT")
    paragraph(pdf, "The bookmark leaves out the number that the page prints.")
    out.headings = [
        (1, "Overview of the leave policy for every employee", 1),
        (1, "Appendix: figures", 2),
        (2, "A.1 Definitions", 2),
    ]
    out.pages = pdf.page_no()
    out.data = bytes(pdf.output())
    return out


def bold_headings_sample() -> Generated:
    """One page without an outline whose headings are bold at the body's
    size, and a paragraph that opens with a bold lead-in."""
    pdf = new_pdf("Bold sample", "Bold Team")
    pdf.furniture = False
    out = Generated(b"")
    pdf.add_page()
    for number, title in ((1, "Scope"), (2, "Terms and definitions")):
        pdf.set_font("Helvetica", "B", BODY_SIZE)
        pdf.cell(0, 5, f"{number} {title}", new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)
        out.headings.append((1, f"{number} {title}", 1))
        paragraph(pdf, f"Section {number} applies to every document that the team keeps in the archive.")
    pdf.set_font("Helvetica", "", BODY_SIZE)
    pdf.multi_cell(
        0,
        5,
        "**Note:** a bold lead-in opens this paragraph, which is not a heading.",
        markdown=True,
        new_x="LMARGIN",
        new_y="NEXT",
    )
    out.pages = pdf.page_no()
    out.data = bytes(pdf.output())
    return out


def without_outline(data: bytes) -> bytes:
    """The same pages in a new PDF: no outline and no document information.
    (Copying the pages is instant; fpdf2 takes seconds to lay out 100 pages.)"""
    import io

    import pypdfium2 as pdfium

    source, copy = pdfium.PdfDocument(data), pdfium.PdfDocument.new()
    copy.import_pages(source)
    out = io.BytesIO()
    copy.save(out)
    return out.getvalue()


def image_only(vector: bool = False) -> bytes:
    """Two pages with no text: a scanned-looking image, or vector drawing."""
    from PIL import Image

    pdf = FPDF()
    for _ in range(2):
        pdf.add_page()
        if vector:
            pdf.rect(20, 20, 100, 60)
            pdf.line(20, 100, 180, 200)
        else:
            pdf.image(Image.new("RGB", (120, 160), "gray"), x=20, y=20, w=120)
    return bytes(pdf.output())
