"""The configuration the product offers first, as docs/benchmarks.md decided from its own tables.

The benchmarks page (bench/benchmarks_page.py, analysed by chunklab_app/benchpage.py) picks, by a
stated rule, the strategy the experiment form ticks and the Query page selects first, and whether
hybrid retrieval starts on. The product must not read docs/ at run time, so the decision is kept
here as constants; tests/unit/test_recommended.py checks them against docs/benchmarks/results.json with
the page's own rule, and fails when a re-measured page decides differently. Only the UI and the
CLI's help follow these: the API's defaults (RetrievalOptions.hybrid off) stay as they are, so API
results do not change.
"""

from __future__ import annotations

# The constants live in the core (chunklab/recommended.py), where the evaluator's tuning study reads
# them too; they are named here for the UI and the CLI.
from chunklab.recommended import BASELINE, FIRST_STRATEGIES, HYBRID, SOURCE, STRATEGIES

__all__ = ["BASELINE", "FIRST_STRATEGIES", "HYBRID", "SOURCE", "STRATEGIES", "flags", "summary"]


def flags() -> str:
    """The recommendation as CLI flags (chunklab_app.cli)."""
    return " ".join(f"--strategy {name}" for name in STRATEGIES) + (" --hybrid" if HYBRID else "")


def summary() -> str:
    """One line naming the recommendation and where it comes from, for help texts."""
    retrieval = " with hybrid retrieval" if HYBRID else ""
    return f"{', '.join(STRATEGIES)}{retrieval} (recommended by {SOURCE})"
