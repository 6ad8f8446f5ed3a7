"""The scoring of bench/ingest_fidelity.py (ADR 0107) on tiny hand-made readings: what each figure
of the ingest fidelity table counts."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from services.ingest.readers.markdown import Writer, build_tree
from tests.support.repo import REPO


@pytest.fixture(scope="module")
def fidelity():
    """bench/ingest_fidelity.py as a module (bench/ is a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("bench_ingest_fidelity", REPO / "bench" / "ingest_fidelity.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_word_coverage_counts_each_word_as_often_as_both_readings_hold_it(fidelity):
    reference = fidelity.words("The cat sat on the mat. The end.")
    ours = fidelity.words("the CAT sat, the cat ran")
    shared, theirs, mine = fidelity.coverage(reference, ours)
    # "the" twice (ours has 2 of the reference's 3), "cat" once, "sat" once: 4 of 8 kept; 4 of our 6 in it
    assert (shared, theirs, mine) == (4, 8, 6)


def test_words_are_compared_after_unicode_folding(fidelity):
    assert fidelity.words("ﬁnal Straße") == fidelity.words("final STRASSE")


def test_a_heading_is_found_by_a_close_title_and_each_of_ours_counts_once(fidelity):
    reference = ["5.1 Results", "Methods", "Notes", "Notes"]
    ours = ["5.1  results", "Introduction", "Notes"]
    # "5.1 Results" matches despite case and spacing; "Methods" is not ours; one "Notes" for two
    assert fidelity.headings_found(reference, ours) == 2
    assert fidelity.headings_found(["Background of the study"], ["Background of the stud"]) == 1
    assert fidelity.headings_found(["Background"], ["Back"]) == 0


def test_a_paragraph_ends_mid_sentence_unless_it_ends_in_sentence_punctuation(fidelity):
    assert fidelity.mid_sentence("The reader joins lines into") is True
    assert fidelity.mid_sentence("The reader joins lines.") is False
    assert fidelity.mid_sentence('He said "stop now."') is False
    assert fidelity.mid_sentence("The steps are as follows:") is False
    assert fidelity.mid_sentence("هل هذا صحيح؟") is False
    assert fidelity.mid_sentence("Two words") is None  # too short to judge
    assert fidelity.mid_counts(["One two three", "One two three.", "Short"]) == (1, 2)


def test_table_cells_are_the_non_empty_cells_with_escaped_pipes_kept(fidelity):
    table = "| Name | a \\| b |\n|---|---|\n| **Bold** |  |\n| x | y |"
    assert fidelity.table_cells(table) == ["name", "a | b", "bold", "x", "y"]


def test_table_cells_kept_counts_the_references_distinct_cells(fidelity):
    # a merged cell docling repeats counts once
    assert fidelity.cells_found(["merged", "merged", "a", "b"], ["a", "merged", "c"]) == (2, 3)


DOCLING = """# Title

First paragraph ends here.

- a list item
- another

<!-- image -->

| h1 | h2 |
| - | - |
| c1 | c2 |

```
code line

more code
```

Second paragraph runs on
"""


def test_a_references_prose_paragraphs_leave_out_headings_lists_tables_code_and_images(fidelity):
    shape = fidelity.markdown_shape(DOCLING)
    assert shape.headings == ["Title"]
    assert shape.paragraphs == ["First paragraph ends here.", "Second paragraph runs on"]
    assert shape.cells == ["h1", "h2", "c1", "c2"]
    assert "image" not in fidelity.words(shape.text)


def test_our_paragraphs_are_the_trees_paragraph_nodes_not_list_items(fidelity):
    writer = Writer()
    writer.heading(1, "Title")
    writer.paragraph("First paragraph ends here.")
    writer.list_item("a list item", "-", False)
    writer.list_item("another", "-", True)
    writer.table(["| h1 | h2 |", "|---|---|", "| c1 | c2 |"])
    writer.paragraph("Second paragraph runs on")
    text = writer.text()
    shape = fidelity.tree_shape(text, build_tree(text, writer.blocks))
    reference = fidelity.markdown_shape(DOCLING)
    score = fidelity.score("x.docx", "docx", "ChunkLab", 0.01, shape, reference)
    assert score.headings == (1, 1)
    assert score.paragraphs == (2, 2)
    assert score.cells == (4, 4)
    assert score.mid == score.ref_mid == (1, 2)
    shared, theirs, ours = score.words
    assert ours == shared  # every word of ours is in the reference; the code is not in ours
    assert theirs - shared == sum(fidelity.words("code line more code").values())


def test_pooling_sums_counts_and_leaves_unreferenced_files_out_of_the_ratios(fidelity):
    referenced = fidelity.Score("a.pdf", "pdf", "ChunkLab", 1.0, 10, (3, 4), (90, 100, 95), (10, 5), (2, 10), (1, 5))
    alone = fidelity.Score("b.pdf", "pdf", "ChunkLab", 1.0, 30, None, None, (40, 0), (8, 20), None)
    total = fidelity.pool([referenced, alone], "pooled pdf")
    assert total.pages == 40 and total.seconds == 2.0
    assert total.headings == (3, 4) and total.words == (90, 100, 95)
    assert total.paragraphs == (10, 5)  # the paragraphs of a file without a reference have nothing to compare
    # nor its mid-sentence share: ours is set beside the reference's, on the same files
    assert total.mid == (2, 10) and total.ref_mid == (1, 5)


def test_web_pages_are_scored_as_trafilatura_scores_itself(fidelity):
    expected = {"with": ["main  text\nhere", "second part", "missing part"], "without": ["Share this", "Menu"]}
    text = fidelity.plain_lines("# Heading\n\nmain text here and\n\n- second part\n\nShare this")
    counts = fidelity.web_counts(text, expected)
    assert counts == (2, 3, 1)
    precision, recall, f1 = fidelity.prf(*counts)
    assert precision == pytest.approx(2 / 3) and recall == pytest.approx(2 / 3) and f1 == pytest.approx(2 / 3)
    assert fidelity.prf(0, 3, 0) == (0.0, 0.0, 0.0)
