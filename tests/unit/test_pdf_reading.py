"""PDF as a person reads it (issue 28): sizes drawn through the text matrix,
wrapped titles, paragraphs by spacing and indentation, headings from fonts and
the outline together, lists with their continuation lines, running headers on
short documents, code listings, and pages without text reported. On PDFs the
tests write and on files of the real-docs dev set."""

from __future__ import annotations

from fpdf import FPDF
from PIL import Image

from chunklab.v1 import documents_pb2 as pb
from services.ingest.readers.pdf import read_pdf
from tests.support.hand_pdfs import matrix_text_pdf
from tests.support.real_docs import real_doc


def nodes(node: pb.TreeNode):
    yield node
    for child in node.children:
        yield from nodes(child)


def of_kind(parsed, kind: int) -> list[str]:
    return [parsed.text[n.start_char : n.end_char] for n in nodes(parsed.tree.root) if n.kind == kind]


def headings(parsed) -> list[tuple[int, str]]:
    return [(n.level, n.title) for n in nodes(parsed.tree.root) if n.kind == pb.NODE_KIND_HEADING]


def report_page() -> list[tuple[str, float, float, float, str]]:
    lines = [
        ("Annual Report of the", 26, 72, 720, "bold"),
        ("Harbour Authority", 26, 72, 690, "bold"),
        ("1 Scope", 14, 72, 650, "bold"),
    ]
    body = [
        ("The harbour authority keeps the quays, the locks and the", 72),
        ("channels open all year, and this report says how it spent", 72),
        ("its budget in the year that ended in March.", 72),
        ("A second paragraph opens with an indent and runs on to", 87),
        ("a second line that ends here.", 72),
    ]
    lines += [(text, 10, x, 625 - 12 * i, "regular") for i, (text, x) in enumerate(body)]
    lines += [("def dues(tonnage):", 9, 72, 555, "mono"), ("    return tonnage * 0.42", 9, 72, 544, "mono")]
    lines.append(("The listing above computes the dues of a ship.", 10, 72, 525, "regular"))
    return lines


def test_sizes_set_in_the_text_matrix_give_a_wrapped_title_its_level_and_lines_join_into_paragraphs():
    parsed = read_pdf("report.pdf", matrix_text_pdf([report_page()]))
    # The 26 pt title over two lines is one level-1 heading, the 14 pt section a level-2 one.
    assert headings(parsed) == [(1, "Annual Report of the Harbour Authority"), (2, "1 Scope")]
    assert of_kind(parsed, pb.NODE_KIND_PARAGRAPH) == [
        "The harbour authority keeps the quays, the locks and the channels open all year, and this "
        "report says how it spent its budget in the year that ended in March.",
        "A second paragraph opens with an indent and runs on to a second line that ends here.",
        "The listing above computes the dues of a ship.",
    ]


def test_a_paragraph_with_a_hanging_indent_is_one_paragraph_and_an_indented_one_still_opens_another():
    """pypdf's crazyones.pdf sets its poem with its lines after the first indented: "...not fond
    of rules. And" ended one paragraph and "they have no respect..." opened the next. A short line
    ("Definition 1") over an indented one is not a paragraph that hangs."""
    body = [
        ("Here is to the crazy ones. The misfits. The rebels. The troublemakers. And", 72),
        ("they have no respect for the status quo, nor for the rules.", 90),
        ("You can quote them, disagree with them, glorify them.", 90),
        ("Definition 1", 72),
        ("A harbour is a sheltered body of water where ships dock.", 90),
    ]
    # 12 pt apart, the definition 12 pt further down (a paragraph's space).
    lines = [(text, 10, x, 700 - 12 * i - 12 * (i > 2), "regular") for i, (text, x) in enumerate(body)]
    assert of_kind(read_pdf("poem.pdf", matrix_text_pdf([lines])), pb.NODE_KIND_PARAGRAPH) == [
        "Here is to the crazy ones. The misfits. The rebels. The troublemakers. And they have no respect for the status quo, "
        "nor for the rules. You can quote them, disagree with them, glorify them.",
        "Definition 1",
        "A harbour is a sheltered body of water where ships dock.",
    ]


def test_a_monospaced_listing_is_a_code_node_with_its_indentation():
    parsed = read_pdf("report.pdf", matrix_text_pdf([report_page()]))
    assert of_kind(parsed, pb.NODE_KIND_CODE) == ["```\ndef dues(tonnage):\n    return tonnage * 0.42\n```"]


def test_a_listing_in_a_real_paper_is_code_apart_from_its_caption_and_the_prose():
    parsed = read_pdf("code_and_formula.pdf", real_doc("pdf/code_and_formula.pdf"))
    (code,) = of_kind(parsed, pb.NODE_KIND_CODE)
    assert code.startswith("```\nfunction add(a, b) {\n    return a + b;\n}\n")
    paragraphs = of_kind(parsed, pb.NODE_KIND_PARAGRAPH)
    assert "Listing 1: Simple JavaScript Program" in paragraphs
    # An indented first line opens a paragraph even without space above it.
    assert any(p.startswith("Duis autem vel eum iriure dolor") for p in paragraphs)


def test_running_headers_with_page_numbers_go_on_a_two_page_document():
    pages = []
    for number in (7, 8):
        header = "example.org Chapter 3: Utilities" if number % 2 else "Chapter 3: Utilities example.org"
        pages.append(
            [
                (f"{header} {number}" if number % 2 else f"{number} {header}", 8, 72, 760, "regular"),
                (f"Utilities keep the harbour running on page {number}.", 10, 72, 700, "regular"),
                (f"3-{number + 38}", 8, 300, 40, "regular"),
            ]
        )
    parsed = read_pdf("utilities.pdf", matrix_text_pdf(pages))
    assert parsed.text == (
        "Utilities keep the harbour running on page 7.\n\nUtilities keep the harbour running on page 8."
    )


def test_front_matter_page_numbers_go_and_a_capital_letter_or_a_word_of_roman_letters_stays():
    """A page's last line "vii" is its number; "X" opening a page, "C" ending a list of labels
    (pypdf's inkscape-abc.pdf) and a last line "Did" are text: every word of the letters i, v, x,
    l, c, d and m passed for a page number."""
    pages = [
        [("The quays are inspected every spring.", 10, 72, 700, "regular"), ("vii", 10, 300, 40, "regular")],
        [
            ("X", 10, 72, 760, "regular"),
            ("marks the place where the old lock stood.", 10, 72, 700, "regular"),
            ("A", 10, 72, 400, "regular"),
            ("B", 10, 72, 200, "regular"),
            ("C", 10, 72, 40, "regular"),
        ],
        [("Who inspected the quays last spring?", 10, 72, 700, "regular"), ("Did", 10, 72, 40, "regular")],
    ]
    words = read_pdf("labels.pdf", matrix_text_pdf(pages)).text.split()
    assert "vii" not in words
    assert [w for w in words if w in ("X", "A", "B", "C", "Did")] == ["X", "A", "B", "C", "Did"]


def test_a_header_band_of_several_lines_goes_and_its_running_title_is_kept_once():
    """pypdf's issue-604.pdf (clinical guidelines, 137 pages): each page opens with a print stamp,
    the version, an index link, a "Table of Contents" link and the 18 pt running title; only the
    first two lines of an edge were looked at, so the title was a heading 95 times."""
    topics = ["quays", "locks", "channels", "cranes", "moorings", "beacons"]
    pages = [
        [
            ("Printed by a reader on 1/27/2021. For personal use only.", 7, 72, 780, "regular"),
            ("Guidelines Version 2.2020", 9, 72, 765, "regular"),
            ("Guidelines Index", 9, 400, 765, "regular"),
            ("Harbour Safety", 18, 72, 740, "bold"),
            *[(f"The {topic} are checked {when}.", 10, 72, 700 - 14 * i, "regular") for i, when in enumerate(whens)],
        ]
        for topic, whens in zip(
            topics, [["daily", "at dawn"], ["weekly"], ["in spring", "after storms", "by divers"]] * 2
        )
    ]
    parsed = read_pdf("guidelines.pdf", matrix_text_pdf(pages))
    assert parsed.text.count("Harbour Safety") == 1 and headings(parsed) == [(1, "Harbour Safety")]
    assert "Printed by" not in parsed.text and "Guidelines" not in parsed.text
    assert all(f"The {topic} are checked" in parsed.text for topic in topics)


def test_a_document_whose_every_line_recurs_on_each_page_keeps_its_text():
    """pypdf's imagemagick-images.pdf: the one word of each page, "Background", at one height on
    four pages, was taken for a running header; then nothing was left and the file was refused as
    having no text layer."""
    parsed = read_pdf("slides.pdf", matrix_text_pdf([[("Background", 10, 72, 700, "regular")]] * 4))
    assert parsed.text.split() == ["Background"] * 4


def test_a_one_page_spread_loses_its_folio_line_but_keeps_its_text():
    parsed = read_pdf("spread.pdf", real_doc("pdf/table_mislabeled_as_picture.pdf"))
    assert "Global Study on Legal Aid" not in parsed.text
    assert "There is no such limitation" in parsed.text


def test_options_behind_check_boxes_from_a_symbol_font_are_list_items_with_their_wrapped_lines():
    parsed = read_pdf("survey.pdf", real_doc("pdf/table_mislabeled_as_picture.pdf"))
    items = [
        parsed.text[n.start_char : n.end_char] for n in nodes(parsed.tree.root) if n.kind == pb.NODE_KIND_LIST_ITEM
    ]
    assert items[0] == (
        "- They work in parallel to State funded private practitioners who take assignments to represent "
        "people eligible for legal aid"
    )
    assert "- Yes, at the national (federal) level" in items and "- There is no such limitation" in items


def test_a_bookmarked_title_keeps_the_numbered_sections_its_fonts_mark():
    pdf = FPDF()
    pdf.add_page()
    pdf.start_section("Tidal energy in small harbours", level=0)
    pdf.set_font("Helvetica", "B", 20)
    pdf.cell(0, 10, "Tidal energy in small harbours", new_x="LMARGIN", new_y="NEXT")
    for title in ("5.1 Results", "5.2 Discussion"):
        pdf.set_font("Helvetica", "B", 13)
        pdf.cell(0, 8, title, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 10)
        pdf.multi_cell(0, 5, f"The {title[4:].lower()} of the study fill this section.", new_x="LMARGIN", new_y="NEXT")
        pdf.ln(3)
    parsed = read_pdf("paper.pdf", bytes(pdf.output()))
    assert headings(parsed) == [(1, "Tidal energy in small harbours"), (2, "5.1 Results"), (2, "5.2 Discussion")]


def test_list_items_keep_their_continuation_lines_and_paragraphs_match_the_reference():
    parsed = read_pdf("multi_page.pdf", real_doc("pdf/multi_page.pdf"))
    items = [n for n in nodes(parsed.tree.root) if n.kind == pb.NODE_KIND_LIST_ITEM]
    first = parsed.text[items[0].start_char : items[0].end_char]
    assert first.startswith("- IBM MT/ST (Magnetic Tape/Selectric Typewriter): Introduced in 1964, this machine")
    assert first.endswith("an early example of digital text storage.")
    # Every paragraph ends its sentence: no line is a paragraph of its own.
    paragraphs = of_kind(parsed, pb.NODE_KIND_PARAGRAPH)
    assert len(paragraphs) == 16 and all(p.endswith((".", ":")) for p in paragraphs)
    assert "Pre-Digital Era (19th - Early 20th Century)" in [t for _, t in headings(parsed)]


def test_pages_without_text_are_reported_as_a_warning():
    pdf = FPDF()
    for page in range(3):
        pdf.add_page()
        if page == 1:
            pdf.image(Image.new("RGB", (120, 160), "gray"), x=20, y=20, w=120)
        else:
            pdf.set_font("Helvetica", "", 10)
            pdf.cell(0, 5, f"Page {page + 1} has a sentence of text on it.")
    parsed = read_pdf("mixed.pdf", bytes(pdf.output()))
    assert parsed.warnings == ["1 page has no text (p. 2): scanned? Run them through OCR (e.g. ocrmypdf)"]
    assert read_pdf("multi_page.pdf", real_doc("pdf/multi_page.pdf")).warnings == []
