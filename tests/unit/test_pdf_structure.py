"""The PDF reader reads tables, reading order and right-to-left text as a
person reads them (issue 28): one test per defect class, on a PDF the test
generates (tests/support/pdf_structures.py) or a real file of the dev set."""

from __future__ import annotations

import io

import pytest
from pypdf import PdfReader, PdfWriter

from chunklab.v1 import documents_pb2 as pb
from services.ingest.readers.pdf import read_pdf
from tests.support import hand_pdfs
from tests.support import pdf_structures as gen
from tests.support.real_docs import real_doc


def nodes(node: pb.TreeNode):
    yield node
    for child in node.children:
        yield from nodes(child)


def tables(parsed) -> list[list[list[str]]]:
    """Every table node's rows of cells, as the canonical text writes them."""
    found = []
    for node in nodes(parsed.tree.root):
        if node.kind == pb.NODE_KIND_TABLE:
            lines = parsed.text[node.start_char : node.end_char].split("\n")
            found.append([[c.strip() for c in ln.strip("|").split("|")] for ln in lines if not ln.startswith("|---")])
    return found


def paragraphs(parsed) -> list[str]:
    return [parsed.text[n.start_char : n.end_char] for n in nodes(parsed.tree.root) if n.kind == pb.NODE_KIND_PARAGRAPH]


def pages_of(data: bytes, numbers: list[int]) -> bytes:
    """Those pages (from 1) of a PDF, as a PDF of their own."""
    writer = PdfWriter()
    reader = PdfReader(io.BytesIO(data))
    for number in numbers:
        writer.add_page(reader.pages[number - 1])
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_a_table_ruled_between_rows_but_not_columns_keeps_its_three_columns_and_every_cell():
    parsed = read_pdf("results.pdf", gen.table_ruled_across())
    assert tables(parsed) == [gen.RESULTS]
    assert "Baseline" not in " ".join(paragraphs(parsed))  # not repeated as loose text


def test_a_latex_table_ruled_only_above_and_below_keeps_its_four_columns_and_five_rows():
    parsed = read_pdf("booktabs.pdf", gen.table_ruled_like_latex())
    assert tables(parsed) == [gen.BOOKTABS]
    assert paragraphs(parsed)[-1] == "The differences between the tuned and distilled models are within the noise."


def test_a_header_set_sideways_reads_as_written_not_reversed():
    (table,) = tables(read_pdf("cases.pdf", gen.table_with_rotated_header()))
    assert table[0] == [gen.ROTATED_HEADER, "Region", "Cases"]
    assert table[1:] == [["1", "North", "120"], ["2", "South", "95"]]


def test_a_syntax_diagram_drawn_like_a_grid_is_text_with_each_letter_once_not_a_table():
    parsed = read_pdf("diagram.pdf", gen.syntax_diagram())
    assert tables(parsed) == []
    words = parsed.text.split()
    assert all(word in words for word in gen.DIAGRAM_WORDS)
    assert "EENNFFOORRCCEEDD" not in parsed.text


def test_a_figure_s_labels_are_not_spliced_into_the_sentence_beside_them():
    found = paragraphs(read_pdf("figure.pdf", gen.figure_beside_text()))
    assert found[:2] == [gen.FIGURE_SENTENCE, gen.FIGURE_AFTER]  # the body first, whole
    assert "hours" in found[2:] and "0 10 20 30" in found[2:]  # then the figure's labels, apart


def test_footnotes_under_the_footnote_rule_are_paragraphs_of_their_own_after_the_body():
    found = paragraphs(read_pdf("notes.pdf", gen.footnotes()))
    assert found == ["The population grew by a tenth over the decade, as the census shows.", *gen.FOOTNOTES]


def test_the_footnotes_of_a_real_page_are_kept_apart_and_its_merged_table_cells_whole():
    parsed = read_pdf("google-doc-document.pdf", real_doc("pdf/google-doc-document.pdf"))
    found = paragraphs(parsed)
    assert found[-3:] == ["1 2021 estimate", "2 2020 estimate", "3 2020 estimate"]
    (table,) = tables(parsed)
    assert table[0][1:] == ["Indonesia", "Germany", "Austria", "France", "Vatican"]
    assert table[1] == ["Continent", "Asia", "Europe", "", "", ""]  # one cell across four columns
    assert table[2] == ["Capital", "Jakarta", "Berlin", "Vienna", "Paris", "Vatican City"]


def test_plots_and_diagrams_of_a_latex_book_are_not_tables_and_no_glyph_reads_as_cid():
    # Pages 10 and 13 of GeoTopo: a plot with axes and a diagram of two sets,
    # which pdfplumber's grid finder takes for tables with "(cid:0)" cells.
    parsed = read_pdf("geotopo.pdf", pages_of(real_doc("pdf/GeoTopo-komprimiert.pdf"), [10, 13]))
    assert tables(parsed) == []
    assert "(cid:" not in parsed.text
    assert "(x1, y1) (x2, y2)" in parsed.text


def test_two_columns_are_read_left_column_first_and_a_sentence_goes_on_across_the_gutter():
    text = read_pdf("multicolumn.pdf", real_doc("pdf/multicolumn.pdf")).text
    # The left column ends "... Donec nonummy" and the right one opens "pellentesque ante."
    assert "Vivamus viverra fermentum felis. Donec nonummy pellentesque ante. Phasellus" in text
    assert text.index("Nulla malesuada porttitor diam.") < text.index("Quisque ullamcorper placerat ipsum.")


def test_three_columns_are_read_left_to_right_each_to_its_end():
    found = paragraphs(read_pdf("three.pdf", gen.three_columns()))
    assert found == gen.THREE_COLUMNS


def test_arabic_lam_alef_and_numbers_read_in_logical_order():
    text = read_pdf("rtl.pdf", real_doc("pdf/right_to_left_02.pdf")).text
    assert "الأولويوخت" in text and "الإرهوووخ" in text  # lam before alef, as written
    assert "األ" not in text and "اإل" not in text
    assert "(2024 - 2026)" in text and "2023،" in text  # brackets and the comma where they belong


@pytest.mark.skipif(not gen.ARABIC_FONT.is_file(), reason=f"needs a font with Arabic letters at {gen.ARABIC_FONT}")
def test_latin_words_in_a_right_to_left_line_keep_their_order_and_spaces():
    assert read_pdf("mixed.pdf", gen.right_to_left_with_latin()).text == gen.RTL_LOGICAL


def test_a_table_drawn_without_rules_keeps_its_columns_its_wrapped_header_and_every_row():
    (table,) = tables(read_pdf("legal-aid.pdf", real_doc("pdf/table_mislabeled_as_picture.pdf")))
    assert table[0][-2:] == ["State funded legal aid", "CSOs"]  # a header wrapped over two lines is one cell
    labels = [row[-3] for row in table[1:]]
    assert labels == [
        "Persons with disabilities",
        "Children",
        "Women",
        "The elderly",
        "Migrants",
        "Refugees, asylum seekers, or stateless persons",
        "Internally displaced persons",
    ]
    assert all(row[-2:] == ["*", "*"] for row in table[1:])  # the two check boxes of every row


def test_two_columns_of_prose_side_by_side_are_not_a_table():
    assert tables(read_pdf("multicolumn.pdf", real_doc("pdf/multicolumn.pdf"))) == []


def test_figure_labels_do_not_set_the_body_style_so_their_text_is_no_heading():
    """A diagram-heavy report (its 3 pt figure labels outnumber its 9 pt text): the body style is
    the text's, not the labels', so neither the labels nor the body's lines are headings."""
    from services.ingest.readers.pdf_headings import font_headings
    from services.ingest.readers.pdf_layout import Line

    def line(text: str, top: float, size: float, region: str = "") -> Line:
        return Line(text, 1, 50.0, 300.0, top, top + size, size, False, region=region)

    title = line("The report", 40, 16.0)
    labels = [line(f"label {i} of the diagram, with many words in it", 100 + 4 * i, 3.0, "figure 1") for i in range(40)]
    body = [line("- A list item of the body text in nine point type", 400, 9.0), line("A paragraph.", 420, 9.0)]
    found = font_headings([title, *labels, *body])
    assert [ln.text for ln in (title, *labels, *body) if found.at.get(id(ln))] == ["The report"]
    # The real report it was found in: 52 headings in 284 words before, its title alone now.
    text = read_pdf("skipped_2pages.pdf", real_doc("pdf/skipped_2pages.pdf")).text
    assert sum(1 for ln in text.splitlines() if ln.startswith("#")) == 1


def test_a_sketch_on_graph_paper_of_thousands_of_strokes_is_read_as_its_text_not_searched_for_hours():
    """pypdf's issue-301.pdf, a scanned drawing of 18,560 strokes, kept a core busy for about five
    hours looking for a table's grid (every pair of strokes down against every stroke across)."""
    parsed = read_pdf("sketch.pdf", gen.graph_paper_sketch())
    assert parsed.text.strip() == gen.SKETCH_CAPTION
    assert tables(parsed) == []


def test_the_text_on_a_scanned_page_is_its_body_not_a_figure_s_labels_nor_headings():
    """pypdf's Seige_of_Vicksburg_Sample_OCR-crazyones-merged.pdf: its scanned pages' lines sat on
    a full-page picture, so they were taken for a figure's labels; the typeset page's 9 pt set the
    body's size, and every line of the scans became a heading (151)."""
    text = read_pdf("merged.pdf", gen.scanned_then_typeset()).text
    assert [ln for ln in text.splitlines() if ln.startswith("#")] == []
    assert all(line in text for line in gen.SCANNED_LINES + gen.TYPESET_LINES)
    assert text.index(gen.SCANNED_LINES[-1]) < text.index(gen.TYPESET_LINES[0])


OCR_PARAGRAPHS = [
    ["The committee met on Tuesday to review the annual budget and the", "proposals for the new library."],
    ["The second item concerned the park. The gardener reported that", "most of the trees are healthy."],
]


def test_the_text_ocr_tools_write_over_a_scan_is_prose_though_its_font_is_fixed_pitch():
    """What ocrmypdf (which our refusal of a scan without text recommends) and scanners write:
    invisible text in a fixed-pitch font (Tesseract's GlyphLessFont, EPSON's Courier) came out as
    code blocks, each line fenced apart, and none of it could be a heading."""
    lines = [*OCR_PARAGRAPHS[0], "", *OCR_PARAGRAPHS[1]]
    parsed = read_pdf("scan.pdf", hand_pdfs.ocr_layer_pdf(lines))
    assert "```" not in parsed.text
    assert paragraphs(parsed) == [" ".join(p) for p in OCR_PARAGRAPHS]


@pytest.mark.parametrize("shown_upright", [True, False], ids=["shown upright by /Rotate", "shown sideways"])
def test_a_landscape_page_drawn_sideways_reads_in_order_as_a_person_turning_it_reads_it(shown_upright):
    """pypdf's AutoCad_Diagram.pdf: its notes are drawn sideways and shown upright by /Rotate 270;
    read in the page's own coordinates its lines ran down the page, and came out in pieces out
    of order ("2. Tape the screens" glued to step 3's second line, step 1 at the end)."""
    parsed = read_pdf("gland.pdf", gen.landscape_drawn_sideways(shown_upright))
    assert parsed.text.startswith("# Mounting the cable gland\n\n")
    assert paragraphs(parsed) == [" ".join(p) for p in gen.LANDSCAPE_PARAGRAPHS]


def test_bold_words_of_a_flowchart_are_no_headings_but_titles_and_signatures_are():
    """pypdf's issue-604.pdf: the bold boxes of its flowcharts made 45 one-word headings ("or",
    "contrast)"); a title opens with a capital or a digit, a manual's bold signature is longer."""
    from services.ingest.readers.pdf_headings import font_headings
    from services.ingest.readers.pdf_layout import Line

    def line(text: str, top: float, bold: bool) -> Line:
        return Line(text, 1, 50.0, 300.0, top, top + 10, 10.0, bold)

    body = [line(f"The text of the guideline, line {i}, in regular type.", 300 + 12 * i, False) for i in range(20)]
    bold = [
        line("Initial workup", 40, True),
        line("or", 80, True),
        line("contrast)", 120, True),
        line("int asn1_create_element (asn1 node const definitions)", 160, True),
    ]
    found = font_headings([*bold, *body])
    assert [ln.text for ln in bold if found.at.get(id(ln))] == [
        "Initial workup",
        "int asn1_create_element (asn1 node const definitions)",
    ]


def test_three_columns_of_names_and_places_are_read_a_column_at_a_time():
    """pypdf's issue-604.pdf: a panel's members in three columns, each a name over its place,
    set short; the gap between the first two columns was dropped (the columns are not filled
    with prose), so the first two were read across, "Dana-Farber/Brigham and Women's Stanford
    Cancer Institute Cancer Center"."""
    places = ["Harbour Institute", "Port Clinic", "Coastal Research Centre", "Quay Hospital", "Dock Lab"]
    columns = [[(f"Dr {c}{i}", f"{place} {c}{i}") for i, place in enumerate(places)] for c in "ABC"]
    lines = [
        (text, 10, 60 + 180 * c, 700 - 30 * i - 12 * k, "bold" if k == 0 else "regular")
        for c, column in enumerate(columns)
        for i, entry in enumerate(column)
        for k, text in enumerate(entry)
    ]
    words = read_pdf("panel.pdf", hand_pdfs.matrix_text_pdf([lines])).text.split()
    members = [w for w in words if w[:1] in "ABC" and w[1:2].isdigit()]
    assert members == [f"{c}{i}" for c in "ABC" for i in range(5) for _ in range(2)]
