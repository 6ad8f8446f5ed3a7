"""The Word reader on what python-docx does not show: content controls at block, row and cell
level, text boxes, nested tables, equations, merged cells, numbered headings and lists, page
headers and footers; on real files from the dev set and on documents built here (python-docx,
with raw XML where python-docx has no API)."""

from __future__ import annotations

from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls

from chunklab.v1 import documents_pb2 as pb
from services.ingest.readers.docx import read_docx
from services.ingest.readers.docx_numbering import Numbering
from services.ingest.service import parse_upload
from tests.support.ingest import docx_bytes
from tests.support.real_docs import real_doc

_W = nsdecls("w")


def real(name: str) -> bytes:
    return real_doc(f"docx/{name}")


def _row(*cells: str) -> str:
    return "<w:tr>" + "".join(f"<w:tc><w:p><w:r><w:t>{c}</w:t></w:r></w:p></w:tc>" for c in cells) + "</w:tr>"


def _append(document, xml: str) -> None:
    """Raw body XML before the section properties (python-docx has no API for controls or boxes)."""
    document.element.body.sectPr.addprevious(parse_xml(xml))


def nodes(tree: pb.DocumentTree, kind: int) -> list[pb.TreeNode]:
    out, stack = [], [tree.root]
    while stack:
        node = stack.pop()
        out += [node] if node.kind == kind else []
        stack += reversed(node.children)
    return out


# -- content controls -----------------------------------------------------------------------


def test_a_table_inside_a_block_content_control_keeps_its_three_columns_and_says_so():
    def build(document):
        document.add_paragraph("Rates follow.")
        table = f"<w:tbl {_W}>{_row('Grade', 'Rate', 'Since')}{_row('A', '1.5x', '2020')}</w:tbl>"
        _append(
            document, f"<w:sdt {_W}><w:sdtPr/><w:sdtContent>{table[:7]}{table[7 + len(_W) :]}</w:sdtContent></w:sdt>"
        )

    content = read_docx(docx_bytes(build))
    assert "| Grade | Rate | Since |\n|---|---|---|\n| A | 1.5x | 2020 |" in content.text
    assert len(nodes(content.tree, pb.NODE_KIND_TABLE)) == 1
    assert content.warnings == ["text in 1 content control was read as ordinary text"]


def test_content_controls_around_a_row_and_a_cell_keep_their_text_in_place():
    def build(document):
        cell_control = "<w:sdt><w:sdtContent><w:tc><w:p><w:r><w:t>Ops</w:t></w:r></w:p></w:tc></w:sdtContent></w:sdt>"
        row_control = f"<w:sdt><w:sdtContent>{_row('Legal', 'Lea')}</w:sdtContent></w:sdt>"
        rows = _row("Team", "Lead") + f"<w:tr>{cell_control}<w:tc><w:p><w:r><w:t>Ann</w:t></w:r></w:p></w:tc></w:tr>"
        _append(document, f"<w:tbl {_W}>{rows}{row_control}</w:tbl>")

    content = read_docx(docx_bytes(build))
    assert content.text == "| Team | Lead |\n|---|---|\n| Ops | Ann |\n| Legal | Lea |"
    assert content.warnings == ["text in 2 content controls was read as ordinary text"]


def test_the_real_content_control_file_keeps_the_cover_title_inside_the_control():
    content = read_docx(real("content_control_with_picture.docx"))
    assert content.text == "COVER TITLE INSIDE SDT\n\nBODY TEXT OUTSIDE SDT"
    assert "text in 1 content control was read as ordinary text" in content.warnings
    assert "1 picture was left out: only text is read" in content.warnings


# -- text boxes -------------------------------------------------------------------------------


def _text_box_run(text: str) -> str:
    """A text box as Word writes it: the DrawingML shape, and a VML copy for older readers."""
    body = f"<w:txbxContent><w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:txbxContent>"
    return (
        f'<w:r {_W} xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
        'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
        'xmlns:v="urn:schemas-microsoft-com:vml">'
        '<mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wps:wsp><wps:txbx>'
        f"{body}</wps:txbx></wps:wsp></w:drawing></mc:Choice>"
        f"<mc:Fallback><w:pict><v:shape><v:textbox>{body}</v:textbox></v:shape></w:pict></mc:Fallback>"
        "</mc:AlternateContent></w:r>"
    )


def test_a_text_box_is_read_once_after_its_anchor_paragraph_and_said():
    def build(document):
        anchor = document.add_paragraph("Student falls ill.")
        anchor._p.append(parse_xml(_text_box_run("Report within 24 hours.")))
        document.add_paragraph("Case closed.")

    content = read_docx(docx_bytes(build))
    assert content.text == "Student falls ill.\n\nReport within 24 hours.\n\nCase closed."
    assert content.warnings == [
        "text in 1 text box was read after the paragraph each is anchored in: check its place in the reading order"
    ]


def test_the_real_text_box_flowchart_keeps_its_boxed_steps():
    content = read_docx(real("textbox.docx"))
    for step in ("Student falls ill", "Health Bureau:", "Case closed.", "Whether the epidemic has eased."):
        assert step in content.text
    assert content.text.count("Suggested Reportable Symptoms") == 1  # Choice read, its Fallback copy not


# -- tables -----------------------------------------------------------------------------------


def test_a_nested_table_is_written_into_its_cell_and_said():
    def build(document):
        outer = document.add_table(rows=2, cols=2)
        outer.cell(0, 0).text, outer.cell(0, 1).text = "Column A", "Column B"
        outer.cell(1, 0).text = "Rich cell"
        inner = outer.cell(1, 1).add_table(rows=2, cols=2)
        for (r, c), value in {(0, 0): "A", (0, 1): "B", (1, 0): "Cell 1", (1, 1): "Cell 2"}.items():
            inner.cell(r, c).text = value

    content = read_docx(docx_bytes(build))
    assert content.text == "| Column A | Column B |\n|---|---|\n| Rich cell | A B Cell 1 Cell 2 |"
    assert content.warnings == ["1 table inside a table cell was written into the cell as text"]


def test_a_merged_cell_keeps_the_columns_after_it_in_place():
    def build(document):
        table = document.add_table(rows=2, cols=4)
        for c, value in enumerate(["H0", "H1", "H2", "H3"]):
            table.cell(0, c).text = value
        table.cell(1, 0).text = "Cell 1.0"
        table.cell(1, 1).merge(table.cell(1, 2)).text = "Merged 1.1 1.2"
        table.cell(1, 3).text = "Cell 1.3"

    content = read_docx(docx_bytes(build))
    assert content.text.splitlines()[-1] == "| Cell 1.0 | Merged 1.1 1.2 | Merged 1.1 1.2 | Cell 1.3 |"


def test_a_one_cell_table_is_a_frame_whose_content_is_read_as_blocks():
    content = read_docx(real("tablecell.docx"))
    assert content.text.startswith("- Hello world1\n- Hello2\n\nSome text before")
    assert "| Tab1 | Tab2 | Tab3 |\n|---|---|---|\n| A | B | C |\n| D | E | F |" in content.text
    assert len(nodes(content.tree, pb.NODE_KIND_TABLE)) == 1


def test_list_items_in_cells_keep_their_markers():
    content = read_docx(real("docx_rich_cells.docx"))
    assert "| First Paragraph Second Paragraph Third paragraph before a numbered list 1. Number one 2. Number two" in (
        content.text
    )


# -- equations --------------------------------------------------------------------------------


def test_equations_are_written_as_latex_inline_and_on_their_own_line():
    math = 'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"'
    area = "<m:r><m:t>A=π</m:t></m:r><m:sSup><m:e><m:r><m:t>r</m:t></m:r></m:e><m:sup><m:r><m:t>2</m:t></m:r></m:sup></m:sSup>"
    half = "<m:f><m:num><m:r><m:t>1</m:t></m:r></m:num><m:den><m:r><m:t>2</m:t></m:r></m:den></m:f>"

    def build(document):
        inline = document.add_paragraph("The area is ")
        inline._p.append(parse_xml(f"<m:oMath {math}>{area}</m:oMath>"))
        inline.add_run(" for a circle.")
        display = document.add_paragraph()
        display._p.append(parse_xml(f"<m:oMathPara {math}><m:oMath>{half}</m:oMath></m:oMathPara>"))

    content = read_docx(docx_bytes(build))
    assert content.text == "The area is $A=\\pi r^{2}$ for a circle.\n\n$$\\frac{1}{2}$$"


def test_the_real_equations_file_keeps_its_sums_and_fractions():
    content = read_docx(real("equations.docx"))
    assert "- Second item with equations: $E=mc^{2}$ and $F=ma$ are physics formulas." in content.text
    assert "$$e^{x}=1+\\frac{x}{1!}+\\frac{x^{2}}{2!}" in content.text
    assert "\\prod_{k=1}^{n}A_{k}" in content.text


# -- numbering, headers and footers ------------------------------------------------------------


def test_numbered_headings_keep_their_numbers_and_levels():
    content = read_docx(real("unit_test_headers_numbered.docx"))
    sections = [(n.level, n.title) for n in nodes(content.tree, pb.NODE_KIND_SECTION)]
    # The labels Word shows (its w:lvlText "%1.%2."), before the heading's own text.
    assert (2, "1. Section 1") in sections
    assert (3, "1.1. Section 1.1") in sections
    assert (4, "1.2.1. Section 1.2.3") in sections
    assert (3, "2.2. Section 2.1") in sections
    assert "   - 1.1. Section A.1\n      - 1.1.1. Detail A.1.1" in content.text


def test_page_headers_and_footers_stay_out_of_the_body():
    def build(document):
        section = document.sections[0]
        section.header.paragraphs[0].text = "ACME confidential"
        section.different_first_page_header_footer = True
        section.first_page_footer.paragraphs[0].text = "Page 1 of 9"
        document.add_paragraph("The body alone.")

    content = read_docx(docx_bytes(build))
    assert content.text == "The body alone."
    assert content.warnings == []


def _part(document, name: str, reltype: str, content_type: str, xml: str) -> None:
    """A package part python-docx writes no API for (notes, comments), related to the body."""
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part

    part = Part(PackURI(f"/word/{name}.xml"), content_type, xml.encode(), document.part.package)
    document.part.relate_to(part, reltype)


def _note_reference(kind: str, note_id: int) -> str:
    return f"<w:r><w:rPr><w:vertAlign w:val='superscript'/></w:rPr><w:{kind}Reference w:id='{note_id}'/></w:r>"


def _notes(kind: str, notes: dict[int, str]) -> str:
    """A footnotes or endnotes part as Word writes it: its two separators, then the notes."""
    separators = "".join(
        f"<w:{kind} w:type='{t}' w:id='{i}'><w:p/></w:{kind}>"
        for i, t in ((-1, "separator"), (0, "continuationSeparator"))
    )
    written = "".join(
        f"<w:{kind} w:id='{i}'><w:p><w:r><w:{kind}Ref/></w:r><w:r><w:t xml:space='preserve'> {text}</w:t></w:r></w:p></w:{kind}>"
        for i, text in notes.items()
    )
    return f"<w:{kind}s {_W}>{separators}{written}</w:{kind}s>"


def test_footnotes_and_endnotes_are_read_as_markdown_notes_and_comments_are_said_to_be_left_out():
    """Footnotes, endnotes and comments live in parts of their own: the notes were lost without a
    word (python-docx's test files, a sweep of real files), though a note often holds what a
    question asks (a source, a date, an exception)."""
    from docx.opc.constants import CONTENT_TYPE as CT
    from docx.opc.constants import RELATIONSHIP_TYPE as RT

    def build(document):
        _append(
            document,
            f"<w:p {_W}><w:r><w:t>The quay was rebuilt in 1897</w:t></w:r>{_note_reference('footnote', 2)}"
            f"<w:r><w:t xml:space='preserve'> and widened later.</w:t></w:r>{_note_reference('endnote', 1)}</w:p>",
        )
        _append(
            document, f"<w:p {_W}><w:r><w:t>The lock dates from 1902.</w:t></w:r>{_note_reference('footnote', 1)}</w:p>"
        )
        _part(
            document,
            "footnotes",
            RT.FOOTNOTES,
            CT.WML_FOOTNOTES,
            _notes("footnote", {1: "Town records, 1903.", 2: "By the harbour board."}),
        )
        _part(document, "endnotes", RT.ENDNOTES, CT.WML_ENDNOTES, _notes("endnote", {1: "Widened in 1931."}))
        comments = f"<w:comments {_W}><w:comment w:id='0' w:author='Ann'><w:p><w:r><w:t>Check the year.</w:t></w:r></w:p></w:comment></w:comments>"
        _part(document, "comments", RT.COMMENTS, CT.WML_COMMENTS, comments)

    content = read_docx(docx_bytes(build))
    assert content.text == (
        "The quay was rebuilt in 1897[^1] and widened later.[^2]\n\nThe lock dates from 1902.[^3]\n\n"
        "[^1]: By the harbour board.\n\n[^2]: Widened in 1931.\n\n[^3]: Town records, 1903."
    )
    assert content.warnings == [
        "1 comment in the margin (reviewers' notes) was left out: only the document's own text is read"
    ]


def test_a_document_of_pictures_alone_is_refused_saying_the_pictures_were_left_out():
    import io

    import pytest
    from PIL import Image

    from chunklab.errors import InvalidArgument

    def build(document):
        for colour in ("red", "green"):
            png = io.BytesIO()
            Image.new("RGB", (8, 8), colour).save(png, "PNG")
            png.seek(0)
            document.add_picture(png)

    with pytest.raises(InvalidArgument) as refused:
        parse_upload("photos.docx", pb.DOCUMENT_FORMAT_DOCX, docx_bytes(build))
    assert refused.value.message == (
        "'photos.docx' holds no text: every paragraph and table in it is empty "
        "(2 pictures were left out: only text is read)"
    )


def test_lists_numbered_with_letters_and_roman_numerals_keep_those_labels():
    numbering = parse_xml(
        f"<w:numbering {_W}><w:abstractNum w:abstractNumId='0'>"
        "<w:lvl w:ilvl='0'><w:start w:val='1'/><w:numFmt w:val='lowerLetter'/><w:lvlText w:val='%1)'/></w:lvl>"
        "<w:lvl w:ilvl='1'><w:start w:val='1'/><w:numFmt w:val='upperRoman'/><w:lvlText w:val='%2.'/></w:lvl>"
        "</w:abstractNum><w:num w:numId='5'><w:abstractNumId w:val='0'/></w:num></w:numbering>"
    )
    labels = Numbering(numbering)
    assert [labels.label(5, lvl) for lvl in (0, 1, 1, 1, 1, 0)] == ["a)", "I.", "II.", "III.", "IV.", "b)"]
    assert labels.label(6, 0) is None  # a numId the document does not define


def test_an_upload_carries_the_readers_warnings():
    parsed = parse_upload("cover.docx", pb.DOCUMENT_FORMAT_DOCX, real("content_control_with_picture.docx"))
    assert "text in 1 content control was read as ordinary text" in parsed.warnings


# -- code -------------------------------------------------------------------------------------


def _mono(text: str, font: str = "Consolas") -> str:
    return (
        f'<w:p {_W}><w:r><w:rPr><w:rFonts w:ascii="{font}" w:hAnsi="{font}"/></w:rPr>'
        f'<w:t xml:space="preserve">{text}</w:t></w:r></w:p>'
    )


def test_monospaced_lines_that_look_like_code_are_one_code_block_with_their_indentation():
    def build(document):
        document.add_paragraph("The function:")
        for line in ("def fib(n):", "    a, b = 0, 1", "    return a"):
            _append(document, _mono(line))
        _append(document, _mono("This memo is set in a typewriter face for a vintage look.", "Courier New"))
        document.add_paragraph("Listing 3.2", style=document.styles.add_style("Listing Number", 1))

    content = read_docx(docx_bytes(build))
    code = nodes(content.tree, pb.NODE_KIND_CODE)
    assert [content.text[n.start_char : n.end_char] for n in code] == [
        "```\ndef fib(n):\n    a, b = 0, 1\n    return a\n```"
    ]
    # A typewriter face without anything code-like stays prose; a style named "Listing Number"
    # is neither a list nor numbered.
    assert content.text.endswith("\n\nThis memo is set in a typewriter face for a vintage look.\n\nListing 3.2")


def test_the_real_code_fixture_keeps_its_code_blocks_and_its_prose():
    content = read_docx(real("docx_code_blocks.docx"))
    blocks = [content.text[n.start_char : n.end_char] for n in nodes(content.tree, pb.NODE_KIND_CODE)]
    assert blocks == [
        "```\nimport sys\nprint(sys.argv)\n```",  # a paragraph style named "Source Code"
        "```\nSELECT * FROM users WHERE active = 1;\n```",
        "```\ndef fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n```",
    ]
    for prose in ("See the original source for details.", "Listing 3.2", "This memo is set in a typewriter face"):
        assert f"\n\n{prose}" in content.text
