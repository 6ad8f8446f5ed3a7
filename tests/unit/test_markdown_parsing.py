"""Markdown and text into a DocumentTree with exact character ranges."""

from __future__ import annotations

from chunklab.v1 import documents_pb2 as pb
from services.ingest.readers import markdown as parsing

MARKDOWN = """Preamble before any heading.

# Title

Intro paragraph
spanning two lines.

## Section A
Text of A.

```python
# a comment, not a heading
print("x")
```

Setext heading
--------------

- item one
- item two
  continued

| a | b |
|---|---|
| 1 | 2 |

# Second top

Closing words.
"""


def walk(node, depth=0):
    yield node, depth
    for child in node.children:
        yield from walk(child, depth + 1)


def outline(tree) -> list[tuple[int, str, int, tuple[str, ...]]]:
    return [
        (depth, pb.NodeKind.Name(node.kind).removeprefix("NODE_KIND_"), node.level, tuple(node.heading_path))
        for node, depth in walk(tree.root)
    ]


def test_the_tree_nests_sections_and_blocks_under_their_headings():
    tree = parsing.parse(MARKDOWN, pb.DOCUMENT_FORMAT_MARKDOWN)
    assert outline(tree) == [
        (0, "DOCUMENT", 0, ()),
        (1, "PARAGRAPH", 0, ()),
        (1, "SECTION", 1, ("Title",)),
        (2, "HEADING", 1, ("Title",)),
        (2, "PARAGRAPH", 0, ("Title",)),
        (2, "SECTION", 2, ("Title", "Section A")),
        (3, "HEADING", 2, ("Title", "Section A")),
        (3, "PARAGRAPH", 0, ("Title", "Section A")),
        (3, "CODE", 0, ("Title", "Section A")),
        (2, "SECTION", 2, ("Title", "Setext heading")),
        (3, "HEADING", 2, ("Title", "Setext heading")),
        (3, "LIST", 0, ("Title", "Setext heading")),
        (4, "LIST_ITEM", 0, ("Title", "Setext heading")),
        (4, "LIST_ITEM", 0, ("Title", "Setext heading")),
        (3, "TABLE", 0, ("Title", "Setext heading")),
        (1, "SECTION", 1, ("Second top",)),
        (2, "HEADING", 1, ("Second top",)),
        (2, "PARAGRAPH", 0, ("Second top",)),
    ]


def test_every_node_range_is_exact_and_inside_its_parent():
    tree = parsing.parse(MARKDOWN, pb.DOCUMENT_FORMAT_MARKDOWN)
    texts = {
        pb.NODE_KIND_PARAGRAPH: {
            "Preamble before any heading.",
            "Intro paragraph\nspanning two lines.",
            "Text of A.",
            "Closing words.",
        },
        pb.NODE_KIND_LIST_ITEM: {"- item one", "- item two\n  continued"},
        pb.NODE_KIND_TABLE: {"| a | b |\n|---|---|\n| 1 | 2 |"},
        pb.NODE_KIND_HEADING: {"# Title", "## Section A", "Setext heading\n--------------", "# Second top"},
    }
    seen: dict[int, set[str]] = {kind: set() for kind in texts}

    def check(node):
        assert 0 <= node.start_char <= node.end_char <= len(MARKDOWN)
        for child in node.children:
            assert node.start_char <= child.start_char <= child.end_char <= node.end_char
            check(child)
        if node.kind in seen:
            seen[node.kind].add(MARKDOWN[node.start_char : node.end_char])

    check(tree.root)
    assert seen == texts
    code = [n for n, _ in walk(tree.root) if n.kind == pb.NODE_KIND_CODE][0]
    assert MARKDOWN[code.start_char : code.end_char].startswith("```python\n# a comment")


def test_a_document_without_headings_gives_a_flat_tree():
    text = "First paragraph.\r\nStill first.\r\n\r\nSecond paragraph.\n\n\n   Third, indented.  \n"
    tree = parsing.parse(text, pb.DOCUMENT_FORMAT_TEXT)
    assert [text[c.start_char : c.end_char] for c in tree.root.children] == [
        "First paragraph.\r\nStill first.",
        "Second paragraph.",
        "Third, indented.",
    ]
    assert {c.kind for c in tree.root.children} == {pb.NODE_KIND_PARAGRAPH}


def test_plain_text_never_makes_headings_of_hashes():
    text = "# not a heading in a .txt file\n\nbody\n"
    tree = parsing.parse(text, pb.DOCUMENT_FORMAT_TEXT)
    assert [c.kind for c in tree.root.children] == [pb.NODE_KIND_PARAGRAPH, pb.NODE_KIND_PARAGRAPH]


FENCED = """# Setup

Run these:

```bash
# not a heading: a shell comment
make up
```

~~~
# not a heading either
~~~

    # an indented comment, code too

Done.
"""


def test_a_hash_line_inside_a_fence_is_code_not_a_heading():
    tree = parsing.parse(FENCED, pb.DOCUMENT_FORMAT_MARKDOWN)
    assert outline(tree) == [
        (0, "DOCUMENT", 0, ()),
        (1, "SECTION", 1, ("Setup",)),
        (2, "HEADING", 1, ("Setup",)),
        (2, "PARAGRAPH", 0, ("Setup",)),
        (2, "CODE", 0, ("Setup",)),
        (2, "CODE", 0, ("Setup",)),
        (2, "CODE", 0, ("Setup",)),
        (2, "PARAGRAPH", 0, ("Setup",)),
    ]
    assert [FENCED[n.start_char : n.end_char] for n, _ in walk(tree.root) if n.kind == pb.NODE_KIND_CODE] == [
        "```bash\n# not a heading: a shell comment\nmake up\n```",
        "~~~\n# not a heading either\n~~~",
        "# an indented comment, code too",
    ]


def test_front_matter_and_comments_make_no_heading():
    text = "---\ntitle: Notes\n# a YAML comment\n---\n<!--\n# commented out\n-->\n# Notes\n\nBody.\n"
    tree = parsing.parse(text, pb.DOCUMENT_FORMAT_MARKDOWN)
    assert [(n.kind, text[n.start_char : n.end_char]) for n, _ in walk(tree.root)][1:] == [
        (pb.NODE_KIND_PARAGRAPH, "<!--\n# commented out\n-->"),
        (pb.NODE_KIND_SECTION, "# Notes\n\nBody."),
        (pb.NODE_KIND_HEADING, "# Notes"),
        (pb.NODE_KIND_PARAGRAPH, "Body."),
    ]
