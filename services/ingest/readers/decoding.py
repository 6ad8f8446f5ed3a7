"""Bytes that claim to be text: sniffing, decoding, and what gets refused.

UTF-8 is taken as it is (a BOM stays in the text, so external offsets into
the file stay valid); UTF-16/32 with a BOM next, or without one when its NUL
bytes read as such (every other byte of English in UTF-16 is NUL, which would
otherwise pass for binary data); then charset-normalizer's
best guess (e.g. a Windows-1252 file). Binary data and known binary formats
declared as text are refused with what they look like.
"""

from __future__ import annotations

import codecs

from charset_normalizer import from_bytes

from chunklab.errors import InvalidArgument

_MAGIC = {
    b"PK\x03\x04": "a zip archive (a DOCX, XLSX or similar)",
    b"%PDF": "a PDF file",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"\x7fELF": "an executable",
    b"\xd0\xcf\x11\xe0": "an old Office file (.doc/.xls)",
    b"\x1f\x8b": "a gzip archive",
}
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# UTF-32 and UTF-16 without a BOM, in the order tried, with the byte positions (of every four)
# that are NUL for characters below U+0100 (in UTF-32, the top byte always and the next one below
# U+10000): where a file's NULs sit says which it is.
_WIDE = (
    ("utf-32-le", 4, (2, 3)),
    ("utf-32-be", 4, (0, 1)),
    ("utf-16-le", 2, (1, 3)),
    ("utf-16-be", 2, (0, 2)),
)
_TEXT_CONTROLS = {9, 10, 12, 13, 27}
_PREFERRED = ("cp1252", "cp1251", "cp1250", "shift_jis", "gb18030", "euc_kr", "cp1256")
# Readings whose language fit is within this of the best one's are a tie, decided by _PREFERRED.
COHERENCE_TIE = 0.05


def looks_like(data: bytes) -> str | None:
    """What a known binary format's bytes look like, or None."""
    for magic, what in _MAGIC.items():
        if data.startswith(magic):
            return what
    return None


def decode_text(name: str, data: bytes) -> tuple[str, str]:
    """The text and the encoding it was read with; InvalidArgument when it is not text."""
    what = looks_like(data)
    if what:
        raise InvalidArgument(
            f"{name!r} is declared as text but its content is {what}; upload it with its real extension"
        )
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding), encoding
            except UnicodeDecodeError:
                raise InvalidArgument(
                    f"{name!r} starts with a {encoding} byte-order mark but is not valid {encoding}"
                ) from None
    sample = data[:65536]
    if b"\x00" in sample:
        wide = _wide_unicode(data)
        if wide is None:
            raise InvalidArgument(f"{name!r} looks like binary data, not text (it holds NUL bytes)")
        return wide
    if _controls(sample) > len(sample) * 0.01:
        raise InvalidArgument(f"{name!r} looks like binary data, not text (it holds control bytes)")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as exc:
        first_bad = exc.start
    if data[first_bad] == 0xED and first_bad + 1 < len(data) and 0xA0 <= data[first_bad + 1] <= 0xBF:
        # U+D800..U+DFFF written as UTF-8 (CESU-8 or WTF-8): a lone surrogate is no character, and
        # a legacy code page would read the bytes as mojibake (ADR 0124).
        raise InvalidArgument(
            f"{name!r} holds a surrogate code point (U+D800 to U+DFFF) written as UTF-8 at byte {first_bad}; "
            "that is not valid UTF-8 (a lone surrogate is no character): save the file again as UTF-8"
        )
    if _mostly_utf8(data):
        raise InvalidArgument(
            f"{name!r} is UTF-8 with invalid bytes (the first at byte {first_bad}); "
            "the file is damaged: save it again as UTF-8"
        )
    matches = list(from_bytes(data))
    if not matches:
        raise InvalidArgument(f"{name!r} is not valid text in UTF-8, UTF-16 or any encoding tried; save it as UTF-8")
    # Several legacy code pages often read the same bytes equally well: among the least chaotic
    # readings, those whose words fit a language best (charset_normalizer's coherence: Hebrew in
    # cp1255 rather than cp1251's Cyrillic letters), then the common code pages, in this order.
    least = min(m.chaos for m in matches)
    candidates = [m for m in matches if m.chaos == least]
    fitting = max(m.coherence for m in candidates)
    candidates = [m for m in candidates if m.coherence >= fitting - COHERENCE_TIE]
    best = next((m for enc in _PREFERRED for m in candidates if m.encoding == enc), candidates[0])
    return str(best), best.encoding


def _controls(units: bytes | str) -> int:
    """How many of the bytes or characters are control codes text does not hold."""
    codes = units if isinstance(units, bytes) else map(ord, units)
    return sum(1 for code in codes if code < 32 and code not in _TEXT_CONTROLS)


def _wide_unicode(data: bytes) -> tuple[str, str] | None:
    """The text and its encoding when bytes with NULs are UTF-32 or UTF-16 without a BOM: the first
    of _WIDE whose NUL positions fit the file's (UTF-32: every top byte and most of the next, as
    most text is below U+10000; UTF-16: more NULs in high bytes than in low ones) and which decodes
    the bytes whole into text with neither NULs nor other control codes (binary data fails that:
    an odd surrogate, a code point past U+10FFFF, or control codes)."""
    sample = data[:65536]
    nuls = [sample[i::4].count(0) for i in range(4)]
    for encoding, width, high in _WIDE:
        in_high = sum(nuls[i] for i in high)
        fits = in_high >= 1.5 * len(sample) / 4 if width == 4 else in_high > sum(nuls) - in_high
        if not fits or len(data) % width:
            continue
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        head = text[:32768]
        if "\x00" not in head and _controls(head) <= len(head) * 0.01:
            return text, encoding
    return None


def _mostly_utf8(data: bytes) -> bool:
    """True when the bytes hold real UTF-8 multi-byte characters as well as
    invalid bytes: a damaged UTF-8 file, which a legacy code page would
    silently turn into mojibake."""
    decoded = data.decode("utf-8", errors="replace")
    invalid = decoded.count("\ufffd")
    valid_multibyte = sum(1 for ch in decoded if ord(ch) > 0x7F and ch != "\ufffd")
    return valid_multibyte > invalid
