"""Growth (issue 17, item 5): how chunking, indexing and retrieval scale with the corpus.

bench/growth.py measures each strategy at 1, 10 and 100 times the shared corpus
and stores the rows in docs/benchmarks/growth.json; this module turns them into
the ratios, the table and the plot, so that the benchmarks page can show them
again without measuring and so that they can be tested on hand-built rows. A row:

    {"scale": 10, "mb": 2.05, "documents": 30, "strategy": "fixed_size", "chunks": 1020,
     "queries": 50, "seconds": {"chunk": s, "index": s, "retrieve": s},   # wall time; retrieve: all queries
     "cpu_seconds": {"chunk": s, "index": s, "retrieve": s},              # CPU time of the process, all threads
     "rss_mb": {"start": mb, "chunk": mb, "index": mb, "retrieve": mb}}     # peak RSS after each phase

A ratio is CPU time per MB at a scale over CPU time per MB at the strategy's
smallest scale (wall time for rows without CPU times): linear growth shows as
about 1.0, a ratio of 10 at 10 times the corpus is quadratic. CPU time, because
on a shared, loaded machine wall time swings with the neighbours' work.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

PHASES = ("chunk", "index", "retrieve")


def ratios(rows: Sequence[Mapping]) -> dict[tuple[str, int], dict[str, float]]:
    """(strategy, scale) -> phase -> time per MB over the strategy's smallest scale's time per MB
    (NaN when the smallest scale took no measurable time)."""
    base: dict[str, Mapping] = {}
    for row in rows:
        if row["strategy"] not in base or row["scale"] < base[row["strategy"]]["scale"]:
            base[row["strategy"]] = row
    out = {}
    for row in rows:
        first = base[row["strategy"]]
        now, then = _times(row), _times(first)
        out[(row["strategy"], row["scale"])] = {
            phase: (now[phase] / row["mb"]) / (then[phase] / first["mb"]) if then[phase] > 0 else float("nan")
            for phase in PHASES
        }
    return out


def _times(row: Mapping) -> Mapping[str, float]:
    return row.get("cpu_seconds") or row["seconds"]


def table_rows(rows: Sequence[Mapping]) -> list[dict]:
    """The table's cells, every number formatted, in order of strategy then scale; chunk and index
    seconds are wall time with the CPU time beside it in brackets (when measured): on a loaded machine
    the gap is waiting (for a core, for the disk)."""
    found = ratios(rows)
    cells = []
    for row in sorted(rows, key=lambda r: (r["strategy"], r["scale"])):
        ratio = found[(row["strategy"], row["scale"])]
        seconds, rss = row["seconds"], row["rss_mb"]
        cells.append(
            {
                "strategy": row["strategy"],
                "scale": f"{row['scale']}×",
                "mb": f"{row['mb']:.1f}",
                "documents": f"{row['documents']:,}",
                "chunks": f"{row['chunks']:,}",
                **{
                    phase: f"{seconds[phase]:.2f}"
                    + (f" ({row['cpu_seconds'][phase]:.2f})" if "cpu_seconds" in row else "")
                    for phase in ("chunk", "index")
                },
                "retrieve_ms": f"{1e3 * seconds['retrieve'] / row['queries']:.2f}",
                **{f"{phase}_ratio": f"{ratio[phase]:.2f}" for phase in PHASES},
                "rss": f"{max(rss[p] for p in PHASES):.0f}",
                "rss_added": f"{max(rss[p] for p in PHASES) - rss['start']:.0f}",
            }
        )
    return cells


HEADER = (
    "strategy",
    "scale",
    "MB",
    "docs",
    "chunks",
    "chunk s (CPU)",
    "index s (CPU)",
    "ms/query",
    "chunk ×",
    "index ×",
    "retrieve ×",
    "peak RSS MB",
    "+RSS MB",
)
KEYS = (
    "strategy",
    "scale",
    "mb",
    "documents",
    "chunks",
    "chunk",
    "index",
    "retrieve_ms",
    "chunk_ratio",
    "index_ratio",
    "retrieve_ratio",
    "rss",
    "rss_added",
)


def text_table(rows: Sequence[Mapping]) -> str:
    """The table as the terminal shows it: aligned columns, ratios are time per MB against the smallest scale."""
    cells = [HEADER] + [tuple(cell[k] for k in KEYS) for cell in table_rows(rows)]
    widths = [max(len(line[i]) for line in cells) for i in range(len(HEADER))]
    return "\n".join(
        "  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(line, widths))) for line in cells
    )


def plot(rows: Sequence[Mapping], path: Path) -> None:
    """Two panels written as a PNG: each phase's CPU time (the ratios' measure) against corpus size (log-log, one line per
    strategy and phase, a dotted line of slope 1 through each phase's smallest point: linear growth
    follows it), and peak RSS against corpus size."""
    import matplotlib
    import matplotlib.ticker
    from matplotlib.figure import Figure

    from chunklab_app.benchpage import STYLE, save_png  # the page's look; imported here: benchpage imports this module

    strategies = sorted({row["strategy"] for row in rows})
    markers = dict(zip(PHASES, ("o", "s", "^")))
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(12, 5), layout="constrained")
        time_axes, memory_axes = figure.subplots(1, 2)
        for n, strategy in enumerate(strategies):
            own = sorted((row for row in rows if row["strategy"] == strategy), key=lambda r: r["scale"])
            mb = [row["mb"] for row in own]
            colour = f"C{n}"
            for phase in PHASES:
                seconds = [_times(row)[phase] for row in own]
                time_axes.plot(mb, seconds, marker=markers[phase], color=colour, label=f"{strategy}: {phase}")
                if seconds[0] > 0:
                    time_axes.plot(mb, [seconds[0] * m / mb[0] for m in mb], linestyle=":", color=colour, alpha=0.5)
            memory_axes.plot(
                mb, [max(row["rss_mb"][p] for p in PHASES) for row in own], marker="o", color=colour, label=strategy
            )
        time_axes.set_xscale("log")
        time_axes.set_yscale("log")
        time_axes.set_xlabel("corpus (MB of text, log scale)")
        time_axes.set_ylabel("CPU seconds (log scale; retrieve: all queries)")
        time_axes.set_title("time per phase (dotted: linear growth from the smallest size)")
        time_axes.legend(loc="upper left", ncols=2)
        memory_axes.set_xscale("log")
        for axes in (time_axes, memory_axes):  # plain numbers (0.2, 2, 20 MB), not powers of ten
            axes.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
        memory_axes.set_xlabel("corpus (MB of text, log scale)")
        memory_axes.set_ylabel("peak RSS (MB), one fresh process per size and strategy")
        memory_axes.set_title("peak memory")
        memory_axes.legend(loc="upper left")
        scales = ", ".join(f"{scale}×" for scale in sorted({row["scale"] for row in rows}))
        figure.suptitle(f"growth: chroma-general repeated {scales} (random 384-d vectors, no embedding)")
        save_png(figure, path)
