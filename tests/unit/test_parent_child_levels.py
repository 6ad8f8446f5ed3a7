"""parent_child's three levels on titled and untitled documents (ADR 0043):
a title heading is not a section level, so `article`, `section` and
`paragraph` give the same parents on Markdown and DOCX with or without one."""

from __future__ import annotations

import re

import pytest

from chunklab import ids
from chunklab.v1 import documents_pb2
from services.chunker.strategies import SourceDocument
from services.ingest.readers.docx import read_docx
from tests.support.chunking import REGULATION, document, families, run
from tests.support.ingest import docx_bytes

LEVELS = ("article", "section", "paragraph")


def parents(source: SourceDocument, level: str, **knobs) -> list[tuple[str, list[str]]]:
    """(text, heading path) of every parent, after checking that parents hold
    their children and never overlap."""
    chunks = run("parent_child", source, parent_level=level, **knobs)
    families(chunks)
    found = [c for c in chunks if ids.role_name(c.role) == "parent"]
    assert all(a.end_char <= b.start_char for a, b in zip(found, found[1:]))
    return [(c.content, list(c.heading_path)) for c in found]


def children(source: SourceDocument, level: str) -> list[str]:
    return [c.content for c in run("parent_child", source, parent_level=level) if ids.role_name(c.role) == "child"]


def docx_document(build) -> SourceDocument:
    content = read_docx(docx_bytes(build))
    return SourceDocument(
        documents_pb2.Document(
            document_id="doc-1",
            name="rules.docx",
            text=content.text,
            language="en",
            collection="default",
            format=documents_pb2.DOCUMENT_FORMAT_DOCX,
            tree=content.tree,
        )
    )


# -- Markdown ---------------------------------------------------------------

TITLED = "# Title\n\n## A\ntext of a\n## B\ntext of b"


@pytest.mark.parametrize("level", ["article", "section"])
def test_a_title_over_two_sections_gives_the_two_sections_at_both_heading_levels(level):
    assert parents(document(TITLED), level) == [
        ("## A\ntext of a", ["Title", "A"]),
        ("## B\ntext of b", ["Title", "B"]),
    ]


def test_the_same_sections_without_a_title_give_the_same_parents():
    untitled = document("## A\ntext of a\n## B\ntext of b")
    assert parents(untitled, "section") == [("## A\ntext of a", ["A"]), ("## B\ntext of b", ["B"])]
    assert parents(untitled, "paragraph") == [("text of a", ["A"]), ("text of b", ["B"])]
    assert parents(document(TITLED), "paragraph") == [("text of a", ["Title", "A"]), ("text of b", ["Title", "B"])]


def titled(text: str, title: str) -> str:
    """The document one heading level deeper, under a `# title` line."""
    return f"# {title}\n\n" + re.sub(r"^#", "##", text, flags=re.M)


@pytest.mark.parametrize("level", LEVELS)
def test_the_regulation_under_a_title_keeps_its_parts_articles_and_paragraphs(level):
    """The same parents and children as the untitled regulation (whose goldens
    are in test_strategies.py), one level deeper; the preamble becomes the
    title's own content and keeps the title's heading line at heading levels."""
    plain, under_title = document(REGULATION), document(titled(REGULATION, "Data regulation"))
    expected = [
        (re.sub(r"^#", "##", text, flags=re.M), ["Data regulation", *path]) for text, path in parents(plain, level)
    ]
    preamble = "Preamble: this regulation sets rules for data. It applies from 2025."
    assert expected[0] == (preamble, ["Data regulation"])
    if level != "paragraph":
        expected[0] = ("# Data regulation\n\n" + preamble, ["Data regulation"])
    assert parents(under_title, level) == expected
    assert children(under_title, level) == [re.sub(r"^#", "##", c, flags=re.M) for c in children(plain, level)]
    assert len(expected) == {"article": 6, "section": 3, "paragraph": 9}[level]


def test_a_title_at_any_heading_level_with_a_line_before_it_is_still_a_title():
    text = "Draft, not for circulation.\n\n## Rules\n\nThese rules apply.\n\n### One\n\nFirst.\n\n### Two\n\nSecond."
    expected = [
        ("Draft, not for circulation.", []),
        ("## Rules\n\nThese rules apply.", ["Rules"]),
        ("### One\n\nFirst.", ["Rules", "One"]),
        ("### Two\n\nSecond.", ["Rules", "Two"]),
    ]
    assert parents(document(text), "section") == expected
    assert parents(document(text), "article") == expected


def test_two_top_level_headings_are_parts_not_a_title():
    text = "# Part A\n\n## A1\n\nAlpha.\n\n## A2\n\nBeta.\n\n# Part B\n\n## B1\n\nGamma."
    assert parents(document(text), "section") == [
        ("# Part A\n\n## A1\n\nAlpha.\n\n## A2\n\nBeta.", ["Part A"]),
        ("# Part B\n\n## B1\n\nGamma.", ["Part B"]),
    ]
    assert [p for p, _ in parents(document(text), "article")] == [
        "## A1\n\nAlpha.",
        "## A2\n\nBeta.",
        "## B1\n\nGamma.",
    ]


def test_parts_under_a_title_are_cut_between_whole_children_at_the_parent_maximum():
    text = (
        "# T\n\n## Part\n\n"
        + "\n\n".join(f"Paragraph {i} says something short." for i in range(6))
        + "\n\n## Next\n\nEnd."
    )
    found = parents(document(text), "section", child_max_tokens=16, parent_max_tokens=30)
    assert [p for p, _ in found] == [
        "## Part\n\nParagraph 0 says something short.\n\nParagraph 1 says something short.\n\nParagraph 2 says something short.",
        "Paragraph 3 says something short.\n\nParagraph 4 says something short.\n\nParagraph 5 says something short.",
        "## Next\n\nEnd.",
    ]


# -- DOCX -------------------------------------------------------------------


def seven_articles(title: bool):
    def build(doc) -> None:
        if title:
            doc.add_heading("Data regulation", 0)  # the Title style
        for i in range(1, 8):
            doc.add_heading(f"Article {i}", 1)
            doc.add_paragraph(f"Article {i} sets rule {i}.")
            doc.add_paragraph(f"Rule {i} has one exception.")

    return build


@pytest.mark.parametrize("title", [True, False], ids=["with Title style", "without title"])
def test_seven_docx_articles_are_seven_parents_at_article_and_section(title):
    source = docx_document(seven_articles(title))
    mark, path = ("##", ["Data regulation"]) if title else ("#", [])
    articles = [
        (f"{mark} Article {i}\n\nArticle {i} sets rule {i}.\n\nRule {i} has one exception.", [*path, f"Article {i}"])
        for i in range(1, 8)
    ]
    assert parents(source, "article") == articles
    assert parents(source, "section") == articles
    assert parents(source, "paragraph") == [
        (text, [*path, f"Article {i}"])
        for i in range(1, 8)
        for text in (f"Article {i} sets rule {i}.", f"Rule {i} has one exception.")
    ]


def test_docx_parts_under_a_title_are_the_sections_and_their_articles_the_articles():
    def build(doc) -> None:
        doc.add_heading("Data regulation", 0)
        doc.add_paragraph("This regulation sets rules for data.")
        for part, articles in (("Part I", (1, 2)), ("Part II", (3,))):
            doc.add_heading(part, 1)
            for i in articles:
                doc.add_heading(f"Article {i}", 2)
                doc.add_paragraph(f"Article {i} text.")

    source = docx_document(build)
    intro = ("# Data regulation\n\nThis regulation sets rules for data.", ["Data regulation"])
    assert parents(source, "section") == [
        intro,
        (
            "## Part I\n\n### Article 1\n\nArticle 1 text.\n\n### Article 2\n\nArticle 2 text.",
            ["Data regulation", "Part I"],
        ),
        ("## Part II\n\n### Article 3\n\nArticle 3 text.", ["Data regulation", "Part II"]),
    ]
    assert parents(source, "article") == [intro] + [
        (f"### Article {i}\n\nArticle {i} text.", ["Data regulation", part, f"Article {i}"])
        for part, i in (("Part I", 1), ("Part I", 2), ("Part II", 3))
    ]
