"""Generated one-page PDFs, each drawn the way a real producer draws one of
the structures the PDF reader must read faithfully (issue 28): a table ruled
across but not down, a table with a header set sideways, a syntax diagram
drawn like a grid with its letters printed twice, a figure whose labels sit
beside a paragraph, footnotes under a footnote rule, and a right-to-left line
with Latin words in it, a sketch on graph paper drawn as thousands of short
strokes. Coordinates are in points from the top left."""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF

# A font with Arabic letters, where the system has one.
ARABIC_FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")

RESULTS = [
    ["Model", "Accuracy", "Notes"],
    ["Baseline", "71.2", "no tuning"],
    ["Tuned", "84.9", "grid search"],
    ["Ensemble", "86.3", "five seeds"],
]
ROTATED_HEADER = "No Authority"
DIAGRAM_WORDS = ["ENFORCED", "NOT", "CHECK", "UNIQUE"]
FIGURE_SENTENCE = (
    "The measured curve rises steadily over the first hours of the run and then levels off "
    "once the cache is warm, which is the behaviour the model predicts for every workload we tried."
)
FIGURE_AFTER = "A second paragraph follows the figure across the whole width of the page."
FOOTNOTES = ["1 Measured on the 2021 data set.", "2 Estimated from the 2020 census."]
RTL_LOGICAL = "قرأ الأستاذ PDF reader اليوم."
SKETCH_CAPTION = "Sketch of the harbour wall, drawn on squared paper."
SCANNED_LINES = [
    f"Line {n} of the letter, as the scanner's text recognition read it from the old page." for n in range(1, 19)
]
LANDSCAPE_PARAGRAPHS = [
    ["The gland is fitted in four steps, each on its own line of the drawing's notes:", "strip the cable first."],
    ["Tape the screens before the cable goes in, then fold them back over the inner", "surface of the gland."],
    ["Tighten the nut until the gasket is tight; the torques are maximum values."],
]
TYPESET_LINES = ["A typeset page added after the scans, in a smaller type.", "Its second line ends it."]


def _page() -> FPDF:
    pdf = FPDF(unit="pt", format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    return pdf


def table_ruled_across() -> bytes:
    """A three-column table in a frame, with rules between its rows but none
    between its columns (as many reports draw them)."""
    pdf = _page()
    pdf.text(72, 60, "Results of the three runs are below.")
    left, top, width, row = 72, 80, 360, 22
    pdf.rect(left, top, width, row * len(RESULTS))
    for r, cells in enumerate(RESULTS):
        if r:
            pdf.line(left, top + r * row, left + width, top + r * row)
        for x, cell in zip((left + 6, left + 130, left + 230), cells):
            pdf.text(x, top + r * row + 15, cell)
    pdf.text(72, top + row * len(RESULTS) + 30, "The table ends above this sentence.")
    return bytes(pdf.output())


def table_with_rotated_header() -> bytes:
    """A ruled table whose first header cell is written bottom to top."""
    pdf = _page()
    left, top = 72, 80
    widths, heights = (40, 120, 120), (90, 22, 22)
    rows = [[ROTATED_HEADER, "Region", "Cases"], ["1", "North", "120"], ["2", "South", "95"]]
    y = top
    for r, cells in enumerate(rows):
        x = left
        for c, cell in enumerate(cells):
            pdf.rect(x, y, widths[c], heights[r])
            if r == 0 and c == 0:
                with pdf.rotation(90, x + 25, y + heights[r] - 8):
                    pdf.text(x + 25, y + heights[r] - 8, cell)
            else:
                pdf.text(x + 6, y + heights[r] - 7, cell)
            x += widths[c]
        y += heights[r]
    pdf.text(72, y + 30, "Counts are per quarter.")
    return bytes(pdf.output())


def syntax_diagram() -> bytes:
    """Keywords in boxes that touch like a grid, each letter printed twice a
    hair apart (a bold effect), with arrows between the boxes."""
    pdf = _page()
    pdf.text(72, 60, "A syntax diagram follows.")
    for k, word in enumerate(DIAGRAM_WORDS):
        x, y = 80 + 100 * (k % 2), 100 + 30 * (k // 2)
        pdf.rect(x, y, 100, 30)
        for dx in (0, 0.4):
            pdf.text(x + 10 + dx, y + 20, word)
    for x, y in ((150, 122), (250, 152)):
        pdf.line(x, y, x + 8, y - 4)
        pdf.line(x, y, x + 8, y + 4)
    pdf.text(72, 240, "The diagram ends here.")
    return bytes(pdf.output())


def figure_beside_text() -> bytes:
    """A paragraph in the left half of the page and, level with its lines, a
    plotted curve with axis labels in the right half; a paragraph under both."""
    pdf = _page()
    pdf.set_xy(72, 80)
    pdf.multi_cell(220, 14, FIGURE_SENTENCE)
    left, top = 330, 80
    pdf.line(left, top, left, top + 120)
    pdf.line(left, top + 120, left + 180, top + 120)
    pdf.set_draw_color(200, 0, 0)
    for k in range(6):  # the curve, in slanted strokes
        pdf.line(left + 30 * k, top + 110 - 18 * k, left + 30 * (k + 1), top + 110 - 18 * (k + 1) + 6)
    pdf.set_font("Helvetica", size=8)
    for k, label in enumerate(("0", "10", "20", "30")):
        pdf.text(left + 50 * k, top + 132, label)
    pdf.text(left + 4, top + 40, "hours")
    pdf.set_font("Helvetica", size=11)
    pdf.set_xy(72, top + 160)
    pdf.multi_cell(450, 14, FIGURE_AFTER)
    return bytes(pdf.output())


def footnotes() -> bytes:
    """A paragraph that cites two notes, a short footnote rule low on the
    page and the two notes under it, in a smaller size."""
    pdf = _page()
    pdf.set_xy(72, 80)
    pdf.multi_cell(400, 14, "The population grew by a tenth over the decade, as the census shows.")
    pdf.line(72, 700, 200, 700)
    pdf.set_font("Helvetica", size=8)
    for k, note in enumerate(FOOTNOTES):
        pdf.text(72, 715 + 11 * k, note)
    return bytes(pdf.output())


def right_to_left_with_latin() -> bytes:
    """An Arabic line with two Latin words in it, drawn as PDFs draw
    right-to-left text: each glyph where it shows, words placed from the right."""
    pdf = _page()
    pdf.add_font("arabic", "", str(ARABIC_FONT))
    pdf.set_font("arabic", size=14)
    x = 500.0
    for word in ("قرأ", "الأستاذ", "PDF reader", "اليوم."):
        shown = word if word.isascii() else word[::-1]
        x -= pdf.get_string_width(shown)
        pdf.text(x, 100, shown)
        x -= pdf.get_string_width(" ")
    return bytes(pdf.output())


BOOKTABS = [
    ["Method", "Precision", "Recall", "F1"],
    ["Baseline", "0.61", "0.58", "0.59"],
    ["Tuned", "0.72", "0.70", "0.71"],
    ["Distilled", "0.70", "0.69", "0.69"],
    ["Ensemble", "0.78", "0.75", "0.76"],
]


def table_ruled_like_latex() -> bytes:
    """A results table as LaTeX's booktabs draws it: rules above, under the
    header and below, none down or at the sides, between two paragraphs."""
    pdf = _page()
    pdf.set_font("Helvetica", size=10)
    pdf.set_xy(72, 60)
    pdf.multi_cell(
        450,
        13,
        "Table 2 compares the four methods on the held-out set. The ensemble is best on every "
        "measure, at five times the cost of the baseline.",
    )
    top = 120
    pdf.set_line_width(0.8)
    pdf.line(150, top, 450, top)
    for r, row in enumerate(BOOKTABS):
        y = top + 14 + r * 14 + (4 if r else 0)
        for x, cell in zip((160, 250, 320, 390), row):
            pdf.text(x, y, cell)
        if r == 0:
            pdf.set_line_width(0.4)
            pdf.line(150, y + 5, 450, y + 5)
    pdf.set_line_width(0.8)
    pdf.line(150, top + 14 * 6 + 4, 450, top + 14 * 6 + 4)
    pdf.set_xy(72, top + 110)
    pdf.multi_cell(450, 13, "The differences between the tuned and distilled models are within the noise.")
    return bytes(pdf.output())


THREE_COLUMNS = [
    "The first column opens the article and runs down the left third of the page, long enough "
    "to wrap onto many lines so that a reader sees it as a column of its own and reads it first.",
    "The second column follows in the middle third, where the story goes on with more detail "
    "about the subject, again long enough to fill a good number of narrow lines of text.",
    "The third column closes the article on the right, and its last sentence is the end of the "
    "page, after which nothing else is printed in this generated example at all.",
]


def three_columns() -> bytes:
    """A title across the page, then three columns of prose drawn right to
    left (the content stream's order is not the reading order)."""
    pdf = _page()
    pdf.set_font("Helvetica", "B", 16)
    pdf.text(72, 60, "Three columns")
    pdf.set_font("Helvetica", size=10)
    for k in (2, 1, 0):
        pdf.set_xy(40 + 180 * k, 80)
        pdf.multi_cell(160, 13, THREE_COLUMNS[k])
    return bytes(pdf.output())


def scanned_then_typeset() -> bytes:
    """A scanned page (the page's picture, its recognised text in 11 to 11.6 pt on top, as OCR tools
    write it) followed by a typeset page in 9 pt, as a merged file of both holds them."""
    from PIL import Image

    scan = Image.new("L", (595, 842), 235)  # the scanned paper, a little grey
    pdf = _page()
    pdf.image(scan, x=0, y=0, w=595, h=842)
    for n, line in enumerate(SCANNED_LINES):
        pdf.set_font("Helvetica", size=11 + n % 3 * 0.3)  # each line's size as recognised: they differ a little
        pdf.text(50, 80 + 18 * n, line)
    pdf.add_page()
    pdf.set_font("Helvetica", size=9)
    for n, line in enumerate(TYPESET_LINES):
        pdf.text(50, 80 + 12 * n, line)
    return bytes(pdf.output())


def landscape_drawn_sideways(shown_upright: bool = True) -> bytes:
    """A landscape page as CAD programs and reports with wide tables write one: its content drawn
    turned a quarter anticlockwise on a portrait page, and the page's /Rotate 90 showing it upright
    (or not: then a reader turns the page). A title, then LANDSCAPE_PARAGRAPHS, a space between."""
    import io

    from pypdf import PdfReader, PdfWriter, Transformation

    pdf = FPDF(unit="pt", format="A4", orientation="L")
    pdf.add_page()
    pdf.set_font("Helvetica", "B", size=16)
    pdf.text(60, 60, "Mounting the cable gland")
    pdf.set_font("Helvetica", size=11)
    y = 100
    for paragraph in LANDSCAPE_PARAGRAPHS:
        for line in paragraph:
            pdf.text(60, y, line)
            y += 14
        y += 14
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(bytes(pdf.output()))))
    page = writer.pages[0]
    width, height = float(page.mediabox.width), float(page.mediabox.height)
    page.add_transformation(Transformation().rotate(90).translate(tx=height, ty=0))
    page.mediabox.upper_right = (height, width)
    if shown_upright:
        page.rotate(90)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def graph_paper_sketch(columns: int = 36, rows: int = 48) -> bytes:
    """A caption above a sheet of squared paper drawn as a stroke per mark, as scanners and
    plotters draw one: `columns` x `rows` crosses 15 pt apart, each arm 12 pt long, so no stroke
    across reaches from one stroke down to the next (no table)."""
    pdf = _page()
    pdf.text(40, 40, SKETCH_CAPTION)
    pdf.set_line_width(0.4)
    for i in range(columns):
        for j in range(rows):
            x, y = 40 + 15 * i, 70 + 15 * j
            pdf.line(x - 6, y, x + 6, y)
            pdf.line(x, y - 6, x, y + 6)
    return bytes(pdf.output())
