"""Which PDF library the ingest reader stands on (ADR 0054): pypdfium2,
pdfplumber and pypdf side by side on generated PDFs.

For each library: the time to get every line of a handbook with its font
size and weight (what the reader needs), in pages/s and MB/s; the heading
recall and precision of the reader's own font rule
(services.ingest.readers.pdf_headings.font_headings) applied to that library's lines,
on the same handbook without an outline; and whether the library finds the
ruled table of the layout sample.

    .venv/bin/python bench/pdf_libraries.py [--pages 100]
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pypdfium2 as pdfium

from services.ingest.readers.pdf_headings import font_headings
from services.ingest.readers.pdf_layout import Line, read_pages
from tests.support import pdfs


def _bold(name: str) -> bool:
    return "bold" in name.lower()


def pypdfium2_lines(data: bytes) -> list[Line]:
    """The reader's own line pass (PDFium's lines, one font look-up each)."""
    document = pdfium.PdfDocument(data)
    try:
        return [line for page in read_pages(document, data) for line in page.lines]
    finally:
        document.close()


def pdfplumber_lines(data: bytes) -> list[Line]:
    """pdfplumber's characters grouped into lines by their top (its own
    extract_text_lines clusters words and is several times slower still)."""
    import pdfplumber

    lines = []
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        for number, page in enumerate(pdf.pages, 1):
            rows: dict[float, list[dict]] = {}
            for char in page.chars:
                rows.setdefault(round(char["bottom"], 0), []).append(char)
            for bottom, chars in sorted(rows.items()):
                text = "".join(c["text"] for c in chars).strip()
                if text:
                    first = chars[0]
                    lines.append(
                        Line(
                            text,
                            number,
                            first["x0"],
                            chars[-1]["x1"],
                            first["top"],
                            bottom,
                            round(first["size"], 1),
                            _bold(first["fontname"]),
                        )
                    )
    return lines


def pypdf_lines(data: bytes) -> list[Line]:
    """pypdf's text with a visitor that sees each text run's font and matrix."""
    import pypdf

    lines = []
    reader = pypdf.PdfReader(io.BytesIO(data))
    for number, page in enumerate(reader.pages, 1):
        height = float(page.mediabox.height)
        runs: dict[float, list] = {}

        def visit(text, cm, tm, font, size, runs=runs):
            if text.strip() and font is not None:
                scale = (tm[2] ** 2 + tm[3] ** 2) ** 0.5 * (cm[2] ** 2 + cm[3] ** 2) ** 0.5
                y = round(height - tm[5] * cm[3] - cm[5], 1)
                runs.setdefault(y, []).append(
                    (text.strip(), round(size * scale, 1), _bold(str(font.get("/BaseFont", ""))))
                )

        page.extract_text(visitor_text=visit)
        for y, parts in sorted(runs.items()):
            size, bold = parts[0][1], parts[0][2]
            lines.append(Line(" ".join(p[0] for p in parts), number, 0, 0, y - size, y, size, bold))
    return lines


def table_found(library: str, data: bytes) -> str:
    if library != "pdfplumber":
        return "no finder"
    import pdfplumber

    with pdfplumber.open(io.BytesIO(data)) as pdf:
        found = [t for page in pdf.pages for t in page.find_tables()]
    return f"{len(found)} of 1"


LIBRARIES = {"pypdfium2": pypdfium2_lines, "pdfplumber": pdfplumber_lines, "pypdf": pypdf_lines}


def recall(lines: list[Line], expected: list[tuple[int, str, int]]) -> tuple[float, float]:
    found = Counter((h.level, h.title) for h in font_headings(lines).at.values() if h is not None)
    want = Counter((level, title) for level, title, _ in expected)
    hits = sum((found & want).values())
    return hits / max(1, sum(want.values())), hits / max(1, sum(found.values()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    generated = pdfs.book(args.pages, outline=False)
    sample = pdfs.layout_sample().data
    size_mb = len(generated.data) / 1e6
    print(f"{generated.pages}-page handbook without outline, {size_mb:.2f} MB, {len(generated.headings)} headings\n")
    print(
        f"{'library':<11} | {'s':>6} | {'pages/s':>8} | {'MB/s':>6} | {'heading recall':>14} | "
        f"{'precision':>9} | {'table':>9}"
    )
    print("-" * 82)
    for name, lines_of in LIBRARIES.items():
        seconds, lines = [], []
        for _ in range(args.repeats if name != "pdfplumber" else 1):
            started = time.perf_counter()
            lines = lines_of(generated.data)
            seconds.append(time.perf_counter() - started)
        median = statistics.median(seconds)
        found, precise = recall(lines, generated.headings)
        print(
            f"{name:<11} | {median:>6.2f} | {generated.pages / median:>8.1f} | {size_mb / median:>6.3f} | "
            f"{found:>13.1%} | {precise:>9.1%} | {table_found(name, sample):>9}"
        )


if __name__ == "__main__":
    main()
