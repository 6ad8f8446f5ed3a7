"""A text file is read in the encoding it was written in: a legacy code page in the one its words
fit (among the readings charset_normalizer finds equally free of chaos, the one whose words fit a
language best, then the common code pages), UTF-16 and UTF-32 without a byte-order mark by where
their NUL bytes sit (services/ingest/readers/decoding.py)."""

from __future__ import annotations

import pytest

from chunklab.errors import InvalidArgument
from services.ingest.readers.decoding import decode_text

HEBREW = "שלום לכולם. היום נדבר על החלוקה של מסמכים לקטעים קטנים, כדי שמערכת החיפוש תמצא את התשובה הנכונה לכל שאלה. "
RUSSIAN = "Добрый вечер. Сегодня мы поговорим о том, как делить документы на части, чтобы поиск находил верный ответ. "


@pytest.mark.parametrize(("text", "encoding"), [(HEBREW, "cp1255"), (RUSSIAN, "cp1251")], ids=["he", "ru"])
def test_a_legacy_code_page_is_read_in_the_one_its_words_fit(text, encoding):
    # Hebrew in cp1255 read equally free of chaos as cp1251 Cyrillic ("бочбйм"); the words decide.
    decoded, used = decode_text("notes.txt", (text * 3).encode(encoding))
    assert (decoded, used) == (text * 3, encoding)


MIXED = "Chunking notes, état des lieux: 日本語の段落 and an emoji 😀 at the end.\r\n" * 4


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_without_a_byte_order_mark_are_read_not_refused_as_binary(encoding):
    # Every other byte of English in UTF-16 is NUL: the file used to be refused as binary data.
    assert decode_text("export.csv", MIXED.encode(encoding)) == (MIXED, encoding)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (bytes(1000), "holds NUL bytes"),
        (bytes(range(256)) * 40, "holds NUL bytes"),
        (b"\x00\x01\x02\x03" * 300, "holds NUL bytes"),
        (b"text\x01\x02\x03\x04\x05" * 100, "holds control bytes"),
    ],
    ids=["all NUL", "every byte", "counting bytes", "control bytes"],
)
def test_binary_data_is_still_refused_as_binary(data, said):
    with pytest.raises(InvalidArgument, match=f"looks like binary data, not text \\(it {said}\\)"):
        decode_text("data.txt", data)
