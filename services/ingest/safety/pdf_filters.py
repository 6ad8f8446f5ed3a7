"""A PDF stream's filters, decoded a piece at a time for the safety check.

Only the filters that a text reader itself decodes are run: Flate (through
`inflate.inflate`, the same code as a DOCX's zip members), LZW, run-length,
ASCIIHex and ASCII85. Image codecs (DCT, JPX, JBIG2, CCITT) and anything
unknown end the chain: their bytes count as they stand. Every decoder stops
quietly at bad data, since what counts is what comes out.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable, Iterator

from services.ingest.safety.inflate import PIECE_BYTES, inflate

Pieces = Iterable[bytes]
_NOT_HEX = re.compile(rb"[^0-9A-Fa-f>]")
_SPACE = re.compile(rb"\s")


def lzw(pieces: Pieces) -> Iterator[bytes]:
    """LZWDecode with PDF's defaults: codes of 9 to 12 bits, most significant
    bit first, the code width growing one code early (EarlyChange 1)."""
    table = [bytes([i]) for i in range(256)] + [b"", b""]
    width, bits, held, previous = 9, 0, 0, b""
    out = bytearray()
    for chunk in pieces:
        for byte in bytes(chunk):
            bits, held = (bits << 8) | byte, held + 8
            while held >= width:
                held -= width
                code, bits = bits >> held, bits & ((1 << held) - 1)
                if code == 256:  # clear the table
                    del table[258:]
                    width, previous = 9, b""
                    continue
                if code == 257:  # end of data
                    yield bytes(out)
                    return
                if code < len(table):
                    entry = table[code]
                elif code == len(table) and previous:
                    entry = previous + previous[:1]
                else:
                    yield bytes(out)
                    return
                if previous and len(table) < 4096:
                    table.append(previous + entry[:1])
                previous = entry
                out += entry
                if len(table) + 1 >= 1 << width and width < 12:
                    width += 1
                if len(out) >= PIECE_BYTES:
                    yield bytes(out)
                    out.clear()
    yield bytes(out)


def run_length(pieces: Pieces) -> Iterator[bytes]:
    """RunLengthDecode: a length byte, then that many bytes plus one, or one byte repeated 257 - length times."""
    out, pending = bytearray(), b""
    for chunk in pieces:
        data, at = pending + bytes(chunk), 0
        while at < len(data):
            length = data[at]
            if length == 128:
                yield bytes(out)
                return
            if length < 128:
                if at + length + 2 > len(data):
                    break
                out += data[at + 1 : at + length + 2]
                at += length + 2
            else:
                if at + 2 > len(data):
                    break
                out += data[at + 1 : at + 2] * (257 - length)
                at += 2
            if len(out) >= PIECE_BYTES:
                yield bytes(out)
                out.clear()
        pending = data[at:]
    yield bytes(out)


def ascii_hex(pieces: Pieces) -> Iterator[bytes]:
    odd = b""
    for chunk in pieces:
        text = odd + _NOT_HEX.sub(b"", bytes(chunk))
        end = text.find(b">")
        if end >= 0:
            text = text[:end]
            yield binascii.unhexlify(text + b"0" * (len(text) % 2))
            return
        cut = len(text) - len(text) % 2
        odd = text[cut:]
        yield binascii.unhexlify(text[:cut])


def ascii85(pieces: Pieces) -> Iterator[bytes]:
    rest = b""
    try:
        for chunk in pieces:
            text = rest + _SPACE.sub(b"", bytes(chunk)).replace(b"z", b"!!!!!")
            end = text.find(b"~>")
            if end >= 0:
                yield base64.a85decode(text[:end])
                return
            cut = len(text) - len(text) % 5
            if cut == len(text) and text.endswith(b"~"):  # "~>" may be cut in two
                cut -= 5
            rest = text[cut:]
            yield base64.a85decode(text[:cut])
        yield base64.a85decode(rest.rstrip(b"~"))
    except ValueError:
        return


DECODERS: dict[bytes, Callable[[Pieces], Iterator[bytes]]] = {
    b"FlateDecode": inflate,
    b"Fl": inflate,
    b"LZWDecode": lzw,
    b"LZW": lzw,
    b"RunLengthDecode": run_length,
    b"RL": run_length,
    b"ASCIIHexDecode": ascii_hex,
    b"AHx": ascii_hex,
    b"ASCII85Decode": ascii85,
    b"A85": ascii85,
}
