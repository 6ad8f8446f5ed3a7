"""The benchmarks page (docs/benchmarks.md): its analysis and its rendering.

bench/benchmarks_page.py measures; this module turns the measured rows into
the page, so that the page can be rendered again from the stored results
(docs/benchmarks/results.json) and tested on hand-built rows. A row is a
plain dict (JSON as stored):

    {"label": "fixed_size 250/125", "strategy": "fixed_size", "knobs": {...},
     "retrieval": "dense" | "hybrid" | "neighbours ±1/1", "group": "defaults" | "sizes" | "expansion",
     "recall": [mean, std], "precision": [...], "iou": [...],   # fractions, population std
     "tokens_sent": float, "chunk_tokens": float, "chunks": int,
     "rank": {"recall_at_1": ..., "ndcg": ..., "map": ...},     # a key absent: not measured
     "seconds": {"chunk": s, "embed": s, "index": s, "query": s}}
or {"label", "strategy", "note"} for a configuration that could not run.

The Markdown is laid out by a Jinja2 template (chunklab_app/templates/benchmarks.md.j2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from chunklab import pareto
from chunklab.views.render import render
from chunklab_app import growth

# The goal of issue 17, item 7: both at once, in the pooled protocol.
GOAL_RECALL = 0.93
GOAL_IOU = 0.08
# The defaults rule's baseline: the Chroma report's token windows (ours at 250/125).
BASELINE = ("fixed_size", {"chunk_size": 250, "chunk_overlap": 125}, "dense")
RANK_KEYS = ("recall_at_1", "recall_at_3", "recall_at_5", "recall_at_10", "ndcg", "map")

# The Chroma report's all-MiniLM-L6-v2 rows (five corpora; ours pools three), in percent.
PUBLISHED = (
    {
        "name": "TokenTextSplitter 250/125",
        "strategy": "fixed_size",
        "knobs": {"chunk_size": 250, "chunk_overlap": 125},
        "recall": (82.4, 36.2),
        "iou": (3.5, None),
    },
    {
        "name": "RecursiveCharacterTextSplitter 200/0",
        "strategy": "recursive",
        "knobs": {"chunk_size": 200, "chunk_overlap": 0},
        "recall": (75.7, None),
        "iou": (6.5, None),
    },
    {
        "name": "ClusterSemanticChunker 200",
        "strategy": "cluster_semantic",
        "knobs": {"max_tokens": 200},
        "recall": (75.2, None),
        "iou": (7.2, None),
    },
)


def measured(rows: Sequence[Mapping]) -> list[Mapping]:
    """The rows that ran (not those with a note saying why they could not)."""
    return [row for row in rows if "note" not in row]


def pareto_front(rows: Sequence[Mapping]) -> list[Mapping]:
    """The rows no other row beats: none sends at most as many tokens with at least
    the recall, better on one of the two. In order of tokens sent."""
    runs = measured(rows)
    kept = pareto.front([(i, (row["tokens_sent"], row["recall"][0])) for i, row in enumerate(runs)], (False, True))
    front = [runs[i] for i in kept]
    return sorted(front, key=lambda row: (row["tokens_sent"], -row["recall"][0]))


def matches(row: Mapping, strategy: str, knobs: Mapping, retrieval: str = "dense") -> bool:
    """Whether the row is the strategy with these knob values (others at any value) and retrieval."""
    return (
        row.get("strategy") == strategy
        and row.get("retrieval", "dense") == retrieval
        and all(row.get("knobs", {}).get(k) == v for k, v in knobs.items())
    )


def baseline(rows: Sequence[Mapping]) -> Mapping | None:
    strategy, knobs, retrieval = BASELINE
    return next((row for row in measured(rows) if matches(row, strategy, knobs, retrieval)), None)


def choose_default(rows: Sequence[Mapping], group: str | None = None) -> tuple[Mapping | None, str]:
    """The configuration the UI and the experiment form offer first, with the rule that chose it:
    of the Pareto points (recall against tokens sent) whose IoU is at least the baseline's (every
    point without a baseline row), those that reach the goal first, then the best recall, then the
    fewer tokens. With a group,
    only that group's rows compete (e.g. "defaults": each strategy at its own defaults)."""
    front = pareto_front([row for row in measured(rows) if group is None or row.get("group") == group])
    base = baseline(rows)
    floor = base["iou"][0] if base else 0.0
    eligible = [row for row in front if row["iou"][0] >= floor]
    if not eligible:
        return None, "no Pareto point reaches the baseline IoU"
    best = max(eligible, key=lambda row: (shortfall(row) == 0, row["recall"][0], -row["tokens_sent"]))
    rule = (
        "among the Pareto points (recall against tokens sent) "
        + (
            f"whose IoU is at least the token-window baseline 250/125 ({100 * floor:.1f}%)"
            if base
            else "(no token-window baseline was measured)"
        )
        + ", prefer one that reaches the goal (recall ≥ 93% and IoU ≥ 8%), then the best recall"
    )
    return best, rule


def hybrid_by_default(gains: Sequence[Mapping]) -> bool:
    """Hybrid retrieval on by default when it raised recall for every configuration measured both
    ways and lowered none's IoU by more than half a point."""
    return bool(gains) and all(g["recall"] > 0 and g["iou"] >= -0.5 for g in gains)


def goal(rows: Sequence[Mapping]) -> tuple[list[Mapping], Mapping | None]:
    """The rows reaching recall >= 93% and IoU >= 8% at once, and the closest row: the one with the
    smallest shortfall, summed over the two axes in points (a met axis counts 0)."""
    runs = measured(rows)
    reached = [row for row in runs if row["recall"][0] >= GOAL_RECALL and row["iou"][0] >= GOAL_IOU]
    closest = min(runs, key=shortfall, default=None)
    return reached, closest


def shortfall(row: Mapping) -> float:
    """Points missing to the goal, recall and IoU added (0 when both are met)."""
    return max(0.0, GOAL_RECALL - row["recall"][0]) + max(0.0, GOAL_IOU - row["iou"][0])


def goal_sides(rows: Sequence[Mapping]) -> dict:
    """Each axis of the goal met alone: the best IoU among rows with recall >= 93%, and the best
    recall among rows with IoU >= 8% (None when no row meets that axis)."""
    runs = measured(rows)
    by_recall = [row for row in runs if row["recall"][0] >= GOAL_RECALL]
    by_iou = [row for row in runs if row["iou"][0] >= GOAL_IOU]
    return {
        "recall_met": max(by_recall, key=lambda row: row["iou"][0], default=None),
        "iou_met": max(by_iou, key=lambda row: row["recall"][0], default=None),
    }


def hybrid_gains(rows: Sequence[Mapping]) -> list[dict]:
    """For every configuration measured dense and hybrid: recall and IoU of both, in points."""
    runs = measured(rows)
    gains = []
    for row in runs:
        if row.get("retrieval") != "dense":
            continue
        twin = next(
            (
                other
                for other in runs
                if other.get("retrieval") == "hybrid"
                and other["strategy"] == row["strategy"]
                and other.get("knobs") == row.get("knobs")
            ),
            None,
        )
        if twin is not None:
            gains.append(
                {
                    "label": row["label"],
                    "recall": 100 * (twin["recall"][0] - row["recall"][0]),
                    "iou": 100 * (twin["iou"][0] - row["iou"][0]),
                }
            )
    return gains


def _pct(pair: Sequence[float | None]) -> str:
    mean, std = pair
    return f"{100 * mean:.1f} ± {100 * std:.1f}" if std is not None else f"{100 * mean:.1f}"


def _published_pct(pair: Sequence[float | None]) -> str:
    mean, std = pair
    return f"{mean:.1f} ± {std:.1f}" if std is not None else f"{mean:.1f}"


def knob_text(row: Mapping) -> str:
    """A row's knob values as the page writes them: name=value, comma-separated ("none" without knobs)."""
    return ", ".join(f"{name}={value}" for name, value in sorted(row.get("knobs", {}).items())) or "none"


def table_rows(rows: Sequence[Mapping]) -> list[dict]:
    """The main table's cells, every number formatted; a Pareto point is marked with a star."""
    front = {id(row) for row in pareto_front(rows)}
    cells = []
    for row in rows:
        if "note" in row:
            cells.append({"label": row["label"], "note": row["note"]})
            continue
        rank = row.get("rank", {})
        cells.append(
            {
                "label": row["label"],
                "retrieval": row.get("retrieval", "dense"),
                "pareto": id(row) in front,
                "recall": _pct(row["recall"]),
                "precision": _pct(row["precision"]),
                "iou": _pct(row["iou"]),
                "chunk_tokens": f"{row['chunk_tokens']:.0f}",
                "tokens_sent": f"{row['tokens_sent']:,.0f}",
                "chunks": f"{row['chunks']:,}",
                "rank": [f"{100 * rank[k]:.1f}" if k in rank else "—" for k in RANK_KEYS],
            }
        )
    return cells


def published_rows(rows: Sequence[Mapping]) -> list[dict]:
    """The report's rows, each beside ours for the same configuration (dense retrieval)."""
    out = []
    for pub in PUBLISHED:
        ours = next((row for row in measured(rows) if matches(row, pub["strategy"], pub["knobs"])), None)
        out.append(
            {
                "name": pub["name"],
                "recall": _published_pct(pub["recall"]),
                "iou": _published_pct(pub["iou"]),
                "ours": ours["label"] if ours else "not measured",
                "our_recall": _pct(ours["recall"]) if ours else "—",
                "our_iou": _pct(ours["iou"]) if ours else "—",
            }
        )
    return out


def time_rows(rows: Sequence[Mapping]) -> list[dict]:
    """Each row's seconds per phase as printed; a row measured before the chunker timed its phases
    apart has one embed_index figure, printed as embed with index "—"."""
    out = []
    for row in measured(rows):
        seconds = dict(row.get("seconds", {}))
        if "embed" not in seconds and "embed_index" in seconds:
            seconds["embed"] = seconds["embed_index"]
        out.append(
            {
                "label": row["label"],
                "retrieval": row.get("retrieval", "dense"),
                **{k: f"{seconds[k]:.1f}" if k in seconds else "—" for k in ("chunk", "embed", "index", "query")},
            }
        )
    return out


# The look of every figure on the page (bench/growth.py draws its plot with it too).
STYLE = {"font.size": 8, "axes.spines.top": False, "axes.spines.right": False}
MARKERS = (("dense", "o"), ("hybrid", "s"), ("neighbours ±1/1", "^"))


def _short_label(row: Mapping) -> str:
    return row["label"] + (" (hybrid)" if row.get("retrieval") == "hybrid" else "")


def plot(rows: Sequence[Mapping], path: Path) -> None:
    """Two panels, one point per measured row, written as a PNG: recall against tokens sent with
    the Pareto front drawn as a step line, its points ringed and named; and recall against IoU with
    the goal's corner (recall >= 93%, IoU >= 8%) shaded."""
    import matplotlib
    from matplotlib.figure import Figure

    runs = measured(rows)
    front = pareto_front(rows)
    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(13, 6), layout="constrained")
        tokens_axes, iou_axes = figure.subplots(1, 2, width_ratios=(3, 2))
        for retrieval, marker in MARKERS:
            group = [row for row in runs if row.get("retrieval", "dense") == retrieval]
            if group:
                recall = [100 * r["recall"][0] for r in group]
                tokens_axes.scatter(
                    [r["tokens_sent"] for r in group], recall, marker=marker, label=retrieval, alpha=0.8
                )
                iou_axes.scatter([100 * r["iou"][0] for r in group], recall, marker=marker, label=retrieval, alpha=0.8)
        x, y = [r["tokens_sent"] for r in front], [100 * r["recall"][0] for r in front]
        tokens_axes.step(x, y, where="post", color="#d53f8c", label="Pareto front")
        tokens_axes.scatter(x, y, s=120, facecolors="none", edgecolors="#d53f8c")
        for i, row in enumerate(front):
            tokens_axes.annotate(
                _short_label(row),
                (row["tokens_sent"], 100 * row["recall"][0]),
                textcoords="offset points",
                xytext=(6, -11 if i % 2 else 5),
            )
        tokens_axes.axhline(100 * GOAL_RECALL, color="grey", linestyle=":", label="goal recall 93%")
        tokens_axes.set_xscale("log")
        tokens_axes.set_xlabel("tokens sent per question (log scale)")
        tokens_axes.set_ylabel("recall (%)")
        tokens_axes.set_title("recall against tokens sent (Pareto front ringed)")
        tokens_axes.legend(loc="lower right")
        top = max([100 * r["iou"][0] for r in runs] + [100 * GOAL_IOU + 1])
        iou_axes.fill_between(
            [100 * GOAL_IOU, top + 1],
            100 * GOAL_RECALL,
            100,
            color="#38a169",
            alpha=0.15,
            label="goal: recall ≥ 93%, IoU ≥ 8%",
        )
        iou_axes.set_xlabel("IoU (%)")
        iou_axes.set_ylabel("recall (%)")
        iou_axes.set_title("recall against IoU")
        iou_axes.legend(loc="lower left")
        figure.suptitle("chroma-general, 3 corpora in one pooled index, top 5, all-MiniLM-L6-v2")
        save_png(figure, path)


def save_png(figure, path: Path) -> None:
    """A figure of the page as a PNG, without the software stamp (a re-render changes no byte needlessly)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png", dpi=100, metadata={"Software": None})


def page(
    results: Mapping,
    plot_path: str,
    growth_results: Mapping | None = None,
    growth_plot: str = "",
    cold_results: Mapping | None = None,
    backend_results: Mapping | None = None,
    fidelity_results: Mapping | None = None,
    speed_results: Mapping | None = None,
    chunker_results: Mapping | None = None,
    llm_results: Mapping | None = None,
) -> str:
    """The Markdown page of a results document ({"rows", "machine", "command", "phases", ...}), with
    a Growth section when bench/growth.py's results are given, the cold experiment's table when
    bench/cold_experiment.py's are and the embedding backends' when bench/embedding_backends.py's are."""
    rows = results["rows"]
    default, rule = choose_default(rows)
    strategy_default, _ = choose_default(rows, group="defaults")
    reached, closest = goal(rows)
    gains = hybrid_gains(rows)
    base = baseline(rows)
    return render(
        "chunklab_app",
        "benchmarks.md.j2",
        results=results,
        table=table_rows(rows),
        published=published_rows(rows),
        times=time_rows(rows),
        front=[_short_label(row) for row in pareto_front(rows)],
        default=default,
        rule=rule,
        base=base,
        reached=reached,
        closest=closest,
        gaps=(
            {"recall": 100 * (GOAL_RECALL - closest["recall"][0]), "iou": 100 * (GOAL_IOU - closest["iou"][0])}
            if closest
            else None
        ),
        gains=gains,
        hybrid_on=hybrid_by_default(gains),
        strategy_default=strategy_default,
        sides=goal_sides(rows),
        plot_path=plot_path,
        pct=_pct,
        knob_text=knob_text,
        skipped=[row for row in rows if "note" in row],
        growth=growth_results,
        growth_table=growth.table_rows(growth_results["rows"]) if growth_results else [],
        growth_plot=growth_plot,
        cold=cold_results,
        backends=backend_results,
        fidelity=fidelity_results,  # bench/ingest_fidelity.py's pooled table (issue 28)
        speed=speed_results,  # bench/study_speed.py's before and after (issue 29)
        chunker=chunker_results,  # bench/chunker_bench.py --write's chunking table (issue 29)
        llm=llm_results,  # bench/llm_features.py's table (issue 30)
    )
