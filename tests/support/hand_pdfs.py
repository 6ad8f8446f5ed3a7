"""PDFs written by hand, byte by byte: normal ones with a true cross-reference table and
hostile ones (a deflated gigabyte of zeros in bounded memory)."""

from __future__ import annotations

import zlib

MB = 1 << 20


CATALOG = b"<< /Type /Catalog /Pages 2 0 R >>"


def pdf_bytes(objects: list[bytes], trailer: bytes = b"") -> bytes:
    """A PDF of the objects (numbered from 1, the first the catalog) with a true cross-reference table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R %s>>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, trailer, xref)
    return bytes(out)


def stream(data: bytes, entries: bytes = b"") -> bytes:
    return b"<< /Length %d %s>>\nstream\n%s\nendstream" % (len(data), entries, data)


def flate(content: bytes) -> bytes:
    return stream(zlib.compress(content), b"/Filter /FlateDecode ")


def text_pdf(pages: int) -> bytes:
    """A PDF of `pages` pages, each with one line of Helvetica text in a deflated content stream."""
    kids = b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(pages))
    objects = [
        CATALOG,
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i in range(pages):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (5 + 2 * i)
        )
        objects.append(flate(b"BT /F1 12 Tf 72 720 Td (Page %d of the handbook.) Tj ET" % (i + 1)))
    return pdf_bytes(objects)


def one_page_with(*streams: bytes) -> bytes:
    """One page whose contents are the given stream objects (objects 4, 5, ...)."""
    contents = b" ".join(b"%d 0 R" % (4 + i) for i in range(len(streams)))
    return pdf_bytes(
        [
            CATALOG,
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /Contents [%s] >>" % contents,
            *streams,
        ]
    )


def zeros_deflated(size: int) -> bytes:
    """A zlib stream of `size` MiB of zeros, built from three MiB compressed: after a full
    flush every further MiB compresses to the same bytes, which are repeated."""
    zeros = bytes(MB)
    compressor = zlib.compressobj(9)
    first = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    middle = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    assert compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH) == middle
    end = compressor.flush()[:-4]
    adler = (size * MB % 65521) << 16 | 1  # zeros keep Adler-32's sum A at 1 and add 1 to B per byte
    return first + middle * (size - 1) + end + adler.to_bytes(4, "big")


def bomb_pdf(gigabyte: bytes) -> bytes:
    return one_page_with(stream(gigabyte, b"/Filter /FlateDecode "))


# The fonts of `matrix_text_pdf`: regular, bold, monospaced.
FONTS = {"regular": b"Helvetica", "bold": b"Helvetica-Bold", "mono": b"Courier"}


def matrix_text_pdf(pages: list[list[tuple[str, float, float, float, str]]]) -> bytes:
    """Pages of text lines (text, size, x, y from the page's foot, font) set the way
    most producers set them: the font at 1 pt and the size in the text matrix
    (`/F1 1 Tf 26 0 0 26 x y Tm`), which FPDFText_GetFontSize reads as 1."""
    names = list(FONTS)
    first_page = 3 + len(names)
    kids = b" ".join(b"%d 0 R" % (first_page + 2 * i) for i in range(len(pages)))
    objects = [CATALOG, b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(pages))]
    objects += [b"<< /Type /Font /Subtype /Type1 /BaseFont /%s >>" % FONTS[name] for name in names]
    fonts = b" ".join(b"/F%d %d 0 R" % (i + 1, 3 + i) for i in range(len(names)))
    for i, lines in enumerate(pages):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << %s >> >> "
            b"/Contents %d 0 R >>" % (fonts, first_page + 2 * i + 1)
        )
        content = b"".join(
            b"BT /F%d 1 Tf %s 0 0 %s %s %s Tm (%s) Tj ET\n"
            % (
                names.index(font) + 1,
                str(size).encode(),
                str(size).encode(),
                str(x).encode(),
                str(y).encode(),
                text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode("latin-1"),
            )
            for text, size, x, y, font in lines
        )
        objects.append(flate(content))
    return pdf_bytes(objects)


def ocr_layer_pdf(lines: list[str]) -> bytes:
    """A page of recognised text as OCR tools write it over a scan: drawn invisibly (text render
    mode 3) in Tesseract's GlyphLessFont, whose descriptor says fixed pitch (/Flags 5) and whose
    every glyph is half an em wide; a blank line between paragraphs. The scan itself is left out."""
    content = b"BT 3 Tr /F1 11 Tf 72 720 Td 14 TL\n" + b"".join(
        b"(%s) Tj T*\n" % line.encode("latin-1") if line else b"T*\n" for line in lines
    )
    widths = b" ".join([b"500"] * 95)
    return pdf_bytes(
        [
            CATALOG,
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>",
            stream(content.rstrip()),
            b"<< /Type /Font /Subtype /TrueType /BaseFont /GlyphLessFont /FirstChar 32 /LastChar 126 "
            b"/Widths [%s] /FontDescriptor 6 0 R /Encoding /WinAnsiEncoding >>" % widths,
            b"<< /Type /FontDescriptor /FontName /GlyphLessFont /Flags 5 /FontBBox [0 0 500 1000] "
            b"/ItalicAngle 0 /Ascent 1000 /Descent -1 /CapHeight 1000 /StemV 80 >>",
        ]
    )
