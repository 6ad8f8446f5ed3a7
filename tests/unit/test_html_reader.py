"""HTML into the DocumentTree (ADR 0057): a saved web page loses its
boilerplate and keeps its sections, lists, table and code, every node's range
exact in the Markdown rendering; charset, language and date read from the
page; hostile pages refused with a sentence a person can act on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chunklab.db.sessions import make_sessionmaker
from chunklab.errors import InvalidArgument, ResourceExhausted
from chunklab.v1 import documents_pb2 as pb
from services.chunker.strategies import REGISTRY, SourceDocument
from services.ingest.readers.html import HtmlLimits, read_html
from services.ingest.service import IngestService, resolve_format
from services.ingest.store import Base
from tests.support.chunking import run
from tests.support.ingest import create
from tests.support.saved_page import SAVED_PAGE, SAVED_PAGE_TEXT


def page(body: str, head: str = "", html: str = "<html>") -> bytes:
    return f"<!DOCTYPE html>{html}<head>{head}</head><body>{body}</body></html>".encode()


def nodes(node):
    yield node
    for child in node.children:
        yield from nodes(child)


def check_offsets(content) -> None:
    """Every node's range lies in the text, headings slice to their `#` line, items to their lines."""
    text = content.text
    for node in nodes(content.tree.root):
        assert 0 <= node.start_char <= node.end_char <= len(text)
        piece = text[node.start_char : node.end_char]
        assert piece == piece.strip()
        if node.kind == pb.NODE_KIND_HEADING:
            assert piece == "#" * node.level + " " + node.title


@pytest.fixture(scope="module")
def saved():
    return read_html("leave.html", SAVED_PAGE)


# -- the saved page ---------------------------------------------------------


def test_a_saved_page_keeps_its_article_and_loses_navigation_banners_scripts_and_styles(saved):
    assert saved.text == SAVED_PAGE_TEXT
    for boilerplate in (
        "Skip to content",
        "Home",
        "IT help",
        "Search",
        "cookies",
        "Accept all",
        "Related pages",
        "Sick leave",
        "Acme Ltd",
        "Privacy",
        "dataLayer",
        "font-family",
        "Share this page",
        "Acme Intranet",
    ):
        assert boilerplate not in saved.text


def test_the_sections_form_the_heading_tree_with_levels_and_paths(saved):
    sections = [
        (n.level, n.title, list(n.heading_path)) for n in nodes(saved.tree.root) if n.kind == pb.NODE_KIND_SECTION
    ]
    assert sections == [
        (1, "Leave policy", ["Leave policy"]),
        (2, "Requesting leave", ["Leave policy", "Requesting leave"]),
        (3, "Carry-over", ["Leave policy", "Requesting leave", "Carry-over"]),
        (2, "Entitlement by grade", ["Leave policy", "Entitlement by grade"]),
        (2, "Checking your balance", ["Leave policy", "Checking your balance"]),
    ]
    title = saved.tree.root.children[0]
    assert (title.start_char, title.end_char) == (0, len(saved.text))


def test_lists_table_and_code_are_nodes_whose_ranges_slice_exactly(saved):
    check_offsets(saved)
    text = saved.text
    by_kind: dict[int, list[str]] = {}
    for node in nodes(saved.tree.root):
        by_kind.setdefault(node.kind, []).append(text[node.start_char : node.end_char])
    assert by_kind[pb.NODE_KIND_LIST_ITEM] == [
        "1. Open the leave form.",
        "2. Pick the dates <from> and <to>.",
        "3. Submit it.",
        "- Up to five days carry over.",
        "- Unused days expire on 31 March.",
    ]
    assert by_kind[pb.NODE_KIND_TABLE] == ["| Grade | Days |\n|---|---|\n| Junior | 25 |\n| Senior \\| Lead | 28 |"]
    assert by_kind[pb.NODE_KIND_CODE] == [
        '```python\nbalance = api.get("/leave")\nif balance < 5:\n    print("plan ahead")\n```'
    ]
    assert by_kind[pb.NODE_KIND_PARAGRAPH][1] == (
        "Every employee gets 25 days of annual leave & public holidays. Café staff follow the same rules."
    )


def test_title_language_date_and_what_was_removed_are_read_from_the_page(saved):
    assert saved.metadata == {
        "encoding": "utf-8",
        "content_element": "main",
        "title": "Leave policy – Acme Intranet",
        "lang": "en-GB",
        "description": "How annual leave works at Acme.",
        "author": "People Team",
        "boilerplate_removed": "hidden 1",
    }
    assert saved.language == "en"
    # article:published_time comes before the article's <time> and the JSON-LD date.
    assert saved.published_at == datetime(2024, 3, 5, 8, 30, tzinfo=UTC)
    assert saved.published_at.utcoffset() == timedelta(0)  # the store keeps wall time, so dates go in as UTC


@pytest.mark.parametrize("strategy", sorted(info.name for info in REGISTRY.infos()))
def test_every_strategy_chunks_the_page_with_exact_offsets(saved, strategy):
    source = SourceDocument(
        pb.Document(
            document_id="doc-1",
            name="leave.html",
            text=saved.text,
            language="en",
            collection="default",
            format=pb.DOCUMENT_FORMAT_HTML,
            tree=saved.tree,
        )
    )
    chunks = run(strategy, source)  # checks text[start:end] == content for every chunk
    assert chunks
    assert all(saved.text[c.start_char : c.end_char] == c.content for c in chunks)


# -- the boilerplate rule without <main> --------------------------------------

BODY_ONLY = page(
    "<header><p>Site name</p></header>"
    '<div role="navigation"><a href="/">Home</a></div>'
    '<div class="cc-window gdpr-notice">We value your privacy</div>'
    "<section><header><h2>Opening &amp; closing</h2></header>"
    "Loose text in a section.<p>A <em>real</em>\n   paragraph.</p>"
    '<div hidden>secret</div><span aria-hidden="true">icon</span>'
    "<footer>Section footnote.</footer></section>"
    "<footer><p>Copyright</p></footer>",
    head="<title>Opening hours</title>",
)


def test_without_main_the_body_loses_page_level_header_footer_landmarks_hidden_and_consent_banners():
    content = read_html("hours.html", BODY_ONLY)
    assert content.text == (
        "# Opening hours\n\n## Opening & closing\n\nLoose text in a section.\n\nA real paragraph.\n\nSection footnote."
    )
    assert content.metadata["content_element"] == "body"
    assert content.metadata["boilerplate_removed"] == "cookie banner 1, footer 1, header 1, hidden 2, role=navigation 1"
    sections = [list(n.heading_path) for n in nodes(content.tree.root) if n.kind == pb.NODE_KIND_SECTION]
    assert sections == [["Opening hours"], ["Opening hours", "Opening & closing"]]  # the title is the page's section
    check_offsets(content)


LEAD = "The harbour keeps its quays open all year, and this page says how and why that matters to the town."


@pytest.mark.parametrize(
    "body",
    [
        f"<header><nav><a href='/'>Home</a></nav><div class='logo'>Harbour board</header><h1>The harbour</h1><p>{LEAD}</p>",
        f"<form id='aspnetForm' action='/default.aspx'><div><h1>The harbour</h1><p>{LEAD}</p></div></form>",
    ],
    ids=["a div left open in the header", "a page in one form"],
)
def test_a_landmark_or_form_that_holds_the_page_is_read_not_dropped(body):
    """libxml2 knows HTML 4 only: a <div> left open in a page's <header> puts the rest of the page
    inside the header, which was dropped as the site's banner (the page refused as having no text);
    ASP.NET and SharePoint put a whole page in one <form>."""
    content = read_html("page.html", page(body))
    assert "# The harbour" in content.text and LEAD in content.text
    assert "Home" not in content.text  # the menu inside is still dropped


def test_soft_hyphens_zero_width_spaces_and_bidi_marks_are_taken_out_of_words_but_not_out_of_code():
    body = "<p>Die Donau&shy;dampf&shy;schiff&#8203;fahrt, Foo&lrm;bar, \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645</p><pre>a&shy;b</pre>"
    content = read_html("page.html", page(body))
    assert (
        content.text.split("\n\n")[0]
        == "Die Donaudampfschifffahrt, Foobar, \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
    )
    assert "a\u00adb" in content.text  # code as written


def test_a_cell_spanning_columns_or_rows_is_repeated_over_them_so_values_stay_under_their_headers():
    # html2text's pad_table and inscriptis' tables: the cells after a colspan sat under the wrong header.
    body = (
        "<table><tr><th colspan='3'>Sales by region</th></tr>"
        "<tr><th>Region</th><th colspan='2'>Quarter</th></tr>"
        "<tr><td>North</td><td>Q1</td><td>Q2</td></tr>"
        "<tr><td rowspan='2'>South</td><td>10</td><td>12</td></tr><tr><td>11</td><td>13</td></tr></table>"
    )
    assert read_html("sales.html", page(body)).text.splitlines() == [
        "| Sales by region |  |  |",  # across the whole table: once
        "|---|---|---|",
        "| Region | Quarter | Quarter |",
        "| North | Q1 | Q2 |",
        "| South | 10 | 12 |",
        "| South | 11 | 13 |",
    ]


def test_a_list_item_keeps_its_code_lines_its_table_s_cells_apart_and_its_own_number():
    body = (
        "<ol start='3'><li>Run this:<pre>for a in range(3):\n    print(a)</pre></li>"
        "<li value='10'>Compare the plans:<table><tr><th>Plan</th><th>Price</th></tr>"
        "<tr><td>Basic</td><td>5</td></tr></table></li><li>Done.</li></ol>"
        "<ol reversed><li>three</li><li>two</li><li>one</li></ol>"
    )
    assert read_html("steps.html", page(body)).text == (
        "3. Run this:\n\n```\nfor a in range(3):\n    print(a)\n```\n\n"
        "10. Compare the plans:\n    Plan Price\n    Basic 5\n11. Done.\n\n"
        "3. three\n2. two\n1. one"
    )


def test_numbers_a_browser_would_not_read_leave_spans_and_numbering_as_they_are():
    # "²" is a digit to Python's str.isdigit and no number to int(): it stopped the reader.
    body = "<table><tr><td colspan='²'>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table><ol start='--3'><li>x</li></ol>"
    assert read_html("odd.html", page(body)).text == "| a | b |\n|---|---|\n| c | d |\n\n1. x"


def test_the_title_is_the_level_one_heading_only_when_the_content_has_no_h1():
    with_h1 = read_html("a.html", page("<h1>Real heading</h1><p>Body.</p>", head="<title>Tab title</title>"))
    assert with_h1.text == "# Real heading\n\nBody."
    assert with_h1.metadata["title"] == "Tab title"
    untitled = read_html("b.html", page("<h2>Part</h2><p>Body.</p>"))
    assert untitled.text == "## Part\n\nBody."


def test_the_only_article_is_the_content_when_there_is_no_main():
    content = read_html("c.html", page("<div>Teaser elsewhere</div><article><h1>Post</h1><p>Text.</p></article>"))
    assert (content.text, content.metadata["content_element"]) == ("# Post\n\nText.", "article")


# -- blocks -------------------------------------------------------------------


def test_nested_lists_numbering_quotes_description_lists_as_lists_and_line_breaks():
    content = read_html(
        "d.html",
        page(
            '<ol start="3"><li>Three<ul><li>sub a</li><li>sub b<br>second line</li></ul></li><li>Four</li></ol>'
            "<blockquote><p>Quoted</p>words</blockquote><dl><dt>Term</dt><dd>Meaning</dd></dl>"
        ),
    )
    assert content.text == (
        "3. Three\n  - sub a\n  - sub b\n    second line\n4. Four\n\n> Quoted\n\n> words\n\n- Term\n  - Meaning"
    )
    items = [
        content.text[n.start_char : n.end_char] for n in nodes(content.tree.root) if n.kind == pb.NODE_KIND_LIST_ITEM
    ]
    assert items == ["3. Three", "  - sub a", "  - sub b\n    second line", "4. Four", "- Term", "  - Meaning"]


def test_blocks_inside_inline_elements_and_list_items_keep_their_breaks():
    content = read_html(
        "p.html",
        page(
            "<a href='/post'><h3>Card title</h3><p>Teaser</p></a><p>Plain <a href='/x'>link</a> here</p>"
            "<ul><li><p>One</p><p>Two</p></li><li>Three</li></ul>"
            "<table><tr><th>k</th><th>v</th></tr><tr><td><p>a</p><p>b</p></td><td>c</td></tr></table>"
        ),
    )
    assert content.text == (
        "### Card title\n\nTeaser\n\nPlain link here\n\n- One\n  Two\n- Three\n\n| k | v |\n|---|---|\n| a b | c |"
    )


def test_a_grid_keeps_a_heading_or_a_table_in_a_cell_as_text_and_a_frame_is_read_as_blocks():
    grid = read_html(
        "g.html",
        page(
            "<table><tr><td><h1>A</h1></td><td>B</td></tr><tr><td><table><tr><td>A1</td><td>B1</td></tr>"
            "<tr><td>C1</td><td>D1</td></tr></table></td><td>2</td></tr></table>"
        ),
    )
    assert grid.text == "| A | B |\n|---|---|\n| A1 B1 C1 D1 | 2 |"
    frame = read_html("f.html", page("<table><tr><td><p>First part.</p><p>Second part.</p></td></tr></table>"))
    assert frame.text == "First part.\n\nSecond part."


def test_code_keeps_its_spaces_and_a_fence_longer_than_the_backticks_inside():
    content = read_html("e.html", page("<pre>  indented\n\tx = '```'\n\n</pre><p>after</p>"))
    assert content.text == "````\n  indented\n\tx = '```'\n````\n\nafter"
    check_offsets(content)


def test_a_layout_table_is_read_as_blocks_and_a_data_table_keeps_its_rows_padded():
    layout = read_html("f.html", page("<table><tr><td><h2>Menu</h2><p>Soup</p></td><td>Bread</td></tr></table>"))
    assert layout.text == "## Menu\n\nSoup\n\nBread"
    data = read_html(
        "g.html",
        page(
            "<table><caption>Prices</caption><tr><th>Item</th><th>Price</th></tr>"
            "<tr><td>Tea</td></tr><tr><td></td><td></td></tr></table>"
        ),
    )
    assert data.text == "Prices\n\n| Item | Price |\n|---|---|\n| Tea |  |"


# -- charset, language, date ----------------------------------------------------


def test_the_declared_charset_reads_the_bytes_and_latin1_means_windows_1252():
    data = "<html><head><meta charset=iso-8859-1></head><body><p>Café €5</p></body></html>".encode("cp1252")
    content = read_html("h.html", data)
    assert (content.text, content.metadata["encoding"]) == ("Café €5", "cp1252")
    xhtml = (
        '<?xml version="1.0" encoding="iso-8859-15"?><html xmlns="http://www.w3.org/1999/xhtml" '
        'xml:lang="fr"><body><p>Œuvre €</p></body></html>'
    ).encode("iso-8859-15")
    content = read_html("i.xhtml", xhtml)
    assert (content.text, content.metadata["encoding"], content.language) == ("Œuvre €", "iso8859-15", "fr")


def test_a_utf16_page_with_its_byte_order_mark_and_an_undeclared_utf8_page_are_read():
    assert (
        read_html("j.html", page("<p>Grüße</p>", html='<html lang="de-AT">').decode().encode("utf-16")).text == "Grüße"
    )
    assert read_html("k.html", "<p>naïve</p>".encode()).text == "naïve"


@pytest.mark.parametrize("declared", ['<meta charset="UTF-8">', ""], ids=["declared", "undeclared"])
def test_a_utf8_page_whose_head_alone_holds_latin1_bytes_is_read(declared):
    """inscriptis' naturgruen-team.html: its meta tags were pasted in Latin-1 ("naturgr\xfcn"); a
    browser shows the page whole, and it was refused as damaged UTF-8."""
    head = declared.encode() + b'<meta name="title" content="naturgr' + b"\xfc" + b'n">'
    body = "<h1>Über uns</h1><p>Qualität seit 1990.</p>".encode()
    content = read_html("team.html", b"<html><head>" + head + b"</head><body>" + body + b"</body></html>")
    assert content.text == "# Über uns\n\nQualität seit 1990." and content.metadata["encoding"] == "utf-8"


@pytest.mark.parametrize(
    ("head", "html", "expected"),
    [
        ("", '<html lang="pt_BR">', ("pt", "pt_BR")),
        ('<meta http-equiv="Content-Language" content="de, en">', "<html>", ("de", "de")),
        ("", '<html lang="und">', ("", "")),
        ("", "<html>", ("", "")),
    ],
)
def test_the_language_is_the_primary_subtag_of_what_the_page_declares(head, html, expected):
    content = read_html("l.html", page("<p>Text.</p>", head=head, html=html))
    assert (content.language, content.metadata.get("lang", "")) == expected


@pytest.mark.parametrize(
    ("head", "body", "expected"),
    [
        (
            '<meta property="article:published_time" content="2024-01-02T03:04:05Z">',
            '<time datetime="2020-01-01">x</time>',
            datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
        ),
        (
            '<meta property="article:published_time" content="not a date">',
            '<time datetime="2020-05-06">6 May</time>',
            datetime(2020, 5, 6, tzinfo=UTC),
        ),
        (
            '<script type="application/ld+json">[{"@graph": [{"datePublished": "2019-07-08T10:00:00"}]}]</script>'
            '<meta name="date" content="2001-01-01">',
            "",
            datetime(2019, 7, 8, 10, tzinfo=UTC),
        ),
        ('<meta name="DC.date" content="Tue, 05 Mar 2024 09:30:00 GMT">', "", datetime(2024, 3, 5, 9, 30, tzinfo=UTC)),
        ("", "<aside><time datetime='2018-01-01'>old</time></aside>", None),
    ],
)
def test_the_publication_date_is_the_first_declared_source_that_parses(head, body, expected):
    assert read_html("m.html", page(f"<p>Text.</p>{body}", head=head)).published_at == expected


# -- refusals -------------------------------------------------------------------


def refused(data: bytes, error, *phrases, limits=HtmlLimits()):
    with pytest.raises(error) as caught:
        read_html("page.html", data, limits)
    for phrase in phrases:
        assert phrase in str(caught.value)
    return str(caught.value)


def test_a_hundred_thousand_deep_nesting_is_refused_as_resource_exhausted():
    deep = page("<div>" * 100_000 + "x" + "</div>" * 100_000)
    refused(deep, ResourceExhausted, "'page.html' nests elements more than 256 deep (line 1")
    # A page that must be counted first (its 303 tags might make 609 elements) is held to the same depth.
    counted = page("<div>" * 300 + "x" + "</div>" * 300)
    refused(counted, ResourceExhausted, "'page.html' nests elements more than 256 deep (line 1", limits=HtmlLimits(600))


def test_nesting_just_inside_the_depth_limit_is_read():
    # html and body count: 254 divs reach depth 256.
    assert read_html("n.html", page("<div>" * 254 + "deep text" + "</div>" * 254)).text == "deep text"


def test_a_page_over_the_element_limit_is_refused_while_it_is_parsed():
    many = page("<p>x</p>" * 3000)
    message = refused(many, ResourceExhausted, "holds more than 1,000 HTML elements", limits=HtmlLimits(1000))
    assert message.endswith("split it into several pages, or save only its article")
    # 600 paragraphs may pass 1,000 elements by their tags alone, so they are counted first, and pass.
    counted = read_html("o.html", page("<p>x</p>" * 600), HtmlLimits(1000))
    assert counted.text == read_html("o.html", page("<p>x</p>" * 600)).text == "\n\n".join(["x"] * 600)


def test_a_text_run_past_the_parser_limit_is_refused_whether_or_not_the_page_is_counted_first():
    long_run = page("<p>x</p>" * 600 + "<p>" + "word " * 2_200_000 + "</p><p>after</p>")
    refused(long_run, ResourceExhausted, "at line 1", "most likely one run of text or one attribute over 10 MB")
    refused(long_run, ResourceExhausted, "over 10 MB", limits=HtmlLimits(1000))


def test_a_page_whose_text_a_script_builds_says_what_was_found():
    shell = page(
        '<div id="root"></div><noscript>Enable JavaScript</noscript><script>render()</script>',
        head="<title>Dashboard</title>",
    )
    assert refused(shell, InvalidArgument) == (
        "'page.html' has no readable text: its body element holds no text once boilerplate is removed "
        "(noscript 1, script 1 removed); its title is 'Dashboard'. If a script builds the page in the browser, "
        "save it from the browser once it has loaded, or upload the text as .md or .txt"
    )


def test_a_page_of_images_alone_says_so_not_that_a_script_builds_it():
    gallery = page('<img src="harbour.png" alt="The harbour"><img src="quay.png">', head="<title>Photos</title>")
    assert refused(gallery, InvalidArgument) == (
        "'page.html' has no readable text: its body element holds no text, only 2 images; its title is "
        "'Photos'. Only text is read: upload the page's text as .md or .txt"
    )


@pytest.mark.parametrize(
    ("data", "phrase"),
    [
        (b"%PDF-1.7 binary", "declared as HTML but its content is a PDF file"),
        (b"PK\x03\x04zip", "its content is a zip archive"),
        (b"Just a note.\nNo markup here.", "holds no HTML tags at all; if it is plain text, name it .txt or .md"),
        (b"<html>\x00\x01\x02\x03</html>", "looks like binary data"),
    ],
)
def test_bytes_that_are_not_html_are_refused_with_what_they_are(data, phrase):
    refused(data, InvalidArgument, phrase)


# -- through the ingest service ----------------------------------------------------


def test_html_extensions_resolve_and_the_unknown_extension_message_names_them():
    assert {resolve_format(f"page{ext}", 0) for ext in (".html", ".htm", ".XHTML")} == {pb.DOCUMENT_FORMAT_HTML}
    with pytest.raises(InvalidArgument, match=r"\.docx, \.pdf, \.html, \.htm or \.xhtml"):
        resolve_format("slides.pptx", 0)


def test_an_uploaded_page_is_stored_with_its_declared_language_and_date(service):
    document, existed = create(service, "leave.html", SAVED_PAGE)
    assert (existed, document.format, document.language) == (False, pb.DOCUMENT_FORMAT_HTML, "en")
    stored = service.get(document.document_id, pb.DOCUMENT_VIEW_FULL)  # read back from the store
    assert stored.published_at.ToJsonString() == "2024-03-05T08:30:00Z"
    assert (stored.text, stored.metadata["content_element"]) == (SAVED_PAGE_TEXT, "main")
    declared, _ = create(service, "leave.htm", SAVED_PAGE.replace(b"Leave   policy", b"Leave rules"), language="fr")
    assert declared.language == "fr"


def test_a_page_over_the_upload_limit_is_refused_and_nothing_is_stored(tmp_path):
    small = IngestService(make_sessionmaker(f"sqlite:///{tmp_path / 'small.sqlite3'}", Base), 100_000, lambda _id: 0)
    with pytest.raises(
        ResourceExhausted,
        match=r"'big\.html' is [0-9.]+ MB, over the upload limit of 0\.1 MB \(CHUNKLAB_MAX_UPLOAD_MB\)",
    ):
        create(small, "big.html", page("<p>words</p>" * 25_000))
    assert small.list(10, "", "", "")[2] == 0
