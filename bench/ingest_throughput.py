"""Ingest parse-and-store throughput for DOCX, Markdown and HTML at 1, 10 and
50 MB, and for PDF by page count.

Runs the ingest service's own logic (parse, tree, language, SQLite store) in
process, side by side for both formats, and prints MB/s; then times the
target case, a 100-page DOCX of about 50,000 words, against its 1 s budget.
PDF rows (generated handbooks, tests/support/pdfs.py) give MB/s and pages/s
of the whole ingest (safety check, reader, language, store), of the reader
alone, and of PDFium's own text extraction of the same pages, so the cost
of the layout analysis and the tree shows.
HTML rows put ingest beside lxml's parse alone, so the cost of the tree shows.

    .venv/bin/python bench/ingest_throughput.py [--sizes 1,10,50] [--pdf-pages 20,100]
"""

from __future__ import annotations

import argparse
import io
import random
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

import docx
import pypdfium2 as pdfium

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chunklab.db.sessions import make_sessionmaker
from chunklab.errors import ResourceExhausted
from chunklab.v1 import documents_pb2 as pb
from services.ingest.readers.pdf import read_pdf
from services.ingest.service import IngestService
from services.ingest.store import Base
from tests.support import pdfs

WORDS = [
    "retrieval",
    "chunk",
    "document",
    "section",
    "article",
    "paragraph",
    "policy",
    "employee",
    "leave",
    "contract",
    "payment",
    "invoice",
    "customer",
    "service",
    "quality",
    "report",
    "annual",
    "budget",
    "market",
    "growth",
    "risk",
    "control",
    "audit",
    "data",
    "model",
    "system",
    "process",
    "review",
    "approval",
    "deadline",
    "meeting",
    "team",
    "project",
    "result",
    "value",
]


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 20))]
    return " ".join(words).capitalize() + "."


def paragraphs(rng: random.Random, words: int):
    written = 0
    while written < words:
        text = " ".join(sentence(rng) for _ in range(rng.randint(3, 6)))
        written += text.count(" ") + 1
        yield text


def _paragraph_xml(text: str, style: str = "") -> str:
    props = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    return f'<w:p>{props}<w:r><w:t xml:space="preserve">{escape(text)}</w:t></w:r></w:p>'


def make_docx(words: int, seed: int = 1) -> bytes:
    """A Word document with headings, lists and paragraphs of about `words` words.

    The body XML is written directly into python-docx's default template (its
    styles: Title, Heading1, Heading2, ListBullet): python-docx's own API
    takes minutes to build the 50 MB cases.
    """
    rng = random.Random(seed)
    body = [_paragraph_xml("Benchmark document", "Title")]
    for i, text in enumerate(paragraphs(rng, words)):
        if i % 40 == 0:
            body.append(_paragraph_xml(f"Chapter {i // 40 + 1}", "Heading1"))
        elif i % 8 == 0:
            body.append(_paragraph_xml(f"Section {i // 8 + 1}", "Heading2"))
        if i % 25 == 5:
            body += [_paragraph_xml(sentence(rng), "ListBullet") for _ in range(3)]
        body.append(_paragraph_xml(text))
    template = io.BytesIO()
    docx.Document().save(template)
    source = zipfile.ZipFile(io.BytesIO(template.getvalue()))
    xml = source.read("word/document.xml").decode()
    start = xml.index("<w:body>") + len("<w:body>")
    end = xml.index("<w:sectPr")
    xml = xml[:start] + "".join(body) + xml[end:]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = xml.encode() if item.filename == "word/document.xml" else source.read(item.filename)
            target.writestr(item, data)
    return out.getvalue()


def make_markdown(size_bytes: int, seed: int = 1) -> bytes:
    rng = random.Random(seed)
    parts, size, i = ["# Benchmark document\n\n"], 0, 0
    while size < size_bytes:
        if i % 40 == 0:
            parts.append(f"## Chapter {i // 40 + 1}\n\n")
        elif i % 8 == 0:
            parts.append(f"### Section {i // 8 + 1}\n\n")
        text = " ".join(sentence(rng) for _ in range(rng.randint(3, 6))) + "\n\n"
        parts.append(text)
        size += len(text)
        i += 1
    return "".join(parts).encode()


def docx_of_size(target_bytes: int) -> bytes:
    """A DOCX whose file is about target_bytes (DOCX compresses text ~3x)."""
    words = max(1000, int(target_bytes / 2.4))
    data = make_docx(words)
    return make_docx(int(words * target_bytes / len(data)))


def time_ingest(data: bytes, name: str, repeats: int) -> list[float]:
    seconds = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as folder:
            sessions = make_sessionmaker(f"sqlite:///{folder}/ingest.sqlite3", Base)
            service = IngestService(sessions, 200_000_000, lambda _doc: 0)
            started = time.perf_counter()
            service.create(name, pb.DOCUMENT_FORMAT_UNSPECIFIED, "", "", None, len(data), iter([data]))
            seconds.append(time.perf_counter() - started)
            sessions.kw["bind"].dispose()
    return seconds


def pdfium_text_seconds(data: bytes, repeats: int) -> list[float]:
    """PDFium called directly: every page's text, nothing else."""
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        document = pdfium.PdfDocument(data)
        for page in document:
            page.get_textpage().get_text_range()
        document.close()
        seconds.append(time.perf_counter() - started)
    return seconds


def reader_seconds(data: bytes, repeats: int) -> list[float]:
    """The PDF reader alone: layout, canonical text and tree, no safety check or store."""
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        read_pdf("bench.pdf", data)
        seconds.append(time.perf_counter() - started)
    return seconds


def pdf_rows(page_counts: list[int]) -> None:
    print(
        f"\n{'pages':>6} | {'MB':>5} | {'ingest MB/s':>11} | {'ingest pages/s':>14} | {'reader pages/s':>14} | "
        f"{'PDFium pages/s':>14} | {'reader / PDFium':>15}"
    )
    print("-" * 98)
    for count in page_counts:
        data = pdfs.book(count, outline=True).data
        ingest_s = statistics.median(time_ingest(data, "bench.pdf", 3))
        reader_s = statistics.median(reader_seconds(data, 3))
        direct_s = statistics.median(pdfium_text_seconds(data, 3))
        print(
            f"{count:>6} | {len(data) / 1e6:>5.2f} | {len(data) / 1e6 / ingest_s:>11.2f} | {count / ingest_s:>14.1f} | "
            f"{count / reader_s:>14.1f} | {count / direct_s:>14.1f} | {reader_s / direct_s:>14.1f}x"
        )


def make_html(size_bytes: int, seed: int = 1) -> bytes:
    """A saved web page of about size_bytes: navigation, banners and scripts
    around an article of headings, paragraphs, lists, tables and code."""
    rng = random.Random(seed)
    chrome = (
        "<header><nav><ul>"
        + "".join(f'<li><a href="/{w}">{w}</a></li>' for w in WORDS[:8])
        + '</ul></nav></header><div class="cookie-banner"><p>We use cookies.</p><button>OK</button></div>'
        '<aside><h2>Related</h2><ul><li><a href="/a">A</a></li></ul></aside>'
    )
    parts = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Benchmark page</title>'
        '<script>var config = {"a": 1};</script><style>body { margin: 0 }</style></head><body>',
        chrome,
        "<main><article><h1>Benchmark page</h1>",
    ]
    size, i = 0, 0
    while size < size_bytes:
        if i % 40 == 0:
            parts.append(f"<h2>Chapter {i // 40 + 1}</h2>")
        elif i % 8 == 0:
            parts.append(f"<h3>Section {i // 8 + 1}</h3>")
        if i % 25 == 5:
            parts.append("<ul>" + "".join(f"<li>{sentence(rng)}</li>" for _ in range(3)) + "</ul>")
        if i % 50 == 10:
            parts.append(
                "<table><tr><th>Item</th><th>Value</th></tr>"
                + "".join(f"<tr><td>{rng.choice(WORDS)}</td><td>{rng.randint(1, 99)}</td></tr>" for _ in range(4))
                + "</table>"
            )
        if i % 60 == 20:
            parts.append('<pre><code class="language-python">total = sum(values)\nprint(total &lt; 10)</code></pre>')
        text = (
            "<p>"
            + " ".join(
                f"<em>{s}</em>" if j == 1 else s for j, s in enumerate(sentence(rng) for _ in range(rng.randint(3, 6)))
            )
            + "</p>\n"
        )
        parts.append(text)
        size += len(text)
        i += 1
    parts.append('</article></main><footer><p>&copy; Benchmark</p></footer><script src="x.js"></script></body></html>')
    return "".join(parts).encode()


def html_rows(sizes_mb: list[float]) -> None:
    """HTML ingest MB/s beside lxml's parse alone and the reader (parse, boilerplate, tree) alone,
    then pages/s on a typical 100 kB saved page."""
    import lxml.html

    from services.ingest.readers.html import read_html

    def rate(data: bytes, work, repeats: int) -> float:
        seconds = []
        for _ in range(repeats):
            started = time.perf_counter()
            work(data)
            seconds.append(time.perf_counter() - started)
        return len(data) / 1e6 / statistics.median(seconds)

    print(f"\n{'size':>6} | {'HTML MB/s':>10} | {'reader MB/s':>11} | {'lxml parse MB/s':>15} | {'tree overhead':>13}")
    print("-" * 68)
    for size_mb in sizes_mb:
        repeats = 3 if size_mb <= 10 else 1
        data = make_html(int(size_mb * 1_000_000))
        ingest = len(data) / 1e6 / statistics.median(time_ingest(data, "bench.html", repeats))
        reader = rate(data, lambda d: read_html("bench.html", d), repeats)
        parse = rate(data, lxml.html.document_fromstring, repeats)
        print(f"{size_mb:>5g}M | {ingest:>10.2f} | {reader:>11.2f} | {parse:>15.2f} | {parse / reader:>12.1f}x")
    page = make_html(100_000)
    count = 50
    started = time.perf_counter()
    for _ in range(count):
        read_html("page.html", page)
    reader_rate = count / (time.perf_counter() - started)
    started = time.perf_counter()
    for _ in range(count):
        lxml.html.document_fromstring(page)
    parse_rate = count / (time.perf_counter() - started)
    print(
        f"typical page ({len(page) / 1e3:.0f} kB): reader {reader_rate:.0f} pages/s, lxml parse {parse_rate:.0f} pages/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,10,50", help="sizes in MB, comma separated")
    parser.add_argument("--pdf-pages", default="20,100", help="PDF page counts, comma separated")
    args = parser.parse_args()
    print(f"{'size':>6} | {'DOCX MB/s':>10} | {'Markdown MB/s':>13} | {'Markdown / DOCX':>15}")
    print("-" * 55)
    for size_mb in [float(s) for s in args.sizes.split(",")]:
        repeats = 3 if size_mb <= 10 else 1
        docx_data = docx_of_size(int(size_mb * 1_000_000))
        markdown_data = make_markdown(int(size_mb * 1_000_000))
        markdown_s = statistics.median(time_ingest(markdown_data, "bench.md", repeats))
        markdown_rate = len(markdown_data) / 1e6 / markdown_s
        try:
            docx_s = statistics.median(time_ingest(docx_data, "bench.docx", repeats))
        except ResourceExhausted:  # its document.xml unpacks past ZipLimits.max_member_bytes (ADR 0049)
            print(f"{size_mb:>5g}M | {'refused':>10} | {markdown_rate:>13.2f} | {'':>15}")
            continue
        docx_rate = len(docx_data) / 1e6 / docx_s
        print(f"{size_mb:>5g}M | {docx_rate:>10.2f} | {markdown_rate:>13.2f} | {markdown_rate / docx_rate:>14.1f}x")

    target = make_docx(50_000)
    seconds = time_ingest(target, "hundred-pages.docx", 5)
    best, median = min(seconds), statistics.median(seconds)
    print(
        f"\n100-page DOCX (50,000 words, {len(target) / 1e6:.2f} MB): median {median:.3f}s, best {best:.3f}s "
        f"= {median:.2f}x the 1 s budget ({'met' if median < 1 else 'NOT met'})"
    )
    pdf_rows([int(p) for p in args.pdf_pages.split(",")])
    html_rows([float(s) for s in args.sizes.split(",")])


if __name__ == "__main__":
    main()
