"""The defaults the product offers first (chunklab_app.recommended): that they are what
docs/benchmarks.md decided, and that the experiment form, the Query page and the CLI take them
from that one module."""

from __future__ import annotations

import json
from pathlib import Path

import gradio as gr
import pytest

from chunklab_app import benchpage, recommended
from chunklab_app.cli import main as cli
from frontend.forms import knobs
from frontend.forms.retrieval import hybrid_checkbox
from frontend.pages.query.query_form import default_strategy

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "benchmarks" / "results.json"


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return json.loads(RESULTS.read_text(encoding="utf-8"))["rows"]


def test_the_recommended_strategy_is_the_one_the_page_picks_among_strategies_at_their_defaults(rows):
    # The page's rule over its own stored rows; re-measured rows that decide otherwise fail here.
    chosen, _ = benchpage.choose_default(rows, group="defaults")
    assert (chosen["strategy"], chosen["retrieval"]) == ("cluster_parent_child", "hybrid")
    assert (chosen["strategy"],) == recommended.STRATEGIES
    assert recommended.HYBRID is (chosen["retrieval"] == "hybrid")


def test_hybrid_on_by_default_is_the_pages_decision_from_its_dense_and_hybrid_twins(rows):
    gains = benchpage.hybrid_gains(rows)
    assert len(gains) == 16
    assert recommended.HYBRID is benchpage.hybrid_by_default(gains) is True


def test_the_baseline_is_the_token_window_strategy_the_page_compares_against():
    assert recommended.BASELINE == benchpage.BASELINE[0] == knobs.BASELINE == "fixed_size"


def test_the_experiment_form_ticks_the_recommended_strategies_and_the_baseline_only():
    names = ["fixed_size", "recursive", "semantic", "parent_child", "cluster_semantic", "cluster_parent_child"]
    assert [name for name in names if knobs.ticked_first(name)] == ["fixed_size", "cluster_parent_child"]


def test_the_hybrid_box_of_both_pages_starts_as_recommended_while_the_api_default_stays_off():
    from chunklab.v1 import common_pb2

    with gr.Blocks():
        box = hybrid_checkbox("query-hybrid")
    assert (box.value, box.label, box.elem_id) == (True, "hybrid (BM25 + dense)", "query-hybrid")
    assert common_pb2.RetrievalOptions().hybrid is False


def test_the_query_page_selects_the_recommended_strategy_only_where_it_is_indexed():
    names = ["fixed_size", "semantic", "cluster_parent_child"]
    assert default_strategy(names, None, {"cluster_parent_child"}) == "cluster_parent_child"
    assert default_strategy(names, None, set()) == "fixed_size"
    assert default_strategy(names, "semantic", {"cluster_parent_child"}) == "semantic"


def test_the_cli_help_names_the_recommendation_as_flags(capsys):
    assert recommended.flags() == "--strategy cluster_parent_child --hybrid"
    with pytest.raises(SystemExit):
        cli.parser().parse_args(["experiment", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert (
        "first choice: cluster_parent_child with hybrid retrieval (recommended by docs/benchmarks.md): "
        "--strategy cluster_parent_child --hybrid, beside --strategy fixed_size as the baseline"
    ) in help_text
