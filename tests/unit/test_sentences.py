"""Sentence splitting with offsets in the twelve languages (chunklab.text.sentences)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab.text import sentences

CASES = {
    "en": (
        'Dr. Smith paid 3.14 dollars, e.g. for tea. He said "Stop." Then he left... Really? Yes!',
        ["Dr. Smith paid 3.14 dollars, e.g. for tea.", 'He said "Stop."', "Then he left...", "Really?", "Yes!"],
    ),
    "de": (
        "Das ist z.B. ein Test. Er kam am 3. Mai. Dr. Müller zahlte 2,50 Euro.",
        ["Das ist z.B. ein Test.", "Er kam am 3. Mai.", "Dr. Müller zahlte 2,50 Euro."],
    ),
    "fr": (
        "Il a dit « Bonjour. » Puis il est parti. Le prix est de 3,5 euros.",
        ["Il a dit « Bonjour. »", "Puis il est parti.", "Le prix est de 3,5 euros."],
    ),
    "es": (
        "¿Dónde está el Sr. García? ¡Está aquí! Pagó 3.5 euros.",
        ["¿Dónde está el Sr. García?", "¡Está aquí!", "Pagó 3.5 euros."],
    ),
    "pt": (
        'O Sr. Silva chegou às 3.30. Ela disse: "Olá." Ele respondeu.',
        ["O Sr. Silva chegou às 3.30.", 'Ela disse: "Olá."', "Ele respondeu."],
    ),
    "it": (
        "Il Sig. Rossi è arrivato. Ha pagato 3,14 euro. Poi è partito.",
        ["Il Sig. Rossi è arrivato.", "Ha pagato 3,14 euro.", "Poi è partito."],
    ),
    "nl": (
        "Dhr. Jansen kwam aan. Hij betaalde bijv. 3,14 euro. Daarna ging hij.",
        ["Dhr. Jansen kwam aan.", "Hij betaalde bijv. 3,14 euro.", "Daarna ging hij."],
    ),
    "id": (
        "Dr. Budi pergi ke pasar. Dia membeli 2.5 kg beras. Lalu pulang!",
        ["Dr. Budi pergi ke pasar.", "Dia membeli 2.5 kg beras.", "Lalu pulang!"],
    ),
    "ru": (
        "Г-н Иванов пришёл. Он заплатил 3.14 рубля. Потом ушёл!",
        ["Г-н Иванов пришёл.", "Он заплатил 3.14 рубля.", "Потом ушёл!"],
    ),
    "ar": ("هذا كتاب. هل هو جديد؟ نعم! شكرا", ["هذا كتاب.", "هل هو جديد؟", "نعم!", "شكرا"]),
    "zh": (
        "他说：“我们走吧。”然后他走了。真的吗？！价格是3.5元。",
        ["他说：“我们走吧。”", "然后他走了。", "真的吗？！", "价格是3.5元。"],
    ),
    "ja": (
        "「行こう。」と彼は言った。今日は晴れです。本当？はい！",
        ["「行こう。」と彼は言った。", "今日は晴れです。", "本当？", "はい！"],
    ),
}


@pytest.mark.parametrize("language", sorted(CASES))
def test_sentences_in_each_language(language):
    text, expected = CASES[language]
    spans = sentences.split(text, language)
    assert [text[a:b] for a, b in spans] == expected


@pytest.mark.parametrize(
    "language, text, expected",
    [
        (
            "fr",
            "M. Dupont est arrivé. Il a vu Mme. Martin et le Dr. Bernard. Puis il est parti.",
            ["M. Dupont est arrivé.", "Il a vu Mme. Martin et le Dr. Bernard.", "Puis il est parti."],
        ),
        (
            "ru",
            "Он купил яблоки. Т.е. всё было хорошо, см. выше. Потом пошёл домой.",
            ["Он купил яблоки.", "Т.е. всё было хорошо, см. выше.", "Потом пошёл домой."],
        ),
        (
            "nl",
            "Mevr. de Vries kwam, o.a. met haar hond. Daarna ging ze.",
            ["Mevr. de Vries kwam, o.a. met haar hond.", "Daarna ging ze."],
        ),
        ("id", "Bpk. Budi datang. Lalu dia pergi.", ["Bpk. Budi datang.", "Lalu dia pergi."]),
        (
            "en",
            "He lives on Main St. The house is red. Mr. Lee agrees.",
            ["He lives on Main St.", "The house is red.", "Mr. Lee agrees."],
        ),  # "St." may end a sentence
    ],
)
def test_titles_and_abbreviations_that_never_end_a_sentence_run_on(language, text, expected):
    assert sentences.sentences(text, language) == expected


def test_cjk_terminators_end_sentences_even_in_a_document_marked_english():
    assert sentences.sentences("English text. 日本語です。次の文。", "en") == [
        "English text.",
        "日本語です。",
        "次の文。",
    ]


def test_markdown_lines_stand_alone():
    text = "# Article 1. Scope\nSome text. More text.\n\n- item one\n- item two\n| a. b | c |\nAfter the table."
    assert sentences.sentences(text) == [
        "# Article 1. Scope",
        "Some text.",
        "More text.",
        "- item one",
        "- item two",
        "| a. b | c |",
        "After the table.",
    ]


def test_a_hash_line_inside_a_fence_does_not_split_sentences():
    text = "Run this first. Then wait:\n```bash\n# not a heading\nmake up\n```\n~~~\n# not a heading\n~~~\nDone."
    assert sentences.sentences(text) == [
        "Run this first.",
        "Then wait:",
        "```bash\n# not a heading\nmake up\n```",
        "~~~\n# not a heading\n~~~",
        "Done.",
    ]


def test_a_setext_heading_and_a_thematic_break_stand_alone():
    text = "Scope. Of it\n===\nThe text. More.\n\n***\nEnd."
    assert sentences.sentences(text) == ["Scope. Of it\n===", "The text.", "More.", "***", "End."]


def test_unknown_language_falls_back_to_english_rules():
    assert sentences.sentences("Mr. Brown left. Then Dr. Jones came.", "und") == [
        "Mr. Brown left.",
        "Then Dr. Jones came.",
    ]


def test_spans_are_trimmed_and_blank_text_has_none():
    text = "  First one.\r\n\r\n  Second one.   \n"
    assert [text[a:b] for a, b in sentences.split(text)] == ["First one.", "Second one."]
    assert sentences.split("") == [] and sentences.split(" \n\t ") == []


pieces = st.sampled_from(
    [
        "Dr.",
        " ",
        "word",
        "3.14",
        ". ",
        "! ",
        "? ",
        "...",
        "\n",
        "\n\n",
        "# ",
        "- ",
        "| ",
        "。",
        "？",
        "؟ ",
        "「",
        "」",
        "と",
        "é",
        "🎉",
        "\r\n",
        "\t",
        "e.g.",
        '"',
        ")",
    ]
)


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(pieces, max_size=60), language=st.sampled_from(sorted(CASES) + ["und"]))
def test_spans_are_ordered_trimmed_slices_that_cover_every_non_blank_character(parts, language):
    text = "".join(parts)
    spans = sentences.split(text, language)
    covered = [False] * len(text)
    previous_end = 0
    for start, end in spans:
        assert previous_end <= start < end <= len(text)
        assert not text[start].isspace() and not text[end - 1].isspace()
        for i in range(start, end):
            covered[i] = True
        previous_end = end
    assert all(covered[i] or text[i].isspace() for i in range(len(text)))


def test_a_block_the_segmenter_cannot_read_is_still_split_and_covered_and_the_log_stays_clean(capfd):
    """sentencex panics on a capital, a multi-byte space and a full stop ("D\u00a0."), and its panic
    writes a Rust backtrace to the service's stderr: such a block is split without reaching it."""
    text = "We met Mr. D\u00a0. Smith at noon. Then we left.\n\nD\u00a0.\n\nAt Q \u3000. in French."
    spans = sentences.split(text)
    assert [text[a:b] for a, b in spans] == [
        "We met Mr. D\u00a0. Smith at noon.",
        "Then we left.",
        "D\u00a0.",
        "At Q \u3000. in French.",
    ]
    assert sentences.split("Chez A\u00a0. Dupont. Fin.", "fr")
    assert "panicked" not in capfd.readouterr().err
