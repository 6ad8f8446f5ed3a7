"""The boundary viewer on a 100-page document (ADR 0061): HTML size and render time,
before (two single-configuration views, every piece laid out) and after (the two
configurations side by side in rows, blocks laid out only near the viewport).

Builds a seeded stand-in of a 100-page PDF's text (about 3,000 characters a page,
sentences of ordinary length, a page start every page) and two configurations
over it without any service: character windows of 1,200 with 200 of overlap (the
cuts fall anywhere) and sentences packed up to 800 characters (the cuts fall
between sentences). Prints, per view, the HTML's size, the time Python takes to
render it, the figures the viewer shows (sentence split included), and — where
Debian's chromium is installed — the time the browser takes to insert the HTML
and paint the first screen, and to scroll from top to bottom in 20 steps, each
painted.

    .venv/bin/python bench/boundaries_view.py [--pages 100] [--no-browser]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from chunklab.text import sentences  # noqa: E402
from chunklab.v1 import common_pb2 as pb  # noqa: E402
from chunklab.views import render  # noqa: E402
from frontend.pages.documents import boundary_stats  # noqa: E402
from frontend.pages.documents.boundaries import boundary_html  # noqa: E402
from frontend.pages.documents.boundary_columns import Configuration, side_by_side_html  # noqa: E402
from frontend.style import CSS  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
PAGE_CHARS = 3_000
WORDS = (
    "keeper",
    "lamp",
    "harbour",
    "storm",
    "lens",
    "beacon",
    "tide",
    "signal",
    "ship",
    "tower",
    "oil",
    "wick",
    "fog",
    "horn",
    "light",
    "coast",
    "rock",
    "flag",
    "radio",
    "engine",
)


def document(pages: int, seed: int = 7) -> tuple[str, list[int]]:
    """The text and where each page begins."""
    rng = random.Random(seed)
    parts, page_starts, length = [], [], 0
    for _ in range(pages):
        page_starts.append(length)
        page = []
        while sum(len(s) for s in page) < PAGE_CHARS:
            words = [rng.choice(WORDS) for _ in range(rng.randint(6, 24))]
            page.append(" ".join(words).capitalize() + ". ")
            if rng.random() < 0.15:
                page.append("\n\n")
        parts.append("".join(page))
        length += len(parts[-1])
    return "".join(parts), page_starts


def _chunk(text: str, index: int, start: int, end: int) -> pb.Chunk:
    return pb.Chunk(
        chunk_index=index,
        start_char=start,
        end_char=end,
        content=text[start:end],
        token_count=len(text[start:end].split()),
    )


def windows(text: str, size: int = 1_200, overlap: int = 200) -> list[pb.Chunk]:
    starts = range(0, len(text), size - overlap)
    return [_chunk(text, i, s, min(s + size, len(text))) for i, s in enumerate(starts) if s < len(text)]


def packed_sentences(text: str, spans: list[tuple[int, int]], limit: int = 800) -> list[pb.Chunk]:
    chunks, start, end = [], spans[0][0], spans[0][0]
    for a, b in spans:
        if b - start > limit and end > start:
            chunks.append(_chunk(text, len(chunks), start, end))
            start = a
        end = b
    chunks.append(_chunk(text, len(chunks), start, end))
    return chunks


def timed(fn, repeat: int = 3) -> tuple[object, float]:
    """fn's result and its median wall time in milliseconds."""
    times, result = [], None
    for _ in range(repeat):
        began = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - began) * 1000)
    return result, statistics.median(times)


BROWSER_SCRIPT = """async (html) => {
    const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    const host = document.getElementById('host');
    let began = performance.now();
    host.innerHTML = html;
    host.offsetHeight;
    await frame();
    const first = performance.now() - began;
    const box = host.querySelector('.cl-sbs-scroll') || document.scrollingElement;
    const range = box.scrollHeight - box.clientHeight;
    began = performance.now();
    for (let step = 1; step <= 20; step++) {
        box.scrollTop = range * step / 20;
        box.scrollTop;
        await frame();
    }
    const jumps = performance.now() - began;
    box.scrollTop = range / 2;
    await frame();
    const steps = [];
    for (let step = 1; step <= 40; step++) {
        const at = performance.now();
        box.scrollTop += box.clientHeight / 2;
        box.scrollTop;
        await frame();
        steps.push(performance.now() - at);
    }
    steps.sort((a, b) => a - b);
    return [first, jumps, steps[20]];
}"""
# The same side-by-side HTML with every block laid out at once: what the lazy blocks save.
EAGER_CSS = ".cl-sbs-block { content-visibility: visible; }"


def browser_times(views: dict[str, tuple[str, str]]) -> dict[str, list[float]]:
    """Per view (HTML, extra CSS): insert and first paint, 20 jumps top to bottom, and the median
    half-screen scroll step from the middle, in milliseconds (each the median of three pages)."""
    from playwright.sync_api import sync_playwright

    found = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox"])
        try:
            for name, (html, css) in views.items():
                shell = f"<html><head><style>{CSS}{css}</style></head><body><div id='host'></div></body></html>"
                runs = []
                for _ in range(3):
                    page = browser.new_page(viewport={"width": 1400, "height": 1000})
                    page.set_content(shell)
                    runs.append(page.evaluate(BROWSER_SCRIPT, html))
                    page.close()
                found[name] = [statistics.median(r[i] for r in runs) for i in range(3)]
        finally:
            browser.close()
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--no-browser", action="store_true", help="skip the chromium timings")
    args = parser.parse_args()

    text, page_starts = document(args.pages)
    spans, split_ms = timed(lambda: sentences.split(text), repeat=1)
    left = Configuration("windows 1200/200", windows(text))
    right = Configuration("sentences ≤ 800", packed_sentences(text, spans))
    print(
        f"document: {args.pages} pages, {len(text):,} characters, {len(spans):,} sentences "
        f"(split in {split_ms:,.0f} ms); {len(left.chunks)} and {len(right.chunks)} chunks"
    )
    for side in (left, right):
        figures, ms = timed(lambda: boundary_stats.boundary_stats(side.chunks, spans, len(text)))
        print(
            f"  {side.label}: tiny {figures.tiny_share:.1%}, mid-sentence {figures.mid_sentence_share:.1%} "
            f"(figures in {ms:,.1f} ms)"
        )

    render.environment("frontend")  # templates loaded once, outside the timings
    one, one_ms = timed(lambda: boundary_html(text, left.chunks, page_starts=page_starts))
    both, both_ms = timed(
        lambda: "".join(
            boundary_html(text, side.chunks, page_starts=page_starts, max_chars=len(text)) for side in (left, right)
        )
    )
    after, after_ms = timed(lambda: side_by_side_html(text, left, right, page_starts=page_starts))
    views = {
        "before: one view, first 200,000 chars": (one, one_ms, ""),
        "before: two views, whole text": (both, both_ms, ""),
        "after: side by side, all laid out": (after, after_ms, EAGER_CSS),
        "after: side by side, lazy blocks": (after, after_ms, ""),
    }
    print(f"{'view':40} {'HTML':>8} {'Python':>8}")
    for name, (html, ms, _) in views.items():
        print(f"{name:40} {len(html.encode()) / 1e6:>6.2f}MB {ms:>6,.0f}ms")

    if args.no_browser or not CHROMIUM.exists():
        print("browser timings skipped" + ("" if args.no_browser else f": {CHROMIUM} is missing (make browser)"))
        return 0
    print(f"{'view':40} {'first paint':>12} {'20 jumps':>10} {'one scroll step':>16}")
    timings = browser_times({name: (html, css) for name, (html, _, css) in views.items()})
    for name, (first, jumps, step) in timings.items():
        print(f"{name:40} {first:>10,.0f}ms {jumps:>8,.0f}ms {step:>14,.1f}ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
