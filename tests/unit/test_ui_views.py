"""The front end's pure views for the answer, the boundary viewer, experiments,
compare, reports and freshness, with hand-built messages (no server, no
browser). The HTML is well-formed XML on purpose, so these tests walk it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from chunklab.client import SavedReport
from chunklab.v1 import chunker_pb2, common_pb2, evaluator_pb2, retriever_pb2
from chunklab.views.metric_format import MetricFormat
from frontend.forms import experiment_config, knobs
from frontend.pages.compare import compare_html
from frontend.pages.documents import boundaries
from frontend.pages.freshness import freshness_html
from frontend.pages.query import answer_html
from frontend.pages.reports import reports_html
from frontend.views import experiments_html
from services.chunker.strategies import REGISTRY
from services.evaluator.judging import metric_catalog

# What the pages read from EvaluatorService.ListMetrics.
METRICS = MetricFormat(metric_catalog.list_metrics().metrics)

EVIL = "<script>alert('x')</script> & <img src=x onerror=alert(1)>"
HIT, NEIGHBOR = common_pb2.CHUNK_LABEL_HIT, common_pb2.CHUNK_LABEL_NEIGHBOR


def parse(html: str) -> ET.Element:
    return ET.fromstring(f"<root>{html}</root>")


def text_of(element: ET.Element) -> str:
    return "".join(element.itertext())


# -- the answer ---------------------------------------------------------------


def answer_events(pieces: list[str], extractive: bool) -> list[evaluator_pb2.AnswerEvent]:
    hit = common_pb2.RetrievedChunk(chunk=common_pb2.Chunk(chunk_id="c1", content=EVIL), label=HIT, score=0.9, rank=1)
    context = evaluator_pb2.AnswerContext(
        query_id="q-1",
        retrieved_chunks=[hit],
        expansion_tree=common_pb2.ExpansionTree(hits=[common_pb2.ExpansionNode(hit=hit)]),
    )
    result = evaluator_pb2.AnswerResult(
        query_id="q-1",
        answer="".join(pieces),
        extractive=extractive,
        model="extractive" if extractive else "m-1",
        latency_ms=12,
        usage=common_pb2.TokenUsage(
            llm_calls=0 if extractive else 1, prompt_tokens=40, completion_tokens=5, estimated_cost_usd=0.0001
        ),
    )
    return [
        evaluator_pb2.AnswerEvent(context=context),
        *(evaluator_pb2.AnswerEvent(delta=p) for p in pieces),
        evaluator_pb2.AnswerEvent(result=result),
    ]


def test_the_answer_grows_with_each_piece_and_ends_labelled_by_who_wrote_it():
    stream = answer_html.AnswerStream()
    assert parse(answer_html.answer_html(stream)).find("div").get("data-state") == "retrieving"
    shown = []
    for event in answer_events(["The beam ", "was <hidden> ", "in fog."], extractive=False):
        stream.add(event)
        box = parse(answer_html.answer_html(stream)).find("div")
        shown.append((box.get("data-state"), text_of(box.find("div[@class='cl-answer-text']"))))
    assert shown == [
        ("writing", "…"),
        ("writing", "The beam "),
        ("writing", "The beam was <hidden> "),
        ("writing", "The beam was <hidden> in fog."),
        ("done", "The beam was <hidden> in fog."),
    ]
    box = parse(answer_html.answer_html(stream)).find("div")
    assert box.get("data-extractive") == "false" and "m-1" in text_of(box)
    assert "40 prompt + 5 completion tokens" in text_of(box)
    assert stream.query_id == "q-1"


def test_an_extractive_answer_says_so():
    stream = answer_html.AnswerStream()
    for event in answer_events(["Fog horns warned ships."], extractive=True):
        stream.add(event)
    box = parse(answer_html.answer_html(stream)).find("div")
    assert box.get("data-extractive") == "true"
    assert box.find(".//span[@class='cl-badge cl-badge-extractive']").text == "extractive"
    assert "no LLM" in text_of(box)


def test_an_answer_cut_short_keeps_its_text_and_says_why():
    stream = answer_html.AnswerStream()
    for event in answer_events(["Fog horns ", "warned"], extractive=False)[:2]:
        stream.add(event)
    box = parse(answer_html.answer_html(stream, error="evaluator service: UNAVAILABLE: <the model> failed")).find("div")
    assert box.get("data-state") == "failed"
    assert text_of(box.find("div[@class='cl-answer-text']")) == "Fog horns "
    assert "<the model> failed" in text_of(box.find("div[@class='cl-answer-head']"))


def test_feedback_thanks_and_shows_the_tally_escaped():
    feedback = evaluator_pb2.Feedback(query_id="q", thumbs_up=False, strategy="<b>x</b>")
    tally = [evaluator_pb2.FeedbackSummary(strategy="fixed_size", thumbs_up=3, thumbs_down=1)]
    root = parse(answer_html.feedback_html(feedback, tally))
    assert "not helpful" in text_of(root) and "<b>x</b>" in text_of(root)
    row = root.find(".//tr[@data-strategy='fixed_size']")
    assert [td.text for td in row.findall("td")] == ["fixed_size", "3", "1"]


# -- the boundary viewer -------------------------------------------------------

TEXT = "Alpha beta. Gamma delta. Epsilon <zeta>. Eta."


ROLES = {
    "chunk": common_pb2.CHUNK_ROLE_CHUNK,
    "sentence": common_pb2.CHUNK_ROLE_SENTENCE,
    "child": common_pb2.CHUNK_ROLE_CHILD,
    "parent": common_pb2.CHUNK_ROLE_PARENT,
}


def chunk(index: int, start: int, end: int, role: str = "chunk", parent_id: str = "", **extra) -> common_pb2.Chunk:
    c = common_pb2.Chunk(
        chunk_id=f"{role}-{index}",
        chunk_index=index,
        start_char=start,
        end_char=end,
        content=TEXT[start:end],
        token_count=end - start,
        role=ROLES[role],
        **extra,
    )
    if parent_id:
        c.parent_id = parent_id
    return c


def test_the_viewer_marks_every_chunk_alternating_with_overlaps_and_gaps():
    chunks = [chunk(0, 0, 17), chunk(1, 12, 32), chunk(2, 33, 41)]
    root = parse(boundaries.boundary_html(TEXT, chunks))
    viewer = root.find("div")
    assert viewer.get("data-layout") == "flat"
    # The text reads back whole, marks aside.
    pieces = [e for e in viewer.iter("span") if e.get("class") != "cl-bmark"]
    assert "".join(e.text or "" for e in pieces) == TEXT
    segs = [(e.get("class"), e.get("data-chunks"), e.text) for e in pieces]
    assert segs == [
        ("cl-seg cl-seg-0", "0", "Alpha beta. "),
        ("cl-seg cl-overlap", "0 1", "Gamma"),
        ("cl-seg cl-seg-1", "1", " delta. Epsilon"),
        ("cl-gap", None, " "),
        ("cl-seg cl-seg-0", "2", "<zeta>. "),
        ("cl-gap", None, "Eta."),
    ]
    marks = viewer.findall(".//span[@class='cl-bmark']")
    assert [(m.get("data-chunk-index"), m.text) for m in marks] == [
        ("0", "#0 · 17 tok"),
        ("1", "#1 · 20 tok"),
        ("2", "#2 · 8 tok"),
    ]
    assert "chars 12–32" in marks[1].get("title")


def test_the_viewer_frames_parents_with_their_children_inside():
    parents = [chunk(0, 0, 24, "parent"), chunk(1, 25, 45, "parent")]
    children = [
        chunk(0, 0, 11, "child", "parent-0"),
        chunk(1, 12, 24, "child", "parent-0"),
        chunk(2, 25, 45, "child", "parent-1"),
    ]
    root = parse(boundaries.boundary_html(TEXT, parents + children))
    frames = root.findall(".//div[@class='cl-bparent']")
    assert [f.get("data-parent-index") for f in frames] == ["0", "1"]
    assert "2 children" in text_of(frames[0].find("div[@class='cl-bparent-head']"))
    assert [m.get("data-chunk-index") for m in frames[0].findall(".//span[@class='cl-bmark']")] == ["0", "1"]
    assert "Epsilon <zeta>. Eta." in text_of(frames[1])


def test_the_viewer_tells_about_inexact_chunks_long_texts_and_enriched_content():
    moved = chunk(0, 0, 5)
    moved.content = "something else"
    enriched = chunk(1, 6, 11, enriched_content=f"Context: {EVIL}\nbeta.")
    html = boundaries.boundary_html(TEXT, [moved, enriched], max_chars=20)
    root = parse(html)
    notes = [text_of(n) for n in root.findall(".//p[@class='cl-note']")]
    assert notes[0] == f"Showing the first 20 of {len(TEXT)} characters."
    assert notes[1].startswith("1 chunks do not copy the text exactly")
    assert EVIL in text_of(root.find(".//details[@data-chunk-index='1']"))
    assert "<script>" not in html


def test_the_preview_summary_counts_parents_and_children_apart():
    response = chunker_pb2.PreviewChunksResponse(
        chunks=[chunk(0, 0, 24, "parent"), chunk(0, 0, 11, "child"), chunk(1, 12, 24, "child")],
        config_id="cfg",
        usage=common_pb2.TokenUsage(embedding_tokens=30),
    )
    line = text_of(parse(boundaries.preview_summary_html("parent_child", response)))
    assert "1 parents, 2 children" in line and "tokens min 11 · median 11.5 · max 12" in line
    assert "30 tokens embedded" in line


# -- experiments ---------------------------------------------------------------


def experiment(strategies=("fixed_size",), prev=1, nxt=2, model="all-MiniLM-L6-v2", name="<b>exp</b>"):
    config = evaluator_pb2.ExperimentConfig(
        name=name,
        retrieval=common_pb2.RetrievalOptions(neighbor_prev=prev, neighbor_next=nxt, top_k=5),
        strategies=[evaluator_pb2.StrategyGrid(strategy=s) for s in strategies],
    )
    expansion = REGISTRY.get(strategies[0]).expansion  # what the evaluator copies from StrategyInfo
    run = evaluator_pb2.ExperimentRun(
        run_key="fixed_size[chunk_size=48]",
        questions_done=2,
        questions_total=2,
        expansion=expansion,
        mean_metrics=evaluator_pb2.RetrievalMetrics(
            recall=1.0, precision=0.25, iou=0.2, questions_labelled=2, tokens_sent=300
        ),
    )
    return evaluator_pb2.Experiment(
        experiment_id="e-12345678",
        config=config,
        state=evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED,
        runs=[run],
        provenance=evaluator_pb2.ExperimentProvenance(embedding_model=model),
        questions_done=2,
        questions_total=2,
    )


def test_the_neighbours_badge_is_compact_and_muted_without_fixed_size():
    badge = parse(experiments_html.neighbours_badge(experiment())).find("span")
    assert (badge.text, badge.get("data-muted"), badge.get("class")) == ("±1/2", "false", "cl-nbadge")
    assert badge.get("title") == "neighbor_prev 1 / neighbor_next 2"
    muted = parse(experiments_html.neighbours_badge(experiment(("semantic",)))).find("span")
    assert (muted.text, muted.get("data-muted"), muted.get("class")) == ("±1/2", "true", "cl-nbadge cl-nbadge-muted")
    assert "had no effect" in muted.get("title")


def test_the_experiment_list_shows_badge_and_embedding_model_per_row():
    root = parse(experiments_html.experiments_table_html([experiment(), experiment(("semantic",), 0, 0, "e5")]))
    rows = root.findall(".//tr[@data-experiment-id]")
    assert [r.find(".//span[@data-muted]").text for r in rows] == ["±1/2", "±0/0"]
    assert [r.find(".//td[@class='cl-col-model']").itertext().__next__() for r in rows] == ["all-MiniLM-L6-v2", "e5"]
    assert text_of(rows[0].find("td")) == "<b>exp</b>"
    assert experiments_html.experiment_choices([experiment()])[0][1] == "e-12345678"


def test_a_dry_run_estimate_lists_the_figures_notes_and_planned_runs():
    estimate = evaluator_pb2.ExperimentEstimate(
        questions=3, runs=2, llm_calls=6, prompt_tokens=1200, estimated_cost_usd=0.0123, notes=["price of <m> unknown"]
    )
    planned = experiment()
    root = parse(experiments_html.estimate_html(estimate, planned))
    assert root.find(".//td[@data-fact='LLM calls']").text == "6"
    assert root.find(".//td[@data-fact='estimated cost']").text == "$0.0123"
    assert "price of <m> unknown" in text_of(root)
    assert root.find(".//ul[@class='cl-runs']/li/code").text == "fixed_size[chunk_size=48]"
    assert root.find(".//td[@data-fact='estimated time']").text == "not known yet (nothing measured to estimate it by)"
    assert root.find(".//div[@class='cl-warnings cl-estimate-warnings']") is None
    estimate.estimated_seconds = 200.0
    root = parse(experiments_html.estimate_html(estimate, planned))
    assert root.find(".//td[@data-fact='estimated time']").text == "about 3 min"
    # Split into processing and questions, with the runs that cannot run said first, above the figures.
    estimate.processing_seconds, estimate.questions_seconds = 150.0, 50.0
    estimate.index_sets_to_process, estimate.index_sets_reused = 6, 2
    estimate.warnings.append("contextual_retrieval cannot run: it needs an LLM to chunk")
    root = parse(experiments_html.estimate_html(estimate, planned))
    assert root.find(".//td[@data-fact='estimated time']").text == (
        "about 3 min (processing about 2 min, questions about 50 s)"
    )
    assert root.find(".//td[@data-fact='index sets to process']").text == "6 (2 already there, reused)"
    warnings = root.find(".//div[@class='cl-warnings cl-estimate-warnings']")
    assert "contextual_retrieval cannot run: it needs an LLM to chunk" in text_of(warnings)
    assert [experiments_html.duration(s) for s in (0.2, 42, 89.9, 3600, 4830)] == [
        "about 1 s",
        "about 42 s",
        "about 1 min",
        "about 1 h",
        "about 1 h 20 min",
    ]


def test_the_tracker_follows_progress_then_shows_the_finished_experiment():
    tracker = experiments_html.ExperimentTracker(METRICS)
    tracker.add(evaluator_pb2.ExperimentEvent(estimate=evaluator_pb2.ExperimentEstimate(questions=4)))
    tracker.add(
        evaluator_pb2.ExperimentEvent(
            progress=evaluator_pb2.ExperimentProgress(questions_done=1, questions_total=4, message="fixed_size: why?")
        )
    )
    assert tracker.fraction() == 0.25 and tracker.description() == "1 of 4 questions · fixed_size: why?"
    assert "1 of 4 questions" in text_of(parse(tracker.html()))
    # Three runs of 28 questions: the questions and the configurations are counted apart.
    tracker.estimate.runs = 3
    tracker.add(
        evaluator_pb2.ExperimentEvent(
            progress=evaluator_pb2.ExperimentProgress(questions_done=56, questions_total=84, message="recursive")
        )
    )
    assert "56 of 84 (28 questions × 3 configurations)" in text_of(parse(tracker.html()))
    tracker.add(evaluator_pb2.ExperimentEvent(experiment=experiment()))
    root = parse(tracker.html())
    assert tracker.fraction() == 1.0
    assert root.find("div").get("data-state") == "succeeded"
    cells = [text_of(td) for td in root.findall(".//tr[@data-run-key]/td")]
    assert cells[:5] == ["fixed_size[chunk_size=48]", "2/2", "20.0%", "100.0%", "25.0%"]  # IoU first, as the catalogue
    # No run has a judge score: those columns are left out rather than filled with "not measured".
    heads = [text_of(th) for th in root.findall(".//table[@class='cl-table cl-runs-table']/thead/tr/th")]
    assert "not measured" not in cells and "faithfulness" not in heads and "tokens sent" not in heads


def test_a_question_detail_shows_answer_judge_reasons_and_the_tree():
    hit = common_pb2.RetrievedChunk(
        chunk=common_pb2.Chunk(chunk_id="c", content=EVIL, chunk_index=4), label=HIT, score=0.5, rank=1
    )
    result = evaluator_pb2.QuestionResult(
        question_id="q1",
        question="Why <fog>?",
        run_key="r",
        answer="Because.",
        extractive=True,
        retrieved_chunks=[hit],
        expansion_tree=common_pb2.ExpansionTree(hits=[common_pb2.ExpansionNode(hit=hit)]),
        metrics=evaluator_pb2.RetrievalMetrics(labelled=True, recall=0.5, embedding_answer_similarity=-1),
        judge=evaluator_pb2.JudgeScores(
            judge_model="j",
            faithfulness=evaluator_pb2.Score(measured=True, value=8, reason="quotes <the> text"),
            hallucination=evaluator_pb2.Score(measured=True, value=0, reason="none"),
        ),
    )
    html = experiments_html.question_detail_html(result, METRICS)
    root = parse(html)
    assert root.find(".//h4").text == "Why <fog>?"
    assert root.find(".//div[@class='cl-answer']").get("data-extractive") == "true"
    assert [text_of(td) for td in root.find(".//tr[@data-measure='faithfulness']")] == [
        "faithfulness",
        "8 / 10",
        "quotes <the> text",
    ]
    assert text_of(root.find(".//tr[@data-measure='hallucination']")).startswith("hallucinationno")
    assert text_of(root.find(".//tr[@data-measure='context_relevance']/td")) == "not measured"
    assert root.find(".//li[@class='cl-node']/div[@data-role='hit']").get("data-chunk-index") == "4"
    assert "<script>" not in html and EVIL in text_of(root)


def test_a_question_detail_names_the_rank_measures_deeper_than_the_run_s_top_k():
    # A top-5 run: recall@10 and NDCG@10 were not taken (ADR 0052).
    metrics = evaluator_pb2.RetrievalMetrics(
        labelled=True,
        recall_at_1=0.0,
        recall_at_3=0.5,
        recall_at_5=1.0,
        ndcg=0.6131,
        map=0.4167,
        embedding_answer_similarity=-1,
    )
    root = parse(experiments_html.question_detail_html(evaluator_pb2.QuestionResult(metrics=metrics), METRICS))
    measures = text_of(root.find(".//div[@class='cl-measures']")).split(" · ")
    assert "recall@1 0.0%, recall@3 50.0%, recall@5 100.0%, NDCG@k 0.613, MAP 0.417" in measures
    assert "not measured (deeper than the run's top_k): recall@10, NDCG@10" in measures


# -- the experiment form -------------------------------------------------------


def form() -> knobs.StrategyForm:
    info = chunker_pb2.StrategyInfo(
        name="fixed_size",
        knobs=[
            chunker_pb2.KnobSpec(name="chunk_size", type=chunker_pb2.KNOB_TYPE_INT),
            chunker_pb2.KnobSpec(name="threshold", type=chunker_pb2.KNOB_TYPE_DOUBLE),
            chunker_pb2.KnobSpec(name="level", type=chunker_pb2.KNOB_TYPE_CHOICE, choices=["article", "section"]),
            chunker_pb2.KnobSpec(name="window", type=chunker_pb2.KNOB_TYPE_INT, query_time=True),
        ],
    )
    (with_window,) = knobs.strategy_forms([info], include_query_time=True)
    assert [f.name for f in knobs.strategy_forms([info])[0].fields] == ["chunk_size", "threshold", "level"]
    return with_window


def test_knob_grids_are_typed_from_the_knob_specs():
    grid = experiment_config.strategy_grid(form(), ["250, 500", "", "article,section", "1"])
    assert [(g.knob, [v.WhichOneof("kind") for v in g.values]) for g in grid.grid] == [
        ("chunk_size", ["int_value", "int_value"]),
        ("level", ["string_value", "string_value"]),
        ("window", ["int_value"]),
    ]
    assert [v.int_value for v in grid.grid[0].values] == [250, 500]
    assert experiment_config.run_count([grid, evaluator_pb2.StrategyGrid(strategy="semantic")]) == 5
    with pytest.raises(ValueError, match="fixed_size.chunk_size takes a whole number"):
        experiment_config.strategy_grid(form(), ["2.5", "", "", ""])
    with pytest.raises(ValueError, match="^fixed_size.level must be one of article, section, got 'chapter'$"):
        experiment_config.strategy_grid(form(), ["", "", "chapter", ""])
    with pytest.raises(ValueError, match="^fixed_size.chunk_size takes a whole number, got 'many'$"):
        experiment_config.strategy_grid(form(), ["many", "", "", ""])


def test_the_config_carries_every_setting_and_endpoints_only_when_given():
    grid = evaluator_pb2.StrategyGrid(strategy="fixed_size")
    config = experiment_config.experiment_config(
        name=" run ",
        question_set_id="qs",
        grids=[grid],
        top_k=3,
        neighbor_prev=1,
        neighbor_next=1,
        window=None,
        answer_model=experiment_config.endpoint("", "extractive", ""),
        judge_model=experiment_config.endpoint("", "", ""),
        document_ids=["d1"],
        retrieval_only=True,
    )
    assert (config.name, config.retrieval.top_k, config.retrieval.neighbor_prev, config.retrieval.neighbor_next) == (
        "run",
        3,
        1,
        1,
    )
    assert not config.retrieval.HasField("window") and config.retrieval_only
    assert list(config.retrieval.filter.document_ids) == ["d1"]
    assert config.answer_model.model == "extractive" and not config.HasField("judge_model")
    with pytest.raises(ValueError, match="question set"):
        experiment_config.experiment_config(name="", question_set_id="", grids=[grid])
    with pytest.raises(ValueError, match="at least one strategy"):
        experiment_config.experiment_config(name="", question_set_id="qs", grids=[])
    assert experiment_config.optional_whole("  ", "window") is None
    assert experiment_config.optional_whole("0", "window") == 0
    with pytest.raises(ValueError, match="window takes a whole number"):
        experiment_config.optional_whole("1.5", "window")
    assert experiment_config.document_mapping("sotu = d-1\n\nwiki=d-2") == {"sotu": "d-1", "wiki": "d-2"}
    with pytest.raises(ValueError, match="line 1: write corpus_id=document_id"):
        experiment_config.document_mapping("sotu")


# -- compare -------------------------------------------------------------------


def comparison(warnings=("neighbour expansion differs (a: ±1/1, b: ±0/0); <why>",)):
    first, second = experiment(name="a"), experiment(("semantic",), 0, 0, "e5", name="b")
    second.experiment_id = "e-2"
    diffs = [
        evaluator_pb2.MetricDifference(
            metric="iou",
            baseline_run_key="r0",
            run_key="r1",
            difference=0.05,
            ci_low=0.01,
            ci_high=0.09,
            shared_questions=20,
            baseline_experiment_id="e-12345678",
            experiment_id="e-2",
            baseline_mean=0.2,
            mean=0.25,
        ),
        evaluator_pb2.MetricDifference(
            metric="tokens_sent",
            baseline_run_key="r0",
            run_key="r1",
            difference=-40,
            ci_low=-60,
            ci_high=-20,
            shared_questions=20,
            baseline_experiment_id="e-12345678",
            experiment_id="e-2",
            baseline_mean=300,
            mean=260,
        ),
        evaluator_pb2.MetricDifference(
            metric="recall",
            baseline_run_key="r0",
            run_key="r1",
            difference=0.01,
            ci_low=-0.02,
            ci_high=0.04,
            shared_questions=20,
            baseline_experiment_id="e-12345678",
            experiment_id="e-2",
            baseline_mean=0.9,
            mean=0.91,
        ),
    ]
    return evaluator_pb2.CompareExperimentsResponse(
        experiments=[first, second], warnings=list(warnings), differences=diffs
    )


def test_compare_puts_warnings_first_badges_on_every_column_and_cis_per_metric():
    html = compare_html.compare_html(comparison(), METRICS)
    root = parse(html)
    compare = root.find("div")
    assert compare[0].get("class") == "cl-warnings" and compare[0].get("role") == "alert"
    assert "<why>" in text_of(compare[0])
    heads = root.findall(".//table[@class='cl-table cl-compare-columns']/thead/tr/th[@data-experiment-id]")
    assert [(h.find("span[@data-muted]").text, h.find("span[@data-muted]").get("data-muted")) for h in heads] == [
        ("±1/2", "false"),
        ("±0/0", "true"),
    ]
    assert [h.find("span[@class='cl-mbadge']").text for h in heads] == ["all-MiniLM-L6-v2", "e5"]
    metrics = [d.get("data-metric") for d in root.findall(".//details[@class='cl-metric']")]
    assert metrics == ["iou", "recall", "tokens_sent"]
    iou = root.find(".//tr[@data-metric='iou']")
    assert [text_of(td) for td in iou][1:] == [
        "20.0%",
        "25.0%",
        "+5.0 pts",
        "[+1.0 pts, +9.0 pts]",
        "20",
        "higher (better)",
    ]
    assert root.find(".//tr[@data-metric='tokens_sent']").get("data-verdict") == "lower (better)"
    assert root.find(".//tr[@data-metric='recall']").get("data-verdict") == "no clear difference"
    assert "script" not in html.lower()


def test_compare_without_warnings_or_differences_says_so():
    response = comparison(warnings=())
    del response.differences[:]
    root = parse(compare_html.compare_html(response, METRICS))
    assert "no warnings" in text_of(root.find(".//div[@class='cl-warnings cl-warnings-none']"))
    assert "No differences to show" in text_of(root)


def test_the_plot_frame_holds_each_runs_interval_in_the_units_of_the_tables():
    frame = compare_html.differences_frame(comparison(), METRICS)
    assert list(frame.columns) == ["metric", "run", "point", "difference from the baseline"]
    rows = [tuple(r) for r in frame.itertuples(index=False)]
    assert [r[:3] for r in rows[:3]] == [
        ("iou", "B · r1", "95% CI low"),
        ("iou", "B · r1", "difference"),
        ("iou", "B · r1", "95% CI high"),
    ]
    assert [r[3] for r in rows] == pytest.approx([1.0, 5.0, 9.0, -2.0, 1.0, 4.0, -60, -40, -20])
    assert [r[0] for r in rows[3::3]] == ["recall", "tokens_sent"]
    assert METRICS.axis_unit("iou") == "percentage points" and METRICS.axis_unit("mrr") == "score"
    # The plots name a run by its experiment's letter, which each column's heading shows by its title.
    headings = parse(compare_html.compare_html(comparison(), METRICS)).findall(".//th[@data-letter]")
    assert [(h.get("data-experiment-id"), h.get("data-letter")) for h in headings] == [
        ("e-12345678", "A"),
        ("e-2", "B"),
    ]
    assert text_of(headings[1]).startswith("B b")
    empty = comparison()
    del empty.differences[:]
    assert compare_html.differences_frame(empty, METRICS).empty


def test_every_page_formats_and_judges_a_metric_as_the_catalogue_says():
    """One owner (ADR 0039): MRR reads 0.756 wherever it is shown, fractions as
    percentages, and fewer tokens or hallucinations are the better direction."""
    assert (METRICS.value("mrr", 0.756), METRICS.value("recall", 0.777), METRICS.value("tokens_sent", 1234)) == (
        "0.756",
        "77.7%",
        "1,234",
    )
    assert (METRICS.difference("iou", 0.002), METRICS.difference("mrr", -0.01)) == ("+0.2 pts", "-0.010")
    assert METRICS.verdict("hallucination", -0.2, -0.1) == "lower (better)"
    assert METRICS.verdict("faithfulness", -0.2, -0.1) == "lower (worse)"
    assert METRICS.verdict("iou", -0.01, 0.02) == "no clear difference"
    assert METRICS.order[:3] == ["iou", "recall", "precision"] and METRICS.label("iou_hits") == "IoU (hits only)"


# -- reports -------------------------------------------------------------------


def test_a_report_opens_in_a_sandboxed_frame_from_its_file_under_a_safe_name(tmp_path):
    name = reports_html.safe_file_name("../../etc/x y<>.html", "technical")
    assert name == "x-y-technical.html"
    header = evaluator_pb2.Report(file_name="../../etc/x y<>.html")
    saved = SavedReport(tmp_path / name, header, size_bytes=3_500_000, pieces=4)
    html = reports_html.report_frame_html(saved, "technical", f"chunklab-reports/{'ab' * 16}/{name}")
    root = parse(html)
    frame = root.find("iframe")
    assert (frame.get("sandbox"), frame.get("data-view"), frame.get("title")) == ("", "technical", name)
    assert frame.get("src") == f"chunklab-reports/{'ab' * 16}/{name}" and frame.get("srcdoc") is None
    assert "".join(root.find("div").itertext()) == f"{name} · 3.3 MiB · open in its own tab"
    assert set(reports_html.VIEWS) == {"managerial", "technical", "both"}


# -- freshness -----------------------------------------------------------------


def stamp(seconds: int) -> Timestamp:
    return Timestamp(seconds=seconds)


def test_windows_are_listed_by_collection_with_unlimited_spelt_out():
    windows = [
        retriever_pb2.FreshnessWindow(collection="news", max_age_days=7),
        retriever_pb2.FreshnessWindow(collection="default", max_age_days=0),
        retriever_pb2.FreshnessWindow(collection="hr", max_age_days=1),
    ]
    html = freshness_html.windows_html(windows)
    rows = parse(html).findall(".//tr[@data-collection]")
    # news and default as ChunkLab ships them are its presets, said so; hr at 1 day (preset 90) was changed.
    assert [[td.text for td in r] for r in rows] == [
        ["default", "unlimited", "ChunkLab's preset"],
        ["hr", "1 day", "changed"],
        ["news", "7 days", "ChunkLab's preset"],
    ]
    assert "a preset for a collection you never use does nothing" in " ".join(html.split())


def test_a_sweep_says_what_goes_and_a_dry_run_that_nothing_changed():
    gone = retriever_pb2.SweptDocument(
        document_id="d-1", document_name="<old>.md", collection="news", published_at=stamp(1_700_000_000), chunks=12
    )
    dry = parse(freshness_html.sweep_html(retriever_pb2.SweepResponse(documents=[gone], dry_run=True))).find("div")
    assert dry.get("data-kind") == "dry-run" and "1 document (12 chunks)" in text_of(dry)
    assert "Nothing has changed yet" in text_of(dry)
    assert [td.text for td in dry.find(".//tr[@data-document-id='d-1']")][:4] == [
        "<old>.md",
        "news",
        "2023-11-14",
        "12",
    ]
    empty = parse(freshness_html.sweep_html(retriever_pb2.SweepResponse(dry_run=True))).find("div")
    assert text_of(empty).strip() == (
        "Dry run: nothing is outside its freshness window; a sweep would archive nothing, so Sweep now stays off."
    )
    real = parse(freshness_html.sweep_html(retriever_pb2.SweepResponse(documents=[gone], chunks_archived=12))).find(
        "div"
    )
    assert real.get("data-kind") == "swept" and "12 chunks left the index" in text_of(real)
    nothing = parse(freshness_html.sweep_html(retriever_pb2.SweepResponse(dry_run=True))).find("div")
    assert nothing.get("data-count") == "0" and "would archive nothing" in text_of(nothing)


def test_as_of_dates_and_restore_messages():
    assert freshness_html.parse_as_of("") is None
    midnight = int(datetime(2030, 1, 31, tzinfo=UTC).timestamp())
    assert freshness_html.parse_as_of("2030-01-31").seconds == midnight
    assert freshness_html.parse_as_of("2030-01-31T12:00:00+02:00").seconds == midnight + 10 * 3600
    with pytest.raises(ValueError, match="a date such as 2030-01-31"):
        freshness_html.parse_as_of("next week")
    text, kind = freshness_html.restore_message("a.md", retriever_pb2.RestoreDocumentResponse(chunks_restored=3))
    assert (text, kind) == ("Restored a.md: 3 chunks back in the index.", "ok")
    text, kind = freshness_html.restore_message(
        "a.md", retriever_pb2.RestoreDocumentResponse(chunks_restored=1, outside_freshness_window=True)
    )
    assert kind == "info" and "still outside its collection's freshness window" in text


def test_a_bulk_load_shows_each_documents_outcome_and_how_far_it_is():
    from frontend.views.formatting import bulk_load_html

    load = chunker_pb2.BulkLoad(bulk_load_id="abcdef0123456789", jobs_total=4, broker="Redis at redis:6379/0")
    ok = load.results.add(job_id="1", document_id="d1", deliveries=1)
    ok.result.strategies_completed.add(strategy="fixed_size", chunk_count=12)
    partly = load.results.add(job_id="2", document_id="d2", deliveries=2)
    partly.result.strategies_completed.add(strategy="fixed_size", chunk_count=3)
    partly.result.strategies_failed.add(strategy="contextual", reason="no LLM <configured>")
    load.results.add(job_id="3", document_id="d3", deliveries=1, error="no document d3")
    html = bulk_load_html(load, {"d1": "notes.md", "d2": "guide.md"})
    assert 'data-state="running" data-done="3" data-total="4"' in html
    assert "3 of 4 documents done (through Redis at redis:6379/0)" in html and "Bulk load abcdef01" in html
    assert '<li data-document="d1" data-outcome="ok">notes.md: fixed_size 12 chunks</li>' in html
    assert (
        'data-outcome="failed">guide.md: fixed_size 3 chunks; contextual failed: no LLM &lt;configured&gt; '
        "(delivered 2 times)</li>"
    ) in html
    assert '<li data-document="d3" data-outcome="failed">d3: no document d3</li>' in html


def test_recent_bulk_loads_read_as_a_table_newest_first():
    from frontend.views.formatting import bulk_loads_html

    assert "No bulk load yet" in bulk_loads_html([])
    running = chunker_pb2.BulkLoad(
        bulk_load_id="1" * 32,
        jobs_total=5,
        jobs_finished=2,
        jobs_failed=1,
        broker="embedded queue (/data/broker/queue.sqlite3)",
        jobs_queued=3,
    )
    running.submitted_at.FromSeconds(1_800_000_000)
    done = chunker_pb2.BulkLoad(bulk_load_id="2" * 32, jobs_total=2, jobs_finished=2, cancelled=True)
    html = bulk_loads_html([running, done])
    assert html.startswith("<p>Through embedded queue; 3 jobs waiting or running.</p>")
    assert (
        f'<tr data-bulk-load="{"1" * 32}" data-state="running"><td><code>11111111</code></td>'
        "<td>2027-01-15 08:00 UTC</td><td>2 / 5</td><td>1</td><td>running</td></tr>"
    ) in html
    assert f'data-bulk-load="{"2" * 32}" data-state="done"' in html and "<td>done (cancelled)</td>" in html
    assert html.index("1" * 32) < html.index("2" * 32)


def held_out(experiment_: evaluator_pb2.Experiment) -> evaluator_pb2.Experiment:
    experiment_.validation.CopyFrom(
        evaluator_pb2.WinnerValidation(
            mode=evaluator_pb2.VALIDATION_MODE_HOLDOUT,
            seed=7,
            metric="iou",
            selection_questions=10,
            confirmation_questions=10,
            winner_run_key="r1",
            all_questions_winner_run_key="r0",
            scores=[
                evaluator_pb2.ValidatedScore(
                    metric="iou", selection_mean=0.3, confirmation_mean=0.22, ci_low=0.18, ci_high=0.26, all_mean=0.26
                )
            ],
        )
    )
    return experiment_


def test_the_experiment_and_compare_pages_name_the_winner_and_how_it_held_up():
    html = experiments_html.experiment_summary_html(held_out(experiment()), METRICS)
    winner = parse(html).find(".//div[@class='cl-winner']")
    assert text_of(winner.find("p")).startswith(
        "r1 was chosen on 10 of the 20 questions (seed 7) and scores IoU 22.0% (95% interval 18.0% to 26.0%) "
        "on the other 10, against 30.0% on the questions that chose it. On every question at once r0 wins"
    )
    assert [text_of(td) for td in winner.find(".//tbody/tr")] == ["IoU", "30.0%", "22.0% (18.0% to 26.0%)", "26.0%"]
    response = comparison()
    held_out(response.experiments[1])
    cells = parse(compare_html.compare_html(response, METRICS)).findall(".//td[@class='cl-winner']")
    assert text_of(cells[0]) == "–" and text_of(cells[1]).startswith("r1 was chosen on 10 of the 20 questions")


def test_the_experiment_form_sends_the_chosen_validation_and_its_seed():
    grid = evaluator_pb2.StrategyGrid(strategy="fixed_size")
    choice = next(k for k, v in experiment_config.VALIDATIONS.items() if v == evaluator_pb2.VALIDATION_MODE_K_FOLD)
    config = experiment_config.experiment_config(
        name="", question_set_id="qs", grids=[grid], validation=experiment_config.validation(choice, 12)
    )
    assert (config.validation.mode, config.validation.seed) == (evaluator_pb2.VALIDATION_MODE_K_FOLD, 12)
    assert experiment_config.validation(next(iter(experiment_config.VALIDATIONS)), None).mode == (
        evaluator_pb2.VALIDATION_MODE_HOLDOUT
    )
    with pytest.raises(ValueError, match="Choose how the winner is checked"):
        experiment_config.validation("best of three", 0)


def test_a_running_experiment_opened_mid_run_says_what_it_is_doing():
    running = experiment()
    running.state = evaluator_pb2.EXPERIMENT_STATE_RUNNING
    running.progress.CopyFrom(
        evaluator_pb2.ExperimentProgress(
            experiment_id=running.experiment_id,
            message="processing storms.md with fixed_size[chunk_size=48] (1/2)",
            document_name="storms.md",
            documents_done=1,
            documents_total=2,
        )
    )
    html = experiments_html.experiment_summary_html(running, METRICS)
    assert "now processing storms.md with fixed_size[chunk_size=48] (1/2)" in text_of(parse(html))
    assert "now " not in text_of(parse(experiments_html.experiment_summary_html(experiment(), METRICS)))
