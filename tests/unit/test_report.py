"""The evaluator's report rendered from hand-built messages (no stack): both views in one
script-free page, every outside text escaped, the technical view a row per run linked into the
documents' text written once (ADR 0068), and the charts as inline SVG from matplotlib."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html import unescape
from html.parser import HTMLParser

from google.protobuf.timestamp_pb2 import Timestamp
from markupsafe import escape

from chunklab.v1 import common_pb2, evaluator_pb2
from services.evaluator.reports import plots, report

EVIL = "<script>alert('x')</script> & <img src=x onerror=alert(1)>"
SVG = "{http://www.w3.org/2000/svg}"


def run(key: str, iou: float, tokens: int) -> evaluator_pb2.ExperimentRun:
    return evaluator_pb2.ExperimentRun(
        run_key=key,
        questions_done=1,
        questions_total=1,
        config_id=f"cfg-{key[-3:-1]}",
        expansion=common_pb2.EXPANSION_KIND_NEIGHBORS,
        mean_metrics=evaluator_pb2.RetrievalMetrics(
            recall=0.8, precision=0.25, iou=iou, questions_labelled=1, tokens_sent=tokens
        ),
    )


def experiment() -> evaluator_pb2.Experiment:
    config = evaluator_pb2.ExperimentConfig(
        name=f"storms {EVIL}",
        question_set_id="qs-1",
        retrieval_only=True,
        retrieval=common_pb2.RetrievalOptions(top_k=3, neighbor_prev=1, neighbor_next=1),
        strategies=[evaluator_pb2.StrategyGrid(strategy="fixed_size")],
    )
    return evaluator_pb2.Experiment(
        experiment_id="e-12345678",
        config=config,
        state=evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED,
        runs=[run("fixed_size[chunk_size=40]", 0.30, 120), run("fixed_size[chunk_size=80]", 0.25, 240)],
        provenance=evaluator_pb2.ExperimentProvenance(embedding_model="all-MiniLM-L6-v2", judge_model="none"),
        created_at=Timestamp(seconds=1_800_000_000),
        questions_done=1,
        questions_total=1,
    )


def question_set() -> evaluator_pb2.QuestionSet:
    question = evaluator_pb2.Question(
        question_id="q1",
        text=f"Why {EVIL}?",
        expected_answer="fog",
        references=[evaluator_pb2.Reference(document_id="d1", start_char=0, end_char=9, content=EVIL)],
    )
    return evaluator_pb2.QuestionSet(
        question_set_id="qs-1", name="storm-questions.jsonl", question_count=1, questions=[question]
    )


def result() -> evaluator_pb2.QuestionResult:
    def item(index: int, label: int, content: str, rank: int = 0) -> common_pb2.RetrievedChunk:
        chunk = common_pb2.Chunk(
            chunk_id=f"c{index}",
            chunk_index=index,
            content=content,
            document_id="d1",
            document_name="storms.md",
            token_count=7,
            start_char=10 * index,
            end_char=10 * index + len(content),
        )
        return common_pb2.RetrievedChunk(chunk=chunk, label=label, rank=rank)

    hit = item(2, common_pb2.CHUNK_LABEL_HIT, EVIL, rank=1)
    hit.score = 0.5
    before = item(1, common_pb2.CHUNK_LABEL_NEIGHBOR, "x" * 10)
    return evaluator_pb2.QuestionResult(
        question_id="q1",
        run_key="fixed_size[chunk_size=40]",
        answer=f"Because {EVIL}",
        extractive=True,
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
    assert page.tags.count("svg") == 1  # the managerial view's one plot: what each run finds against what it sends
    text = "".join(page.text)
    # Every outside text reads back as itself: the name (title, heading and the configuration's JSON),
    # the question, its reference, the answer, and the hit's text under Chunk texts, once.
    assert text.count(EVIL) == 7
    assert 'id="managerial"' in html and 'id="technical"' in html and 'href="#technical"' in html


ROW = {
    "run": "fixed_size[chunk_size=40]",
    "IoU": "0.0%",
    "recall": "100.0%",
    "precision": "0.0%",
    "hit rate": "0.0%",
    "MRR": "0.000",
    "tokens sent": "0",
    "chunks": "0",
}


def test_the_technical_view_is_a_row_per_run_linked_to_where_each_chunk_starts_in_its_document():
    html = report.render(experiment(), question_set(), [result()], evaluator_pb2.REPORT_VIEW_TECHNICAL)
    assert "<svg" not in html and "exact: every candidate scored, never an approximate HNSW graph" in html
    # The question (one run), its reference named by its file, and the run's row.
    assert f'Q1. Why {escape(EVIL)}? <span class="muted">(1 run)</span>' in html
    assert "reference · storms.md · chars 0–9" in html
    start = html.index('<table class="results">')
    table = ET.fromstring(html[start : html.index("</table>", start) + len("</table>")].replace("&", "&amp;"))
    head = [th.text for th in table.iter("th")]
    assert head[0] == "run" and head[-2:] == ["chunks", "hits in score order, and what each pulled in"]
    row = table.find("tbody/tr")
    cells = dict(zip(head, (td.text for td in row.findall("td"))))
    # The catalogue's order (ADR 0077); test_metric_columns checks that no measure of the row's groups is left out.
    assert [(h, cells[h]) for h in head if h in ROW] == list(ROW.items())
    (hit,) = row.findall("td/i")
    (link, neighbour) = hit.iter("a")
    assert (link.text, hit[0].tail, "".join(hit.find("small").itertext())) == ("2", " 0.500", " ↑1")
    # The links lead into the document's text: one stretch (chars 10-29, both chunks), each chunk's
    # anchor where it starts, naming it; the text is the chunks' own, markup and all, written once.
    texts = html[html.index('<h3 id="chunk-texts">') :]
    end = 20 + len(EVIL)
    anchors = re.findall(r'<a id="(t\d)" data-chunk="([^"]*)"></a>', texts)
    assert anchors == [
        (neighbour.get("href")[1:], "chunk · chunk 1 · chars 10–20 · 7 tokens"),
        (link.get("href")[1:], f"chunk · chunk 2 · chars 20–{end} · 7 tokens"),
    ]
    pre = texts[texts.index('<pre class="doc">') : texts.index("</pre>")]
    assert unescape(re.sub(r"<[^>]+>", "", pre)) == "x" * 10 + EVIL and f"chars 10–{end}" in texts
    # Only a chunk whose text is not its document's range gets a card of its own.
    assert "Chunks whose text is not a stretch of the document" not in texts


def test_a_report_comes_in_pieces_that_join_into_the_rendered_file():
    args = (experiment(), question_set(), [result()], evaluator_pb2.REPORT_VIEW_BOTH)
    whole = report.render(*args).encode()
    pieces = list(report.pieces(*args, 4096))
    assert len(pieces) == -(-len(whole) // 4096) > 3
    assert {len(p) for p in pieces[:-1]} == {4096} and 0 < len(pieces[-1]) <= 4096
    assert b"".join(pieces) == whole


def test_a_chart_is_an_inline_svg_with_its_title_and_no_stylesheet():
    svg = ET.fromstring(
        str(plots.scatter("Tokens <per> question", [("a $x$", 100.0, 0.5), ("b", 20.0, 0.2)], "x", "y"))
    )
    assert svg.tag == f"{SVG}svg" and svg.get("class") == "plot"
    assert svg.find(f"{SVG}title").text == "Tokens <per> question"
    texts = ["".join(t.itertext()) for t in svg.iter(f"{SVG}text")]
    assert {"a $x$", "b", "Tokens <per> question"} <= set(texts)
    assert not list(svg.iter(f"{SVG}style")) and all(g.get("id") is None for g in svg.iter(f"{SVG}g"))


# -- the 20-run scale -----------------------------------------------------------------------

WORDS = ("tide", "keeper", "lamp", "storm", "harbour", "beacon", "fog", "ledger")
DOC = " ".join(f"{WORDS[i % 8]}{i}" for i in range(6000))  # 30 chunks of 1,000 characters and more


def twenty_runs(questions: int = 12):
    """20 fixed_size runs (one configuration each, its chunks shifted by a character) of `questions`
    questions: each result's top 5 hits with ±1 neighbours, 1,000-character chunks, the same hits
    coming back across questions."""
    runs, results = [], []
    for r in range(20):
        key, config_id = f"fixed_size[chunk_size={250 + r}]", f"cfg-{r}"
        runs.append(
            evaluator_pb2.ExperimentRun(
                run_key=key,
                config_id=config_id,
                questions_done=questions,
                questions_total=questions,
                spec=common_pb2.StrategySpec(name="fixed_size"),
                expansion=common_pb2.EXPANSION_KIND_NEIGHBORS,
            )
        )
        chunks = [
            common_pb2.Chunk(
                chunk_id=f"{config_id}-{i}",
                chunk_index=i,
                document_id="d1",
                document_name="keeper-log.md",
                strategy="fixed_size",
                config_id=config_id,
                start_char=1000 * i + r,
                end_char=1000 * i + r + 1000,
                token_count=250,
                content=DOC[1000 * i + r : 1000 * i + r + 1000],
            )
            for i in range(30)
        ]
        for q in range(questions):
            tree, sent = common_pb2.ExpansionTree(), {}
            for rank, i in enumerate(sorted({(3 * q + 2 * k) % 28 + 1 for k in range(5)}), 1):
                hit = common_pb2.RetrievedChunk(
                    chunk=chunks[i], label=common_pb2.CHUNK_LABEL_HIT, rank=rank, score=1 - rank / 10
                )
                near = [
                    common_pb2.RetrievedChunk(chunk=chunks[j], label=common_pb2.CHUNK_LABEL_NEIGHBOR)
                    for j in (i - 1, i + 1)
                ]
                tree.hits.add(hit=hit, neighbors_prev=near[:1], neighbors_next=near[1:])
                sent.update({j: n for j, n in zip((i - 1, i + 1), near) if j not in sent})
                sent[i] = hit
            results.append(
                evaluator_pb2.QuestionResult(
                    question_id=f"q{q}",
                    run_key=key,
                    expansion_tree=tree,
                    retrieved_chunks=[sent[i] for i in sorted(sent)],
                    metrics=evaluator_pb2.RetrievalMetrics(
                        labelled=True,
                        recall=0.5,
                        iou=0.1,
                        chunks_sent=len(sent),
                        tokens_sent=250 * len(sent),
                        embedding_answer_similarity=-1,
                    ),
                )
            )
    exp = experiment()
    del exp.runs[:]
    exp.runs.extend(runs)
    qs = evaluator_pb2.QuestionSet(
        question_set_id="qs-1",
        name="keeper.jsonl",
        question_count=questions,
        questions=[
            evaluator_pb2.Question(
                question_id=f"q{q}",
                text=f"When is the lamp lit, {q}?",
                references=[
                    evaluator_pb2.Reference(
                        document_id="d1",
                        start_char=3000 * q,
                        end_char=3000 * q + 40,
                        content=DOC[3000 * q : 3000 * q + 40],
                    )
                ],
            )
            for q in range(questions)
        ],
    )
    return exp, qs, results


def test_a_20_run_report_is_collapsed_per_question_and_holds_each_documents_text_once():
    exp, qs, results = twenty_runs()
    html = report.render(exp, qs, results, evaluator_pb2.REPORT_VIEW_TECHNICAL)
    per_question = html[html.index("<h3>Per question</h3>") : html.index('<h3 id="chunk-texts">')]
    texts = html[html.index('<h3 id="chunk-texts">') :]
    # Every question is closed until clicked, with a row per run and a link per hit and per neighbour.
    assert per_question.count('<details class="q">') == 12 and "<details open" not in html
    assert per_question.count("<tr><td>fixed_size[") == 20 * 12
    assert per_question.count("<i><a href=") == 20 * 12 * 5
    # A result is a row: at most 1,000 bytes per run and question with ±1 neighbours (ADR 0047's line
    # and preview per hit took ~5,200; the texts under every hit ~40,000), and never a chunk's text.
    assert len(per_question.encode()) <= 1_000 * 20 * 12
    assert '<pre class="cl-content">' not in html and "<q>" not in html
    # The 20 configurations' 600 chunks overlap: their text is the document's, once (one stretch,
    # chars 0-30,019), with an anchor where each of them starts, each link leading to one.
    shown = {item.chunk.chunk_id for r in results for item in r.retrieved_chunks}
    anchors = re.findall(r'<a id="(t\d+)" data-chunk="', texts)
    assert len(anchors) == len(set(anchors)) == len(shown) == 20 * 30
    assert set(re.findall(r'href="#(t\d+)"', per_question)) == set(anchors)
    pre = texts[texts.index('<pre class="doc">') : texts.index("</pre>")]
    assert re.sub(r"<[^>]+>", "", pre) == DOC[:30_019] and texts.count('<pre class="doc">') == 1
    assert len(texts.encode()) <= 30_019 + len(shown) * 100  # an anchor of ~100 bytes per chunk, no card (~1,600)


def test_labels_of_points_close_together_are_moved_apart_in_the_cost_against_quality_chart():
    # markdown_structure and recursive at the same place, semantic just below sentence_window,
    # one point far away: its label stays where it is.
    at = [(100.0, 150.0), (100.0, 150.0), (300.0, 100.0), (305.0, 95.0), (500.0, 20.0)]
    shifts = plots.label_shifts(at, [False, False, True, True, True])
    assert shifts == [0.0, -12.0, 0.0, -7.0, 0.0]
    heights = [y + dy for (_, y), dy in zip(at, shifts)]
    assert heights[0] - heights[1] >= plots.LABEL_GAP_PT and heights[2] - heights[3] >= plots.LABEL_GAP_PT
