"""The evaluator's report rendered from hand-built messages (no stack): both views in one
script-free page, every outside text escaped, the chunks drawn by the UI's own template and
the charts as inline SVG from matplotlib."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from html.parser import HTMLParser

from google.protobuf.timestamp_pb2 import Timestamp

from chunklab.v1 import common_pb2, evaluator_pb2
from services.evaluator import plots, report

EVIL = "<script>alert('x')</script> & <img src=x onerror=alert(1)>"
SVG = "{http://www.w3.org/2000/svg}"


def run(key: str, iou: float, tokens: int) -> evaluator_pb2.ExperimentRun:
    return evaluator_pb2.ExperimentRun(
        run_key=key, questions_done=1, questions_total=1, config_id=f"cfg-{key[-3:-1]}",
        expansion=common_pb2.EXPANSION_KIND_NEIGHBORS,
        mean_metrics=evaluator_pb2.RetrievalMetrics(recall=0.8, precision=0.25, iou=iou, questions_labelled=1,
                                                    tokens_sent=tokens),
    )


def experiment() -> evaluator_pb2.Experiment:
    config = evaluator_pb2.ExperimentConfig(
        name=f"storms {EVIL}", question_set_id="qs-1", retrieval_only=True,
        retrieval=common_pb2.RetrievalOptions(top_k=3, neighbor_prev=1, neighbor_next=1),
        strategies=[evaluator_pb2.StrategyGrid(strategy="fixed_size")],
    )
    return evaluator_pb2.Experiment(
        experiment_id="e-12345678", config=config, state=evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED,
        runs=[run("fixed_size[chunk_size=40]", 0.30, 120), run("fixed_size[chunk_size=80]", 0.25, 240)],
        provenance=evaluator_pb2.ExperimentProvenance(embedding_model="all-MiniLM-L6-v2", judge_model="none"),
        created_at=Timestamp(seconds=1_800_000_000), questions_done=1, questions_total=1,
    )


def question_set() -> evaluator_pb2.QuestionSet:
    question = evaluator_pb2.Question(
        question_id="q1", text=f"Why {EVIL}?", expected_answer="fog",
        references=[evaluator_pb2.Reference(document_id="d1", start_char=0, end_char=9, content=EVIL)],
    )
    return evaluator_pb2.QuestionSet(question_set_id="qs-1", name="storm-questions.jsonl", question_count=1,
                                     questions=[question])


def result() -> evaluator_pb2.QuestionResult:
    def item(index: int, label: int, content: str, rank: int = 0) -> common_pb2.RetrievedChunk:
        chunk = common_pb2.Chunk(chunk_id=f"c{index}", chunk_index=index, content=content, document_name="storms.md",
                                 token_count=7, start_char=10 * index, end_char=10 * index + 9)
        return common_pb2.RetrievedChunk(chunk=chunk, label=label, rank=rank)

    hit = item(2, common_pb2.CHUNK_LABEL_HIT, EVIL, rank=1)
    hit.score = 0.5
    before = item(1, common_pb2.CHUNK_LABEL_NEIGHBOR, "x" * 1300)
    return evaluator_pb2.QuestionResult(
        question_id="q1", run_key="fixed_size[chunk_size=40]", answer=f"Because {EVIL}", extractive=True,
        retrieved_chunks=[before, hit],
        expansion_tree=common_pb2.ExpansionTree(hits=[common_pb2.ExpansionNode(hit=hit, neighbors_prev=[before])]),
        metrics=evaluator_pb2.RetrievalMetrics(labelled=True, recall=1.0, embedding_answer_similarity=-1),
    )


class Elements(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs

    def handle_data(self, data):
        self.text.append(data)


def parsed(html: str) -> Elements:
    elements = Elements()
    elements.feed(html)
    return elements


def test_the_report_holds_both_views_escaped_and_without_script():
    html = report.render(experiment(), question_set(), [result()])
    assert html.startswith("<!DOCTYPE html>")
    page = parsed(html)
    assert "script" not in page.tags and "img" not in page.tags
    assert not any(name.startswith("on") for name, _ in page.attrs)
    assert page.tags.count("style") == 1 and page.tags.count("title") == 1 + page.tags.count("svg")
    assert page.tags.count("svg") == 3  # recall/precision/IoU, tokens, cost against quality
    text = "".join(page.text)
    # Every outside text reads back as itself: the name (title, heading and the configuration's JSON),
    # the question, its reference, the answer, and the hit in the tree and in the flat list.
    assert text.count(EVIL) == 8
    assert 'id="managerial"' in html and 'id="technical"' in html and 'href="#technical"' in html


def test_the_verdict_names_the_winner_its_margin_and_its_token_cost():
    view = report.verdict(experiment().runs)
    assert (view["winner"], view["value"], view["second"], view["second_value"], view["gap"]) == (
        "fixed_size[chunk_size=40]", "30.0%", "fixed_size[chunk_size=80]", "25.0%", "5.0 pts")
    html = report.render(experiment(), question_set(), [result()], evaluator_pb2.REPORT_VIEW_MANAGERIAL)
    line = "".join(parsed(html[html.index('<p class="verdict">'):html.index("</p>", html.index('"verdict"'))]).text)
    assert line == ("fixed_size[chunk_size=40] wins on IoU of the context with the references with 30.0%, ahead of "
                    "fixed_size[chunk_size=80] (25.0%) by 5.0 pts; it sends 120 tokens per question to the LLM "
                    "against 240 (recall 80.0%, precision 25.0%).")
    assert 'id="technical"' not in html
    unmeasured = evaluator_pb2.ExperimentRun(run_key="r", questions_done=1, mean_metrics=evaluator_pb2.RetrievalMetrics(
        embedding_answer_similarity=-1))
    assert report.verdict([unmeasured])["text"].startswith("No quality measure is available")
    assert report.verdict([])["winner"] is None


def test_the_technical_view_draws_chunks_with_the_uis_tree_cut_for_the_report():
    html = report.render(experiment(), question_set(), [result()], evaluator_pb2.REPORT_VIEW_TECHNICAL)
    assert "<svg" not in html and "exact: every candidate scored, never an approximate HNSW graph" in html
    section = html[html.index('<ol class="cl-tree-hits">'):]
    tree = ET.fromstring(section[:section.index("</ol>") + len("</ol>")])
    node = tree.find("li[@class='cl-node']")
    assert node.get("data-rank") == "1"
    assert node.find("div[@data-role='hit']").get("data-chunk-index") == "2"
    (neighbour,) = node.findall(".//ul[@data-role='neighbors_prev']/li")
    assert neighbour.find("pre").text == "x" * 1200 + "…"
    assert "text cut for the report" in "".join(neighbour.itertext())


def test_a_chart_is_an_inline_svg_with_its_title_and_no_stylesheet():
    svg = ET.fromstring(str(plots.bar_chart("Tokens <per> question", ["a $x$", "b"], {"tokens": [10.0, 20.0]},
                                            fmt=lambda v: f"{v:,.0f}")))
    assert svg.tag == f"{SVG}svg" and svg.get("class") == "plot"
    assert svg.find(f"{SVG}title").text == "Tokens <per> question"
    texts = ["".join(t.itertext()) for t in svg.iter(f"{SVG}text")]
    assert {"a $x$", "b", "10", "20", "Tokens <per> question"} <= set(texts)
    assert not list(svg.iter(f"{SVG}style")) and all(g.get("id") is None for g in svg.iter(f"{SVG}g"))
    points = ET.fromstring(str(plots.scatter("Cost", [("run a", 100.0, 0.5)], "tokens", "IoU")))
    assert "run a" in ["".join(t.itertext()) for t in points.iter(f"{SVG}text")]
