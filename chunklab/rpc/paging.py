"""List paging shared by every service (AIP-158): page_size with a default and
a cap, and opaque page tokens that a service can read back."""

from __future__ import annotations

import base64
import re

from chunklab.errors import InvalidArgument

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 1000
_PREFIX = "p1:"
# Offsets of more rows than any table holds: far below SQLite's 2^63, with room for a page on top.
MAX_OFFSET = 10**15
_DIGITS = re.compile(r"[0-9]{1,16}")


def check_page_size(page_size: int) -> int:
    """The page size to use: 0 means the default; outside 0..MAX is refused."""
    if page_size < 0 or page_size > MAX_PAGE_SIZE:
        raise InvalidArgument(
            f"page_size must be between 0 (meaning {DEFAULT_PAGE_SIZE}) and {MAX_PAGE_SIZE}, got {page_size}"
        )
    return page_size or DEFAULT_PAGE_SIZE


def encode_token(position: int | str) -> str:
    """An opaque token for where the next page starts (an offset or a key)."""
    return base64.urlsafe_b64encode(f"{_PREFIX}{position}".encode()).decode()


def decode_token(token: str) -> str:
    """What encode_token was given, as text; "" for the first page."""
    if not token:
        return ""
    try:
        value = base64.urlsafe_b64decode(token.encode()).decode()
    except (ValueError, UnicodeDecodeError):
        value = ""
    if not value.startswith(_PREFIX) or len(value) == len(_PREFIX):
        raise InvalidArgument("page_token is not one this service gave out; pass next_page_token unchanged")
    return value[len(_PREFIX) :]


def decode_offset(token: str) -> int:
    """The row offset a token stands for: ASCII digits, at most MAX_OFFSET, which no
    offset a service gave out reaches and every database integer holds (a forged
    token with a 30-digit offset is refused, not passed to SQLite)."""
    value = decode_token(token)
    if value and not (_DIGITS.fullmatch(value) and int(value) <= MAX_OFFSET):
        raise InvalidArgument("page_token is not one this service gave out; pass next_page_token unchanged")
    return int(value or 0)
