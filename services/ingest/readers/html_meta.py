"""What an HTML page declares about itself: its charset, language and publication date.

Read from the page's own markup, never guessed from its words: the charset
from a byte-order mark, then `<meta charset>` (or its http-equiv form, or an
XHTML page's XML declaration) in the first 1,024 bytes as browsers look for
it, then services.ingest.readers.decoding; the language from `<html lang>` (or
`xml:lang`) and then `<meta http-equiv="content-language">`; the publication
date from, in this order, `<meta property="article:published_time">`, the
first `<time datetime>` in the article, JSON-LD's `datePublished`, and a
`<meta name="date">` (or its Dublin Core names).
"""

from __future__ import annotations

import codecs
import json
import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from chunklab.errors import InvalidArgument
from services.ingest.readers.decoding import decode_text, looks_like

# Browsers look for a declared charset in the first 1,024 bytes (WHATWG's prescan).
PRESCAN_BYTES = 1024
_DECLARED_CHARSET = re.compile(
    rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)|<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9_.:-]+)""",
    re.IGNORECASE,
)
# WHATWG's encoding labels: Latin-1 and ASCII labels mean windows-1252, and a
# UTF-16 label in bytes that an ASCII-based parser just read means UTF-8.
_LABEL_ALIASES = {
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "l1": "cp1252",
    "ascii": "cp1252",
    "us-ascii": "cp1252",
    "iso8859-1": "cp1252",
    "utf-16": "utf-8",
    "utf-16le": "utf-8",
    "utf-16be": "utf-8",
}
_UTF8_BOM = codecs.BOM_UTF8
_BODY_TAG = re.compile(rb"<body[\s>]", re.IGNORECASE)
_ANY_TAG = re.compile(r"<(?:!doctype|[a-zA-Z][a-zA-Z0-9:-]*[\s/>])", re.IGNORECASE)
# Codes that name no language of their own: undetermined, multiple, none, uncoded.
_NO_LANGUAGE = {"und", "mul", "zxx", "mis"}
_META_DATE_NAMES = (
    "date",
    "dc.date",
    "dc.date.issued",
    "dcterms.date",
    "dcterms.issued",
    "dcterms.created",
    "publish-date",
    "pubdate",
)


def decode_html(name: str, data: bytes) -> tuple[str, str]:
    """The page's text and the encoding it was read with; InvalidArgument for bytes that are not HTML."""
    what = looks_like(data)
    if what:
        raise InvalidArgument(
            f"{name!r} is declared as HTML but its content is {what}; upload it with its real extension"
        )
    if data.startswith(_UTF8_BOM):
        text, encoding = _decode(name, data[len(_UTF8_BOM) :], "utf-8")
    else:
        declared = _declared_charset(data[:PRESCAN_BYTES]) if not data.startswith((b"\xff\xfe", b"\xfe\xff")) else None
        text, encoding = _decode(name, data, declared) if declared else _undeclared(name, data)
    text = text.lstrip("\ufeff")
    if not _ANY_TAG.search(text):
        raise InvalidArgument(
            f"{name!r} is named as HTML but holds no HTML tags at all; if it is plain text, name it .txt or .md"
        )
    return text, encoding


def _declared_charset(head: bytes) -> str | None:
    match = _DECLARED_CHARSET.search(head)
    if not match:
        return None
    label = (match.group(1) or match.group(2)).decode("ascii").lower()
    label = _LABEL_ALIASES.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None  # an unknown label: read the bytes as if none was declared


def _decode(name: str, data: bytes, encoding: str) -> tuple[str, str]:
    """The bytes in the declared encoding; a page that lies about its charset is read as undeclared,
    except a UTF-8 page whose invalid bytes all sit in its head (meta tags pasted from a Latin-1
    editor), which a browser shows whole: those bytes read as U+FFFD, the body as written."""
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError:
        head_damaged = _utf8_but_its_head(data) if encoding == "utf-8" else None
        return (head_damaged, "utf-8") if head_damaged is not None else decode_text(name, data)


def _undeclared(name: str, data: bytes) -> tuple[str, str]:
    """A page that declares no charset, read as any text file is (decoding.decode_text), or as
    UTF-8 when only its head is not."""
    try:
        return decode_text(name, data)
    except InvalidArgument:
        head_damaged = _utf8_but_its_head(data)
        if head_damaged is None:
            raise
        return head_damaged, "utf-8"


def _utf8_but_its_head(data: bytes) -> str | None:
    """The page read as UTF-8 when its body is valid UTF-8 and only its head is not, the head's
    invalid bytes as U+FFFD; else None."""
    body = _BODY_TAG.search(data)
    if body is None:
        return None
    try:
        data[body.start() :].decode("utf-8")
    except UnicodeDecodeError:
        return None
    return data.decode("utf-8", errors="replace")


def declared_language(root) -> tuple[str, str]:
    """(the primary language subtag, e.g. "en", the declared tag as written, e.g. "en-GB"), or ("", "")."""
    candidates = [root.get("lang"), root.get("xml:lang")]
    candidates += [
        meta.get("content")
        for meta in root.iterfind(".//meta[@http-equiv]")
        if meta.get("http-equiv", "").strip().lower() == "content-language"
    ]
    for declared in candidates:
        declared = (declared or "").split(",")[0].strip()
        primary = declared.lower().replace("_", "-").split("-")[0]
        if re.fullmatch(r"[a-z]{2,3}", primary) and primary not in _NO_LANGUAGE:
            return primary, declared
    return "", ""


def json_ld(root) -> list[str]:
    """The page's JSON-LD blocks, read before boilerplate removal drops every script."""
    return [
        script.text or ""
        for script in root.iterfind(".//script[@type]")
        if script.get("type", "").strip().lower() == "application/ld+json"
    ]


def published_date(root, article, json_ld_blocks: list[str]) -> datetime | None:
    """The first publication date the page declares in a form that parses (see the module's order):
    root is the whole page, article the content kept, json_ld_blocks what json_ld read."""
    for value in _date_candidates(root, article, json_ld_blocks):
        parsed = parse_date(value)
        if parsed is not None:
            return parsed
    return None


def _date_candidates(root, article, json_ld_blocks):
    for meta in root.iterfind(".//meta"):
        if (meta.get("property") or meta.get("name") or "").strip().lower() == "article:published_time":
            yield meta.get("content")
    for time in article.iterfind(".//time[@datetime]"):
        yield time.get("datetime")
    for block in json_ld_blocks:
        yield from _json_ld_dates(block)
    for meta in root.iterfind(".//meta[@name]"):
        if meta.get("name", "").strip().lower() in _META_DATE_NAMES:
            yield meta.get("content")
    for meta in root.iterfind(".//meta[@itemprop]"):
        if meta.get("itemprop") == "datePublished":
            yield meta.get("content")


def _json_ld_dates(source: str):
    """Every datePublished in a JSON-LD block, walked without recursion (a block can nest deeply)."""
    try:
        pending = [json.loads(source)]
    except (ValueError, RecursionError):
        return
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            if isinstance(value.get("datePublished"), str):
                yield value["datePublished"]
            pending.extend(reversed(list(value.values())))
        elif isinstance(value, list):
            pending.extend(reversed(value))


def parse_date(value: str | None) -> datetime | None:
    """ISO 8601 (a date alone is midnight UTC) or an RFC 2822 date, in UTC; a date without a zone is UTC.

    In UTC because the store keeps a datetime's wall time and drops its zone."""
    value = (value or "").strip()
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        try:
            parsed = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
