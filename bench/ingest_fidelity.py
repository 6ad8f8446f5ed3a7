"""How faithfully the ingest readers read real documents (issue 28, ADR 0107):
every file of ../shared/data/real-docs/ read through
services.ingest.service.parse_upload (the path an upload takes) and scored
against docling's Markdown beside it, side by side with the plain libraries
(pypdfium2's and pdfplumber's text for PDFs, python-docx's paragraphs for DOCX,
trafilatura for HTML), each scored the same way where the measure applies;
and the 60 web pages of trafilatura's own evaluation, precision/recall/F1 of
the main text for ChunkLab and trafilatura in the same run.

It measures the tree it runs in: the repository is the first PYTHONPATH entry
that holds services/ (else the current directory, or --repo), never this
file's folder, so one copy of the script measures any worktree:

    cd /work/wt-OTHER && PYTHONPATH=$PWD /work/main/.venv/bin/python /work/wt-bench/bench/ingest_fidelity.py
    .venv/bin/python bench/ingest_fidelity.py [--only pdf|docx|html|web] [--file NAME] [--json]

Measures (docs/benchmarks.md, "Ingest fidelity"; the counting rules in ADR 0107):
headings: the reference's headings found among ours (rapidfuzz ratio >= 90 on
lower-cased, whitespace-collapsed titles, each of ours used once); words: the
multiset of NFKC-casefolded \\w+ words shared with the reference, over the
reference's words (kept) and over ours (in ref); paragraphs: our PARAGRAPH
nodes (not list items, table or code) per reference prose paragraph; mid: the
share of paragraphs of 3+ words that do not end in sentence punctuation, ours
and the reference's; cells: the reference's distinct non-empty table cells
found among our table cells; pages/s for PDFs (ms per file otherwise).
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import re
import sys
import time
import unicodedata
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

# --- the scoring (pure; tests/unit/test_ingest_fidelity_scoring.py) -------------------------------

SENTENCE_END = set(".!?…:。！？：؟۔")
CLOSERS = "\"'”’»)]}*_`"
LIST_MARKER = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
HEADING_LINE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def words(text: str) -> Counter:
    """The multiset of words: NFKC, case-folded, \\w+ runs."""
    return Counter(re.findall(r"\w+", unicodedata.normalize("NFKC", text).casefold()))


def coverage(reference: Counter, ours: Counter) -> tuple[int, int, int]:
    """(shared words, the reference's words, our words), each word counted as often as both hold it."""
    return sum((reference & ours).values()), sum(reference.values()), sum(ours.values())


def title_key(title: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", title).lower().split())


def headings_found(reference: list[str], ours: list[str], threshold: float = 90) -> int:
    """How many reference headings match one of ours (ratio >= threshold), each of ours used once."""
    from rapidfuzz import fuzz

    left = [title_key(t) for t in ours]
    found = 0
    for title in reference:
        key = title_key(title)
        best = max(range(len(left)), key=lambda i: fuzz.ratio(key, left[i]), default=None)
        if best is not None and fuzz.ratio(key, left[best]) >= threshold:
            found += 1
            left.pop(best)
    return found


def mid_sentence(paragraph: str) -> bool | None:
    """None for a paragraph of fewer than 3 words; else whether it ends without sentence punctuation."""
    if len(re.findall(r"\w+", paragraph)) < 3:
        return None
    end = paragraph.rstrip().rstrip(CLOSERS).rstrip()
    return not end or end[-1] not in SENTENCE_END


def mid_counts(paragraphs: list[str]) -> tuple[int, int]:
    """(paragraphs ending mid-sentence, paragraphs of 3+ words)."""
    marks = [m for m in (mid_sentence(p) for p in paragraphs) if m is not None]
    return sum(marks), len(marks)


def cell_key(cell: str) -> str:
    cell = re.sub(r"\\(.)", r"\1", cell).replace("**", "")
    return " ".join(unicodedata.normalize("NFKC", cell).casefold().split())


def table_cells(table: str) -> list[str]:
    """The non-empty cells of a Markdown table (escaped pipes kept inside cells)."""
    cells = []
    for line in table.splitlines():
        line = line.strip()
        if not line.startswith("|") or re.fullmatch(r"\|?(\s*:?-+:?\s*\|)+\s*:?-*:?\s*", line):
            continue
        parts = re.split(r"(?<!\\)\|", line.strip("|"))
        cells += [k for k in (cell_key(p) for p in parts) if k]
    return cells


def cells_found(reference: list[str], ours: list[str]) -> tuple[int, int]:
    """(distinct reference cells found among ours, distinct reference cells)."""
    wanted, have = set(reference), set(ours)
    return len(wanted & have), len(wanted)


@dataclass
class Shape:
    """What is scored of one reading: headings, prose paragraphs, table cells and all its text."""

    text: str
    headings: list[str] = field(default_factory=list)
    paragraphs: list[str] | None = None  # None: the extractor has no paragraphs
    cells: list[str] | None = None  # None: the extractor has no tables


def markdown_shape(markdown: str) -> Shape:
    """A Markdown reading (docling's, trafilatura's) as blank-line blocks: a heading line, a table,
    a list, fenced code, an image comment or a formula is not prose; the rest are paragraphs."""
    text = re.sub(r"<!--.*?-->", " ", markdown, flags=re.S)
    text = re.sub(r"\\([\\`*_{}\[\]()#+\-.!|<>~])", r"\1", text)
    shape = Shape(text, [], [], [])
    for block in blocks(markdown):
        first = block.lstrip().splitlines()[0]
        heading = HEADING_LINE.match(first)
        if heading and len(block.strip().splitlines()) == 1:
            shape.headings.append(re.sub(r"\\(.)", r"\1", heading.group(2)))
        elif first.startswith("|"):
            shape.cells += table_cells(block)
        elif first.startswith(("```", "~~~", "$$", "<!--")) or LIST_MARKER.match(first):
            continue
        else:
            shape.paragraphs.append(" ".join(re.sub(r"\\(.)", r"\1", block).split()))
    return shape


def blocks(markdown: str) -> list[str]:
    """Blank-line blocks, a fenced code block whole."""
    found, run, fence = [], [], ""
    for line in markdown.splitlines():
        stripped = line.strip()
        if fence:
            run.append(line)
            fence = "" if stripped.startswith(fence) else fence
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
        if not stripped and not fence:
            if run:
                found.append("\n".join(run))
            run = []
        else:
            run.append(line)
    if run:
        found.append("\n".join(run))
    return found


def tree_shape(text: str, tree) -> Shape:
    """Our reading: the tree's HEADING titles, PARAGRAPH nodes outside lists, tables and code
    (display formulas, `$$…$$`, left out as the reference's are), and the cells of its TABLE nodes; the words of the whole canonical text."""
    from chunklab.v1 import documents_pb2 as pb

    shape = Shape(text, [], [], [])
    inside = (pb.NODE_KIND_LIST, pb.NODE_KIND_LIST_ITEM, pb.NODE_KIND_TABLE, pb.NODE_KIND_CODE)

    def walk(node, contained: bool) -> None:
        if node.kind == pb.NODE_KIND_HEADING:
            shape.headings.append(node.title)
        elif node.kind == pb.NODE_KIND_PARAGRAPH and not contained:
            paragraph = " ".join(text[node.start_char : node.end_char].split())
            if not (paragraph.startswith("$$") and paragraph.endswith("$$")):  # a display formula, as the reference's
                shape.paragraphs.append(paragraph)
        elif node.kind == pb.NODE_KIND_TABLE:
            shape.cells += table_cells(text[node.start_char : node.end_char])
        for child in node.children:
            walk(child, contained or node.kind in inside)

    walk(tree.root, False)
    return shape


@dataclass
class Score:
    """One reading of one file against its reference; counts, so that pooling sums them."""

    file: str
    kind: str
    reader: str
    seconds: float
    pages: int = 0
    headings: tuple[int, int] | None = None  # (found, reference's)
    words: tuple[int, int, int] | None = None  # (shared, reference's, ours)
    paragraphs: tuple[int, int] | None = None  # (ours, reference's)
    mid: tuple[int, int] | None = None  # ours: (mid-sentence, 3+ words)
    ref_mid: tuple[int, int] | None = None
    cells: tuple[int, int] | None = None  # (found, reference's)
    heading_count: int = 0  # ours, whether or not there is a reference
    notes: list[str] = field(default_factory=list)


def score(file: str, kind: str, reader: str, seconds: float, ours: Shape, ref: Shape | None, pages=0) -> Score:
    result = Score(file, kind, reader, seconds, pages, heading_count=len(ours.headings))
    if ours.paragraphs is not None:
        result.mid = mid_counts(ours.paragraphs)
    if ref is None:
        result.paragraphs = (len(ours.paragraphs), 0) if ours.paragraphs is not None else None
        return result
    result.words = coverage(words(ref.text), words(ours.text))
    result.ref_mid = mid_counts(ref.paragraphs)
    if ref.headings and ours.paragraphs is not None:
        result.headings = (headings_found(ref.headings, ours.headings), len(ref.headings))
    if ours.paragraphs is not None:
        result.paragraphs = (len(ours.paragraphs), len(ref.paragraphs))
    if ref.cells and ours.cells is not None:
        result.cells = cells_found(ref.cells, ours.cells)
    return result


def pool(scores: list[Score], file: str) -> Score:
    """Sums every count over scores (files without a reference add only what they have, and
    nothing to the figures compared with a reference)."""
    first = scores[0]
    total = Score(file, first.kind, first.reader, sum(s.seconds for s in scores), sum(s.pages for s in scores))
    for name in ("headings", "words", "paragraphs", "mid", "ref_mid", "cells"):
        # ratios against the reference (paragraphs, our mid-sentence share beside its) pool only
        # files with a reference: a long file without one would outweigh every file that has one
        parts = [
            getattr(s, name)
            for s in scores
            if getattr(s, name) is not None and (name not in ("paragraphs", "mid") or s.words is not None)
        ]
        if parts:
            setattr(total, name, tuple(sum(p[i] for p in parts) for i in range(len(parts[0]))))
    return total


def web_counts(text: str, expected: dict) -> tuple[int, int, int]:
    """(with-snippets found, with-snippets, without-snippets found), whitespace collapsed, substrings."""
    text = " ".join(text.split())
    found = sum(" ".join(s.split()) in text for s in expected["with"])
    leaked = sum(" ".join(s.split()) in text for s in expected["without"])
    return found, len(expected["with"]), leaked


def prf(found: int, wanted: int, leaked: int) -> tuple[float, float, float]:
    precision = found / (found + leaked) if found + leaked else 0.0
    recall = found / wanted if wanted else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def plain_lines(markdown: str) -> str:
    """Markdown's line markers (heading hashes, list markers, quote marks, table pipes) removed,
    so that a snippet is matched in the text, not in the syntax around it."""
    lines = []
    for line in markdown.splitlines():
        line = re.sub(r"^\s*(?:#{1,6}\s+|>\s*|[-*+•]\s+|\d+[.)]\s+)", "", line)
        lines.append(line.strip().strip("|").replace(" | ", " "))
    return "\n".join(lines)


# --- the readings -----------------------------------------------------------------------------------


def timed(read, *args):
    """The value and the CPU seconds it took (one core's time: the machine is shared, so wall time
    would measure the other work on it too)."""
    start = time.process_time()
    value = read(*args)
    return value, time.process_time() - start


def chunklab_reading(kind: str, path: Path, data: bytes):
    """(Shape, pages, warnings) of an upload read by the tree under test, or a refusal's message."""
    from chunklab.v1 import documents_pb2 as pb
    from services.ingest.service import parse_upload

    fmt = {"pdf": pb.DOCUMENT_FORMAT_PDF, "docx": pb.DOCUMENT_FORMAT_DOCX}.get(kind, pb.DOCUMENT_FORMAT_HTML)
    try:
        parsed = parse_upload(path.name, fmt, data)
    except Exception as exc:  # a refusal is a result: it is printed and scores nothing
        return Shape(""), 0, [f"refused: {type(exc).__name__}: {exc}"]
    pages = len(parsed.tree.page_starts)
    return tree_shape(parsed.text, parsed.tree), pages, list(getattr(parsed, "warnings", []))


def pypdfium2_reading(data: bytes) -> Shape:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(data)
    try:
        return Shape("\n\n".join(page.get_textpage().get_text_range() for page in document))
    finally:
        document.close()


def pdfplumber_reading(data: bytes) -> Shape:
    import pdfplumber

    with pdfplumber.open(io.BytesIO(data)) as pdf:
        return Shape("\n\n".join(page.extract_text() or "" for page in pdf.pages))


def python_docx_reading(data: bytes) -> Shape:
    """python-docx's body paragraphs: 'Heading'/'Title' styles are headings, numbered or 'List'
    paragraphs list items; the cells of its top-level tables."""
    import docx

    document = docx.Document(io.BytesIO(data))
    shape = Shape("", [], [], [])
    texts = []
    for paragraph in document.paragraphs:
        text, style = paragraph.text.strip(), (paragraph.style.name if paragraph.style is not None else "")
        texts.append(text)
        if not text:
            continue
        if style.startswith(("Heading", "Title")):
            shape.headings.append(text)
        elif "List" not in style and (paragraph._p.pPr is None or paragraph._p.pPr.numPr is None):
            shape.paragraphs.append(" ".join(text.split()))
    for table in document.tables:
        for row in table.rows:
            for cell in row.cells:
                texts.append(cell.text)
                if cell_key(cell.text):
                    shape.cells.append(cell_key(cell.text))
    shape.text = "\n".join(texts)
    return shape


def trafilatura_reading(data: bytes) -> Shape:
    import trafilatura

    found = trafilatura.extract(
        data.decode("utf-8", "replace"), output_format="markdown", include_tables=True, include_formatting=True
    )
    return markdown_shape(found or "")


LIBRARIES = {
    "pdf": {"pypdfium2": pypdfium2_reading, "pdfplumber": pdfplumber_reading},
    "docx": {"python-docx": python_docx_reading},
    "html": {"trafilatura": trafilatura_reading},
}


def file_text(kind: str, data: bytes, readings: list[Shape]) -> str:
    """All the text the file itself holds, as raw as can be had: every w:t and m:t of a Word
    file's parts, an HTML page's text content, the PDF libraries' text."""
    if kind == "docx":
        import zipfile

        from lxml import etree

        texts = []
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for name in archive.namelist():
                if name.startswith("word/") and name.endswith(".xml"):
                    root = etree.fromstring(archive.read(name))
                    for paragraph in root.iter("{*}p"):
                        texts.append("".join(t.text or "" for t in paragraph.iter("{*}t")))
        return "\n".join(texts)
    if kind == "html":
        import lxml.html

        return lxml.html.fromstring(data).text_content()
    return "\n".join(r.text for r in readings)


def reference_notes(ref: Shape, source: str) -> list[str]:
    """Where docling's Markdown itself looks wrong: words that are nowhere in the file, a
    reference that holds almost nothing."""
    notes = []
    total = sum(words(ref.text).values())
    if total < 30:
        notes.append(f"docling's Markdown holds only {total} words: a weak reference for this file")
    distinct = set(words(ref.text))
    missing = sorted(distinct - set(words(source)))
    if missing and len(missing) >= max(3, 0.02 * len(distinct)):
        shown = ", ".join(missing[:8])
        notes.append(
            f"docling has {len(missing)} distinct words that are nowhere in the file's text ({shown}, ...): "
            "numbering docling computed, its markup (LaTeX, image tags) or its misreadings"
        )
    return notes


def score_file(kind: str, path: Path) -> list[Score]:
    """ChunkLab and each library on one file, against docling's Markdown where there is one."""
    data = path.read_bytes()
    reference = path.with_suffix(".docling.md")
    ref = markdown_shape(reference.read_text()) if reference.exists() else None
    (ours, pages, warnings), seconds = timed(chunklab_reading, kind, path, data)
    scores = [score(path.name, kind, "ChunkLab", seconds, ours, ref, pages)]
    scores[0].notes = [f"warning: {w}" for w in warnings]
    readings = [ours]
    for name, read in LIBRARIES[kind].items():
        shape, seconds = timed(read, data)
        scores.append(score(path.name, kind, name, seconds, shape, ref, pages))
        readings.append(shape)
    if ref is not None:
        scores[0].notes += reference_notes(ref, file_text(kind, data, readings[1:]))
    else:
        scores[0].notes.append("no reference: only speed, paragraphs and the mid-sentence share")
    return scores


def score_web(folder: Path, only_file: str | None) -> dict:
    """trafilatura's evaluation pages: ChunkLab's and trafilatura's main text, pooled P/R/F1."""
    import trafilatura

    from chunklab.v1 import documents_pb2 as pb
    from services.ingest.service import parse_upload

    expected = json.loads((folder / "expected.json").read_text())
    pages, totals = [], {"ChunkLab": [0, 0, 0, 0.0], "trafilatura": [0, 0, 0, 0.0]}
    for item in sorted(expected.values(), key=lambda e: e["file"]):
        if only_file and not matches(item["file"], only_file):
            continue
        data = (folder / item["file"]).read_bytes()
        row = {"file": item["file"]}
        try:
            parsed, seconds = timed(parse_upload, item["file"], pb.DOCUMENT_FORMAT_HTML, data)
            ours, headings = plain_lines(parsed.text), len(tree_shape(parsed.text, parsed.tree).headings)
        except Exception as exc:  # a refusal scores nothing found
            ours, headings, seconds = "", 0, 0.0
            row["refused"] = f"{type(exc).__name__}: {exc}"
        html = data.decode("utf-8", "replace")
        theirs, their_seconds = timed(trafilatura.extract, html)
        marked = trafilatura.extract(html, output_format="markdown", include_formatting=True) or ""
        for name, text, spent, count in (
            ("ChunkLab", ours, seconds, headings),
            ("trafilatura", plain_lines(theirs or ""), their_seconds, len(markdown_shape(marked).headings)),
        ):
            counts = web_counts(text, item)
            row[name] = {"found": counts[0], "with": counts[1], "leaked": counts[2], "headings": count}
            for i in range(3):
                totals[name][i] += counts[i]
            totals[name][3] += spent
        pages.append(row)
    pooled = {
        name: dict(zip(("precision", "recall", "f1"), prf(*t[:3]), strict=True)) | {"seconds": round(t[3], 2)}
        for name, t in totals.items()
    }
    return {"pages": pages, "pooled": pooled}


# --- the output -------------------------------------------------------------------------------------


def matches(name: str, wanted: str) -> bool:
    return name == wanted or Path(name).stem == wanted or name.startswith(wanted)


def ratio(pair, percent=True) -> str:
    if pair is None or not pair[-1]:
        return "—"
    value = pair[0] / pair[-1] if len(pair) == 2 else pair[0] / pair[1]
    return f"{value:.0%} ({pair[0]}/{pair[-1] if len(pair) == 2 else pair[1]})" if percent else f"{value:.2f}×"


def row(s: Score) -> list[str]:
    words_ours = f"{s.words[0] / s.words[2]:.0%}" if s.words and s.words[2] else "—"
    paragraphs = "—"
    if s.paragraphs is not None:
        ref = s.paragraphs[1]
        paragraphs = f"{s.paragraphs[0]} / {ref} = {s.paragraphs[0] / ref:.2f}×" if ref else f"{s.paragraphs[0]}"
    mid = f"{s.mid[0] / s.mid[1]:.0%}" if s.mid and s.mid[1] else "—"
    ref_mid = f"{s.ref_mid[0] / s.ref_mid[1]:.0%}" if s.ref_mid and s.ref_mid[1] else "—"
    speed = f"{s.pages / s.seconds:.1f} p/s" if s.pages and s.seconds else f"{s.seconds * 1000:.0f} ms"
    headings = ratio(s.headings)
    if s.headings is None and s.words is None and s.paragraphs is not None:
        headings = f"{s.heading_count} (no ref)"
    return [
        s.file,
        s.reader,
        headings,
        ratio(s.words[:2]) if s.words else "—",
        words_ours,
        paragraphs,
        f"{mid} vs {ref_mid}",
        ratio(s.cells),
        speed,
    ]


COLUMNS = ["file", "reader", "headings", "words kept", "ours in ref", "paragraphs", "mid-sentence", "cells", "speed"]


def table(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def pooled(scores: list[Score]) -> list[Score]:
    rows = []
    for kind in ("pdf", "docx", "html", "all"):
        mine = [s for s in scores if kind in (s.kind, "all")]
        for reader in dict.fromkeys(s.reader for s in mine):
            if kind == "all" and reader != "ChunkLab":
                continue
            total = pool([s for s in mine if s.reader == reader], f"pooled {kind}")
            if total.pages:  # pages per second over the paged files only
                total.seconds = sum(s.seconds for s in mine if s.reader == reader and s.pages)
            rows.append(total)
    return [r for r in rows if r.file]


def goals(total: Score, pdf: Score | None, web: dict | None) -> list[str]:
    """The issue's goals (28) against the pooled figures: each line met or missed."""
    lines = []

    def check(name: str, value: float | None, met: bool, shown: str) -> None:
        if value is not None:
            lines.append(f"{'met' if met else 'MISSED'}: {name} ({shown})")

    if total.headings and total.headings[1]:
        share = total.headings[0] / total.headings[1]
        check("headings ≥ 85% of the reference’s", share, share >= 0.85, f"{share:.0%}")
    if total.words and total.words[1] and total.words[2]:
        kept, clean = total.words[0] / total.words[1], total.words[0] / total.words[2]
        check("words ≥ 97% kept", kept, kept >= 0.97, f"{kept:.1%}")
        check("words ≥ 95% of ours in the reference", clean, clean >= 0.95, f"{clean:.1%}")
    if total.paragraphs and total.paragraphs[1]:
        times = total.paragraphs[0] / total.paragraphs[1]
        check("paragraphs ≤ 1.5× the reference’s", times, times <= 1.5, f"{times:.2f}×")
    if total.mid and total.mid[1] and total.ref_mid and total.ref_mid[1]:
        points = 100 * (total.mid[0] / total.mid[1] - total.ref_mid[0] / total.ref_mid[1])
        check("mid-sentence share ≤ 10 points above the reference’s", points, points <= 10, f"{points:+.0f} points")
    if pdf and pdf.seconds:
        rate = pdf.pages / pdf.seconds
        check("PDFs ≥ 20 pages/s of one core", rate, rate >= 20, f"{rate:.1f} pages/s")
    if web and web["pages"]:
        ours, theirs = web["pooled"]["ChunkLab"]["f1"], web["pooled"]["trafilatura"]["f1"]
        check("web F1 ≥ trafilatura’s", ours, ours >= theirs, f"{ours:.3f} vs {theirs:.3f}")
    return lines


def web_table(web: dict) -> str:
    lines = ["| page | ChunkLab found/with, leaked | headings | trafilatura found/with, leaked | headings |"]
    lines.append("|---|---|---|---|---|")
    for page in web["pages"]:
        ours, theirs = page["ChunkLab"], page["trafilatura"]
        lines.append(
            f"| {page['file']} | {ours['found']}/{ours['with']}, {ours['leaked']} | {ours['headings']} | "
            f"{theirs['found']}/{theirs['with']}, {theirs['leaked']} | {theirs['headings']} |"
        )
    return "\n".join(lines)


# --- the run ----------------------------------------------------------------------------------------


def repository(given: str | None) -> Path:
    """The tree under test: --repo, else the first PYTHONPATH entry holding services/ingest, else
    the current directory. This file's own folder is taken off sys.path so it shadows nothing."""
    candidates = [given] if given else [*os.environ.get("PYTHONPATH", "").split(os.pathsep), os.getcwd()]
    for entry in candidates:
        if entry and (Path(entry) / "services" / "ingest").is_dir():
            repo = Path(entry).resolve()
            break
    else:
        sys.exit("no repository: run from a ChunkLab checkout (or give --repo PATH)")
    here = Path(__file__).resolve().parent
    sys.path[:] = [str(repo)] + [p for p in sys.path if Path(p or ".").resolve() not in (here, repo)]
    import services.ingest.service as service

    if not Path(service.__file__).resolve().is_relative_to(repo):
        sys.exit(f"services.ingest.service comes from {service.__file__}, not from {repo}")
    return repo


def revision(repo: Path) -> str:
    import subprocess

    found = subprocess.run(
        ["git", "-C", str(repo), "describe", "--always", "--dirty", "--all"], capture_output=True, text=True
    )
    return found.stdout.strip() or "?"


def dev_files(data: Path, only: str | None, only_file: str | None) -> list[tuple[str, Path]]:
    found = []
    for kind, folder in (("pdf", data / "pdf"), ("docx", data / "docx"), ("html", data / "html")):
        if only in (None, kind):
            found += [
                (kind, p) for p in sorted(folder.glob(f"*.{kind}")) if not only_file or matches(p.name, only_file)
            ]
    return found


def warm_up(files: list[tuple[str, Path]]) -> None:
    """Each reader reads the smallest file of its kind once, untimed: imports and first-call set-up
    are not a file's reading time."""
    for kind in dict.fromkeys(k for k, _ in files):
        path = min((p for k, p in files if k == kind), key=lambda p: p.stat().st_size)
        data = path.read_bytes()
        chunklab_reading(kind, path, data)
        for read in LIBRARIES[kind].values():
            read(data)


def cpu_name() -> str:
    import platform

    cpuinfo = Path("/proc/cpuinfo")
    names = re.findall(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(), re.M) if cpuinfo.exists() else []
    return names[0].strip() if names else platform.machine()


def save(path: Path, totals: list[Score], web: dict | None, met: list[str]) -> None:
    """The pooled table, web figures and goals for docs/benchmarks.md (bench/benchmarks_page.py renders them)."""
    import platform

    machine = {
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "load": ", ".join(f"{x:.1f}" for x in os.getloadavg()),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    stored = {"machine": machine, "command": ".venv/bin/python bench/ingest_fidelity.py", "columns": COLUMNS}
    stored |= {"pooled": [row(s) for s in totals], "web": web["pooled"] if web else None, "goals": met}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(stored, indent=1, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--only", choices=("pdf", "docx", "html", "web"), help="one kind of file")
    parser.add_argument("--file", help="one file, by name or stem (e.g. multi_page)")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument("--repo", help="the ChunkLab tree to measure (default: PYTHONPATH, else the current directory)")
    parser.add_argument("--data", help="the dev set (default: REPO/../shared/data/real-docs)")
    parser.add_argument(
        "--no-save",
        action="store_true",
        help="do not store the pooled figures for docs/benchmarks.md (stored only by a full run of a tree's own copy)",
    )
    args = parser.parse_args(argv)
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # the libraries' notes on odd files are not results
    repo = repository(args.repo)
    data = Path(args.data) if args.data else repo.parent / "shared" / "data" / "real-docs"
    if not (data / "README.md").exists():
        sys.exit(f"no dev set at {data}: put ../shared/data/real-docs beside the repository or give --data")
    scores: list[Score] = []
    files = dev_files(data, args.only, args.file)
    warm_up(files)
    for kind, path in files:
        if not args.json:
            print(f"reading {kind}/{path.name} ...", file=sys.stderr)
        scores += score_file(kind, path)
    web = score_web(data / "html" / "web", args.file) if args.only in (None, "web") else None
    totals = pooled(scores) if scores else []
    if args.json:
        out = {"repo": str(repo), "revision": revision(repo), "files": [asdict(s) for s in scores]}
        print(json.dumps(out | {"pooled": [asdict(s) for s in totals], "web": web}, indent=1))
        return 0
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"# Ingest fidelity: {repo} ({revision(repo)})\n")
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} cores, load {load}; speed in CPU time (one core)\n"
    )
    if scores:
        print("## Per file (against docling's Markdown; ChunkLab first, then the libraries)\n")
        print(table([row(s) for s in scores]))
        notes = [(s.file, n) for s in scores for n in s.notes]
        if notes:
            print("\nNotes:\n" + "\n".join(f"- {file}: {note}" for file, note in notes))
        print("\n## Pooled (counts summed over the files)\n")
        print(table([row(s) for s in totals]))
    ours = [s for s in totals if s.reader == "ChunkLab"]
    met = goals(ours[-1], next((s for s in ours if s.file == "pooled pdf"), None), web) if ours else []
    if not ours and web:
        met = goals(Score("", "", "", 0.0), None, web)
    if web and web["pages"]:
        print("\n## Web pages (trafilatura's evaluation: with-snippets found, without-snippets leaked)\n")
        print(web_table(web))
        print()
        for name, figures in web["pooled"].items():
            print(
                f"{name}: precision {figures['precision']:.3f}, recall {figures['recall']:.3f}, "
                f"F1 {figures['f1']:.3f} ({len(web['pages'])} pages, {figures['seconds']:.1f} s)"
            )
    own = Path(__file__).resolve().parent.parent == repo
    if own and not (args.only or args.file or args.no_save):
        save(repo / "docs" / "benchmarks" / "ingest_fidelity.json", totals, web, met)
        print("\nstored docs/benchmarks/ingest_fidelity.json (bench/benchmarks_page.py puts it on docs/benchmarks.md)")
    if met:
        print("\n## Goals (issue 28), ChunkLab pooled over what ran\n\n" + "\n".join(f"- {m}" for m in met))
    return 0


if __name__ == "__main__":
    sys.exit(main())
