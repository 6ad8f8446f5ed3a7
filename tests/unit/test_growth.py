"""The growth table (bench/growth.py) from hand-built timings: its ratios of time per MB
against the smallest size, its cells, and its section on the benchmarks page."""

from __future__ import annotations

import math

import pytest

from chunklab_app import benchpage, growth


def row(strategy, scale, mb, chunk, index, retrieve, cpu=None, rss=(100.0, 110.0, 150.0, 151.0)):
    out = {
        "scale": scale,
        "mb": mb,
        "documents": 3 * scale,
        "strategy": strategy,
        "chunks": 100 * scale,
        "queries": 50,
        "seconds": {"chunk": chunk, "index": index, "retrieve": retrieve},
        "rss_mb": dict(zip(("start", "chunk", "index", "retrieve"), rss)),
    }
    if cpu is not None:
        out["cpu_seconds"] = dict(zip(growth.PHASES, cpu))
    return out


@pytest.fixture(scope="module")
def rows():
    return [
        # Listed out of order: the smallest scale is each strategy's base wherever it stands.
        row("fixed_size", 10, 2.0, 1.0, 4.0, 0.5, rss=(100.0, 120.0, 300.0, 302.5)),
        row("fixed_size", 1, 0.2, 0.1, 0.2, 0.25),
        row("fixed_size", 100, 20.0, 10.0, 100.0, 2.5),
        # CPU times given: the ratios use them, the table still prints wall seconds.
        row("recursive", 1, 0.25, 0.5, 0.5, 0.5, cpu=(0.25, 0.25, 0.0)),
        row("recursive", 10, 2.5, 8.0, 8.0, 8.0, cpu=(2.5, 7.5, 0.5)),
    ]


def test_ratios_are_time_per_mb_against_the_smallest_scale(rows):
    found = growth.ratios(rows)
    assert found[("fixed_size", 1)] == {"chunk": 1.0, "index": 1.0, "retrieve": 1.0}
    assert found[("fixed_size", 10)] == pytest.approx({"chunk": 1.0, "index": 2.0, "retrieve": 0.2})
    assert found[("fixed_size", 100)] == pytest.approx({"chunk": 1.0, "index": 5.0, "retrieve": 0.1})
    assert found[("recursive", 10)]["chunk"] == pytest.approx(1.0)
    assert found[("recursive", 10)]["index"] == pytest.approx(3.0)
    # No measurable CPU time at the smallest size: no ratio, rather than a division by zero.
    assert math.isnan(found[("recursive", 10)]["retrieve"])


def test_table_rows_format_every_cell_in_order_of_strategy_then_scale(rows):
    cells = growth.table_rows(rows)
    assert [(c["strategy"], c["scale"]) for c in cells] == [
        ("fixed_size", "1×"),
        ("fixed_size", "10×"),
        ("fixed_size", "100×"),
        ("recursive", "1×"),
        ("recursive", "10×"),
    ]
    assert cells[1] == {
        "strategy": "fixed_size",
        "scale": "10×",
        "mb": "2.0",
        "documents": "30",
        "chunks": "1,000",
        "chunk": "1.00",
        "index": "4.00",
        "retrieve_ms": "10.00",
        "chunk_ratio": "1.00",
        "index_ratio": "2.00",
        "retrieve_ratio": "0.20",
        "rss": "302",
        "rss_added": "202",
    }
    # With CPU times, each phase's cell gives them in brackets beside the wall time.
    assert (cells[4]["chunk"], cells[4]["index"], cells[4]["retrieve_ms"]) == ("8.00 (2.50)", "8.00 (7.50)", "160.00")
    assert cells[4]["retrieve_ratio"] == "nan"


def test_text_table_aligns_the_header_over_each_column(rows):
    lines = growth.text_table(rows).splitlines()
    assert lines[0].split() == [
        "strategy",
        "scale",
        "MB",
        "docs",
        "chunks",
        "chunk",
        "s",
        "(CPU)",
        "index",
        "s",
        "(CPU)",
        "ms/query",
        "chunk",
        "×",
        "index",
        "×",
        "retrieve",
        "×",
        "peak",
        "RSS",
        "MB",
        "+RSS",
        "MB",
    ]
    assert lines[3].split() == [
        "fixed_size",
        "100×",
        "20.0",
        "300",
        "10,000",
        "10.00",
        "100.00",
        "50.00",
        "1.00",
        "5.00",
        "0.10",
        "151",
        "51",
    ]
    assert len({len(line) for line in lines}) == 1


def test_the_benchmarks_page_shows_growth_only_when_it_was_measured(rows):
    results = {
        "rows": [],
        "questions": 276,
        "top_k": 5,
        "cold": False,
        "machine": {
            "cpu": "Test CPU",
            "cores": 2,
            "ram_gb": 4.0,
            "python": "3.11.7",
            "os": "Linux",
            "load": "1.0",
            "date": "2026-12-01 20:00 UTC",
        },
        "command": "bench",
        "phases": {},
        "total_s": 1.0,
    }
    growth_results = {**results, "rows": rows, "queries": 50, "command": "bench/growth.py"}
    without = benchpage.page(results, plot_path="p.png")
    assert "## Growth" not in without
    page = benchpage.page(
        results, plot_path="p.png", growth_results=growth_results, growth_plot="benchmarks/growth.png"
    )
    lines = page.splitlines()
    assert "## Growth" in lines
    assert (
        "| fixed_size | 100× | 20.0 | 300 | 10,000 | 10.00 | 100.00 | 50.00 | 1.00 | 5.00 | 0.10 | 151 | 51 |" in lines
    )
    assert "![CPU time per phase and peak memory against corpus size](benchmarks/growth.png)" in lines
    assert "Chunking, indexing and retrieval at 1×, 10×, 100× the corpus" in lines
