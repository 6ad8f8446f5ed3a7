"""A text file in a legacy code page is read in the code page its words fit: among the readings
charset_normalizer finds equally free of chaos, the one whose words fit a language best, then the
common code pages (services/ingest/readers/decoding.py)."""

from __future__ import annotations

import pytest

from services.ingest.readers.decoding import decode_text

HEBREW = "שלום לכולם. היום נדבר על החלוקה של מסמכים לקטעים קטנים, כדי שמערכת החיפוש תמצא את התשובה הנכונה לכל שאלה. "
RUSSIAN = "Добрый вечер. Сегодня мы поговорим о том, как делить документы на части, чтобы поиск находил верный ответ. "


@pytest.mark.parametrize(("text", "encoding"), [(HEBREW, "cp1255"), (RUSSIAN, "cp1251")], ids=["he", "ru"])
def test_a_legacy_code_page_is_read_in_the_one_its_words_fit(text, encoding):
    # Hebrew in cp1255 read equally free of chaos as cp1251 Cyrillic ("бочбйм"); the words decide.
    decoded, used = decode_text("notes.txt", (text * 3).encode(encoding))
    assert (decoded, used) == (text * 3, encoding)
