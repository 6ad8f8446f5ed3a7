"""A web page's main text (ADR 0102): trafilatura chooses which of ChunkLab's own blocks are the
article, so furniture goes (related links, share bars, edit links, category blocks, language
lists, heading permalinks) and the article keeps its headings, lists, tables and code."""

from __future__ import annotations

import pytest

from chunklab.v1 import documents_pb2 as pb
from services.ingest.readers.html import read_html
from tests.support.repo import REPO

REAL_DOCS = REPO.parent / "shared" / "data" / "real-docs" / "html"

PARAGRAPH = (
    "The river rises in the northern hills and runs for three hundred kilometres before it reaches "
    "the sea, passing farms, two market towns and the old mill that gave the valley its name. "
)


def nodes(node):
    yield node
    for child in node.children:
        yield from nodes(child)


def sections(parsed) -> list[tuple[int, str, list[str]]]:
    return [(n.level, n.title, list(n.heading_path)) for n in nodes(parsed.tree.root) if n.kind == pb.NODE_KIND_SECTION]


def kinds(parsed, kind) -> list[str]:
    return [parsed.text[n.start_char : n.end_char] for n in nodes(parsed.tree.root) if n.kind == kind]


def real(name: str) -> bytes:
    path = REAL_DOCS / name
    if not path.is_file():
        pytest.skip(f"needs the real-docs dev set at {REAL_DOCS}: put the shared data folder beside the repository")
    return path.read_bytes()


WIKI_PAGE = f"""<!DOCTYPE html><html lang="en"><head><title>River Vale - Wiki</title></head><body>
<div id="content"><h1>River Vale</h1>
<p>{PARAGRAPH * 2}</p>
<h2>History<span class="mw-editsection">[<a href="/edit?section=1">edit</a>]</span></h2>
<p>{PARAGRAPH * 2}</p>
<h2>Installation<a class="headerlink" href="#installation" title="Link to this heading">¶</a></h2>
<p>Install the survey tools first, then load the readings:</p>
<pre><code class="language-python">readings = load("vale.csv")
print(len(readings))</code></pre>
<ul><li>Take the first reading at the spring.</li><li>Take the second reading at the mill.</li></ul>
<h3>Gauges <a href="#gauges">#</a></h3>
<table><tr><th>Gauge</th><th>Flow</th><th>Depth</th></tr>
<tr><td>Spring</td><td>2.1</td><td>0.4</td></tr><tr><td>Mill</td><td>9.8</td><td>1.7</td></tr></table>
<p>{PARAGRAPH}</p>
<div id="catlinks" class="catlinks"><a href="/Category:Rivers">Category</a>: <ul><li><a href="/c/1">Rivers of the north</a></li>
<li><a href="/c/2">Valleys</a></li></ul></div>
</div>
<div class="related"><h3>Related articles</h3><ul><li><a href="/a">Ten best mills to visit this summer</a></li>
<li><a href="/b">Why the sea is salty</a></li><li><a href="/c">Subscribe to our newsletter</a></li></ul></div>
<div class="share"><a href="/s/fb">Share on Facebook</a> <a href="/s/tw">Share on Twitter</a></div>
<ul class="languages"><li><a href="/de" hreflang="de">Deutsch</a></li><li><a href="/fr" hreflang="fr">Français</a></li>
<li><a href="/es" hreflang="es">Español</a></li></ul>
</body></html>""".encode()


@pytest.fixture(scope="module")
def wiki():
    return read_html("vale.html", WIKI_PAGE)


def test_edit_links_category_blocks_language_lists_and_related_links_are_dropped(wiki):
    for furniture in (
        "edit",
        "Category",
        "Rivers of the north",
        "Deutsch",
        "Français",
        "Related articles",
        "Ten best mills",
        "Share on Facebook",
    ):
        assert furniture not in wiki.text
    removed = wiki.metadata["boilerplate_removed"]
    for reason in ("edit link 1", "category block 1", "language list 1", "permalink 2"):
        assert reason in removed


def test_a_sphinx_permalink_is_in_no_heading_title_or_path(wiki):
    assert "¶" not in wiki.text
    assert sections(wiki) == [
        (1, "River Vale", ["River Vale"]),
        (2, "History", ["River Vale", "History"]),
        (2, "Installation", ["River Vale", "Installation"]),
        (3, "Gauges", ["River Vale", "Installation", "Gauges"]),
    ]


def test_the_article_keeps_its_list_table_and_code(wiki):
    assert kinds(wiki, pb.NODE_KIND_LIST_ITEM) == [
        "- Take the first reading at the spring.",
        "- Take the second reading at the mill.",
    ]
    assert kinds(wiki, pb.NODE_KIND_TABLE) == [
        "| Gauge | Flow | Depth |\n|---|---|---|\n| Spring | 2.1 | 0.4 |\n| Mill | 9.8 | 1.7 |"
    ]
    assert kinds(wiki, pb.NODE_KIND_CODE) == ['```python\nreadings = load("vale.csv")\nprint(len(readings))\n```']
    assert wiki.text.count(PARAGRAPH.strip()) == 5


def test_a_heading_the_parser_nested_the_article_in_keeps_its_paragraphs_apart():
    body = (
        "<article><h1>Tattoo</h1><h2 class='excerpt'>A short summary of the story.</h3>"
        f"<div class='body'><p>{PARAGRAPH}</p><p>Second paragraph of the story.</p></div></article>"
    )
    parsed = read_html("t.html", f"<html><body>{body}</body></html>".encode())
    assert [title for _, title, _ in sections(parsed)] == ["Tattoo", "A short summary of the story."]
    assert kinds(parsed, pb.NODE_KIND_PARAGRAPH) == [PARAGRAPH.strip(), "Second paragraph of the story."]


def test_a_saved_blog_post_loses_its_furniture_and_keeps_its_sections():
    parsed = read_html("7mind.de.grenzen.html", real("web/7mind.de.grenzen.html"))
    for furniture in ("Das könnte dich auch interessieren", "Unsere Inhalte", "Einloggen"):
        assert furniture not in parsed.text
    found = {(level, title) for level, title, _ in sections(parsed)}
    assert {(2, "Grenzen, das Fundament der Selbstfürsorge"), (3, "Wofür sind Grenzen gut?")} <= found
    assert "Wie du deine individuellen Grenzen findest und in dein Leben integrierst." in parsed.text
    assert "furniture" in parsed.metadata["boilerplate_removed"]


def test_a_short_html_export_is_read_whole_with_its_title_and_code():
    parsed = read_html("html_code_snippets.html", real("html_code_snippets.html"))
    assert sections(parsed)[0][1] == "Code snippets"
    assert kinds(parsed, pb.NODE_KIND_CODE)[0].startswith("```\nfrom docling.document_converter import")
    assert "Use the docling-tools models download utility:" in parsed.text
    assert "boilerplate_removed" not in parsed.metadata or "furniture" not in parsed.metadata["boilerplate_removed"]


def test_a_page_too_long_to_choose_from_is_read_whole_without_trafilatura(monkeypatch):
    """trafilatura's time grows faster than the page (8.5 MB of source code took it 160 s): past
    MAX_CHOOSING_CHARS of content the page is read whole, the boilerplate rule still applied, and
    the parse report says why (ADR 0168). A page of thousands of blocks is matched against the main
    text by plain string search, once per block, not a regular expression compiled per block."""
    from services.ingest.readers import html_main

    def not_asked(_page):
        raise AssertionError("trafilatura was asked to choose from a page past the limit")

    monkeypatch.setattr(html_main, "main_text", not_asked)
    sections_html = "".join(f"<h2>Chapter {i}</h2><p>{PARAGRAPH * 3}</p>" for i in range(1100))
    page = f"<html><head><title>A long manual</title></head><body><nav><a href='/'>Home</a></nav><main>{sections_html}</main></body></html>"
    parsed = read_html("manual.html", page.encode())
    assert len(parsed.text) > html_main.MAX_CHOOSING_CHARS
    assert (sections(parsed)[1][1], sections(parsed)[-1][1]) == ("Chapter 0", "Chapter 1099")
    assert "Home" not in parsed.text  # the boilerplate rule drops the menu
    assert "too long to choose its main text" in parsed.metadata["content_element"]


def test_each_block_is_found_in_the_main_text_in_order_at_line_boundaries():
    """The main-text match of ADR 0102 (whole lines near or, for a long block, anywhere ahead;
    part of a line near the cursor; most of its words near), written with str.find."""
    from services.ingest.readers.html_main import NEAR_CHARS, MainTextWriter

    kept = (
        "a first line\nthe second line here\nmenu\n" + "x " * NEAR_CHARS + "\nmenu\nlast one of eight words in it now"
    )
    writer = MainTextWriter(kept, title="")
    assert writer.found("The second line here.")  # a whole line near the cursor
    assert not writer.found("A first line")  # behind the cursor: not found again
    assert writer.found("Menu")
    assert not writer.found("Menu")  # the next "menu" is far ahead and short: a repeat, not this block
    assert writer.found("last one of eight words in it now")  # long: found far ahead
    assert writer.dropped == 2
    # trafilatura's whole text as one long line (a page of DocBook): each part of it is found
    # near where the last one ended, not near the start of the line.
    parts = [f"part {i} of the page " + "word " * 40 for i in range(20)]
    joined = MainTextWriter(" ".join(p.strip() for p in parts) + "\nend", title="")
    assert all(joined.found(part) for part in parts)
    assert joined.cursor == 0 and joined.found("end") and joined.dropped == 0


def test_a_word_or_two_found_inside_a_later_line_does_not_skip_the_blocks_between():
    """The inscriptis page of a training company: its heading "Training" was found in
    "...group training" two lines down, the search went on from there, and the paragraph between,
    which trafilatura kept, was dropped."""
    from services.ingest.readers.html_main import MainTextWriter

    kept = "learn from the recognised experts in data extraction\nbook a private or group training today"
    writer = MainTextWriter(kept, title="")
    assert writer.found("Training")  # kept: its word is in the main text
    assert writer.found("Learn from the recognised experts in data extraction.")
    assert writer.found("Book a private or group training today.")
    assert writer.dropped == 0


def test_a_page_whose_blocks_hold_too_little_of_the_main_text_is_read_whole(monkeypatch):
    """A safety net (ADR 0168): when the blocks found hold under half of trafilatura's main text
    (its lines and the page's blocks did not line up), the page is read whole and says so."""
    from services.ingest.readers import html_main

    monkeypatch.setattr(html_main, "main_text", lambda _page: "words that are on no block of the page " * 40)
    sections_html = "".join(f"<h2>Part {i}</h2><p>{PARAGRAPH}</p>" for i in range(12))
    parsed = read_html("odd.html", f"<html><body><main>{sections_html}</main></body></html>".encode())
    assert [title for _, title, _ in sections(parsed)] == [f"Part {i}" for i in range(12)]
    assert "held too little of the main text" in parsed.metadata["content_element"]
