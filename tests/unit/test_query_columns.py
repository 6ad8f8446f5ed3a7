"""Query side by side on hand-built retrievals: a column per configuration, the
question's reference excerpts marked at their exact characters, each column's
recall and IoU as the evaluator computes them, and a failing column that says
why in its own column only (no server: a stand-in answers Retrieve)."""

from __future__ import annotations

import threading
import xml.etree.ElementTree as ET

import grpc
import pytest

from chunklab.client import ClientError
from chunklab.v1 import common_pb2, evaluator_pb2, retriever_pb2
from chunklab.views.metric_format import MetricFormat
from frontend.pages.query import query_columns
from frontend.pages.query.query_columns import Configuration
from services.evaluator.judging import metric_catalog
from services.evaluator.judging.scoring import retrieval_metrics
from tests.support.fake_stubs import FakeRpcError

HIT = common_pb2.CHUNK_LABEL_HIT
TEXT = (
    "Lamps burned oil. Fog horns warned ships when the beam was hidden. "
    "Flags showed two black cones for a hurricane. Radio came later."
)
FORMATS = MetricFormat(metric_catalog.list_metrics().metrics)


def hit(start: int, end: int, rank: int, score: float, index: int) -> common_pb2.RetrievedChunk:
    chunk = common_pb2.Chunk(
        chunk_id=f"d1-{start}",
        document_id="d1",
        document_name="signals.md",
        strategy="fixed_size",
        chunk_index=index,
        content=TEXT[start:end],
        token_count=(end - start) // 4,
        start_char=start,
        end_char=end,
    )
    return common_pb2.RetrievedChunk(chunk=chunk, label=HIT, rank=rank, score=score)


def response(*hits: common_pb2.RetrievedChunk, total_ms: float) -> retriever_pb2.RetrieveResponse:
    in_order = sorted(hits, key=lambda h: h.chunk.start_char)
    tree = common_pb2.ExpansionTree(hits=[common_pb2.ExpansionNode(hit=h) for h in hits])
    return retriever_pb2.RetrieveResponse(
        retrieved_chunks=in_order, expansion_tree=tree, timings=retriever_pb2.RetrieveTimings(total_ms=total_ms)
    )


# Small chunks: "Lamps burned oil. Fog horns warned ships" and "Radio came later.".
SMALL = response(hit(0, 40, 1, 0.81, 0), hit(113, 130, 2, 0.42, 3), total_ms=12.4)
# One large chunk from "Fog horns" to "hurricane".
LARGE = response(hit(18, 111, 1, 0.77, 1), total_ms=30.6)
QUESTION = evaluator_pb2.Question(
    question_id="q1",
    text="What did ships see and hear in a storm?",
    references=[
        evaluator_pb2.Reference(document_id="d1", start_char=28, end_char=65, content=TEXT[28:65]),
        evaluator_pb2.Reference(document_id="d1", start_char=80, end_char=111, content=TEXT[80:111]),
    ],
)
CONFIGURATIONS = [
    Configuration("fixed_size", "small", "fixed_size · chunk_size=10 · small · all-MiniLM-L6-v2"),
    Configuration("fixed_size", "large", "fixed_size · chunk_size=24 · large · all-MiniLM-L6-v2"),
    Configuration("semantic", "", "semantic · active sets: defaults · all-MiniLM-L6-v2"),
]


class Retriever:
    """Answers Retrieve per config_id; semantic's set is gone. Every call waits for all
    the others at a barrier, so the columns pass only if they are searched at once."""

    def __init__(self, parties: int):
        self.barrier = threading.Barrier(parties, timeout=10)
        self.options: list[common_pb2.RetrievalOptions] = []

    def retrieve(self, query, options):
        self.options.append(options)
        self.barrier.wait()
        if options.strategy == "semantic":
            raise ClientError.from_rpc_error(
                "retriever",
                "127.0.0.1:3",
                FakeRpcError(
                    grpc.StatusCode.NOT_FOUND, "no document has an index set of semantic with all-MiniLM-L6-v2"
                ),
            )
        return {"small": SMALL, "large": LARGE}[options.config_id]


@pytest.fixture(scope="module")
def columns():
    retriever = Retriever(len(CONFIGURATIONS))
    base = common_pb2.RetrievalOptions(top_k=2, hybrid=True)
    found = query_columns.search_all(retriever, QUESTION.text, base, CONFIGURATIONS)
    return retriever, found


@pytest.fixture(scope="module")
def page(columns):
    return ET.fromstring(query_columns.columns_html(columns[1], QUESTION, FORMATS))


def column(page, config_id: str, strategy: str = "fixed_size") -> ET.Element:
    return page.find(f".//section[@data-strategy='{strategy}'][@data-config-id='{config_id}']")


def test_every_column_is_searched_at_once_with_the_same_options(columns):
    retriever, found = columns
    assert [c.configuration for c in found] == CONFIGURATIONS  # in the order picked
    assert sorted((o.strategy, o.config_id) for o in retriever.options) == [
        ("fixed_size", "large"),
        ("fixed_size", "small"),
        ("semantic", ""),
    ]
    assert {(o.top_k, o.hybrid) for o in retriever.options} == {(2, True)}


def test_columns_stand_side_by_side_with_tokens_latency_and_scores(page):
    sections = page.findall(".//section[@class='cl-column']")
    assert [(s.get("data-config-id"), s.get("data-state")) for s in sections] == [
        ("small", "done"),
        ("large", "done"),
        ("", "failed"),
    ]
    small = column(page, "small")
    assert small.find("h4").text == "fixed_size · chunk_size=10 · small · all-MiniLM-L6-v2"
    facts = "".join(small.find("p[@class='cl-column-facts']").itertext())
    assert facts == "14 tokens sent · 2 chunks: 2 hits + 0 added by expansion · 12 ms"  # 40 // 4 + 17 // 4 tokens
    assert [s.text for s in small.findall(".//ol[@class='cl-flat-list']//span[@class='cl-score']")] == [
        "score 0.810",
        "score 0.420",
    ]  # one score format (metric_format.score)
    assert [c.get("data-chunk-index") for c in small.findall(".//ol[@class='cl-flat-list']/li")] == ["0", "3"]
    # The expansion tree is one click away: inside the column's details.
    tree = small.find("details[@class='cl-column-tree']")
    assert [n.get("data-rank") for n in tree.findall(".//li[@class='cl-node']")] == ["1", "2"]
    large_facts = "".join(column(page, "large").find("p[@class='cl-column-facts']").itertext())
    assert large_facts == "23 tokens sent · 1 chunk: 1 hit + 0 added by expansion · 31 ms"


def test_the_reference_excerpts_are_marked_at_their_characters(page):
    def marks(config_id):
        flat = column(page, config_id).find(".//ol[@class='cl-flat-list']")
        return [(int(m.get("data-start")), int(m.get("data-end")), m.text) for m in flat.iter("mark")]

    assert marks("small") == [(28, 40, "warned ships")]
    assert marks("large") == [
        (28, 65, "warned ships when the beam was hidden"),
        (80, 111, "two black cones for a hurricane"),
    ]
    # The card's text is the chunk's, the marks inside it in place.
    card = column(page, "large").find(".//ol[@class='cl-flat-list']/li/pre")
    assert "".join(card.itertext()) == TEXT[18:111]
    assert card.text == "Fog horns "
    # The hits in the tree are marked alike.
    tree_marks = column(page, "small").find("details").iter("mark")
    assert [(m.get("data-start"), m.get("data-end")) for m in tree_marks] == [("28", "40")]


def test_each_column_has_the_evaluators_recall_and_iou_and_says_what_it_found(page):
    expected = {
        "small": (SMALL, 12 / 68, 12 / 113, "recall 17.6% · IoU 10.6% · found 1 of 2 excerpts"),
        "large": (LARGE, 1.0, 68 / 93, "recall 100.0% · IoU 73.1% · found 2 of 2 excerpts"),
    }
    for config_id, (retrieved, recall, iou, line) in expected.items():
        measures = column(page, config_id).find("p[@class='cl-column-measures']")
        evaluator = retrieval_metrics(retrieved.retrieved_chunks, retrieved.expansion_tree, QUESTION.references, 2)
        assert float(measures.get("data-recall")) == evaluator.recall == pytest.approx(recall)
        assert float(measures.get("data-iou")) == evaluator.iou == pytest.approx(iou)
        assert "".join(measures.itertext()) == line


def test_a_failing_column_says_why_and_only_there(page):
    failed = column(page, "", "semantic")
    assert failed.find("p").text == (
        "This configuration could not be searched: no document has an index set of semantic with all-MiniLM-L6-v2."
    )
    assert failed.find(".//ol") is None and "NOT_FOUND" not in ET.tostring(failed, encoding="unicode")
    assert column(page, "small").find(".//p[@class='cl-message cl-message-error cl-column-error']") is None


def test_an_unreachable_retriever_is_named_with_its_address():
    exc = ClientError.from_rpc_error(
        "retriever", "127.0.0.1:3", FakeRpcError(grpc.StatusCode.UNAVAILABLE, "failed to connect to all addresses")
    )
    assert query_columns.error_sentence(exc) == (
        "This configuration could not be searched: The retriever service at 127.0.0.1:3 is unreachable or too "
        "slow (UNAVAILABLE): check that it is running and that the address is right."
    )


def test_without_a_question_from_a_set_nothing_is_marked_or_measured(columns):
    page = ET.fromstring(query_columns.columns_html(columns[1], None, FORMATS, note="a note"))
    assert list(page.iter("mark")) == [] and page.find(".//p[@class='cl-column-measures']") is None
    assert page.find("p[@class='cl-columns-note']").text == "a note"


def indexed(strategy, config_id, seconds, active, **knobs):
    spec = common_pb2.StrategySpec(
        name=strategy, knobs={k: common_pb2.KnobValue(int_value=v) for k, v in knobs.items()}
    )
    return retriever_pb2.IndexedSet(
        strategy=strategy,
        config_id=config_id,
        spec=spec,
        active=active,
        indexed_at={"seconds": seconds},
        document_id=f"doc-{seconds}",
    )


def test_the_configurations_offered_are_each_strategys_active_sets_then_its_configurations():
    sets = [
        indexed("fixed_size", "aaa", 10, True, chunk_size=48),
        indexed("fixed_size", "bbb", 20, False, chunk_size=128),
        indexed("semantic", "ccc", 5, True),
        indexed("semantic", "ddd", 6, True, threshold=1),
    ]
    choices = query_columns.configuration_choices(sets, "all-MiniLM-L6-v2")
    assert choices == [
        ("fixed_size · active sets: chunk_size=48 · all-MiniLM-L6-v2", "fixed_size/"),
        ("fixed_size · chunk_size=128 · bbb · all-MiniLM-L6-v2", "fixed_size/bbb"),
        ("fixed_size · chunk_size=48 · aaa · all-MiniLM-L6-v2", "fixed_size/aaa"),
        ("semantic · active sets (2 configurations) · all-MiniLM-L6-v2", "semantic/"),
        ("semantic · threshold=1 · ddd · all-MiniLM-L6-v2", "semantic/ddd"),
        ("semantic · defaults · ccc · all-MiniLM-L6-v2", "semantic/ccc"),
    ]
    assert query_columns.default_configurations(choices) == ["fixed_size/", "semantic/"]
    assert query_columns.chosen(["semantic/ddd"], choices) == [
        Configuration("semantic", "ddd", "semantic · threshold=1 · ddd · all-MiniLM-L6-v2")
    ]
    with pytest.raises(ValueError, match="^Pick at least one configuration"):
        query_columns.check_count([], choices)
    with pytest.raises(ValueError, match="^Nothing is indexed with this embedding model yet"):
        query_columns.check_count([], [])
    with pytest.raises(ValueError, match="^7 configurations are picked; at most 6 fit side by side"):
        query_columns.check_count(CONFIGURATIONS * 2 + CONFIGURATIONS[:1], choices)


def test_a_question_from_a_set_marks_its_excerpts_only_while_the_box_holds_it():
    question_set = evaluator_pb2.QuestionSet(name="storms.jsonl", questions=[QUESTION])
    assert query_columns.question_choices(question_set) == [
        ("What did ships see and hear in a storm? · 2 excerpts", "q1")
    ]
    assert query_columns.picked_question(question_set, "q1", f"  {QUESTION.text} ") == (QUESTION, "")
    assert query_columns.picked_question(question_set, "q1", "Something else?") == (
        None,
        ("The question box no longer holds the question picked from storms.jsonl: its excerpts are not marked."),
    )
    assert query_columns.picked_question(question_set, "gone", QUESTION.text)[1] == (
        "The picked question is no longer in storms.jsonl: no excerpts are marked."
    )
    assert query_columns.picked_question(None, "", QUESTION.text) == (None, "")


def test_the_page_opens_on_the_recommended_strategies_and_the_baseline_then_others():
    choices = [
        (f"{name} · active sets", f"{name}/")
        for name in ("cluster_parent_child", "fixed_size", "parent_child", "recursive", "semantic")
    ]
    choices.insert(2, ("fixed_size · chunk_size=128 · bbb", "fixed_size/bbb"))
    assert query_columns.default_configurations(choices[::-1]) == [
        "cluster_parent_child/",
        "fixed_size/",
        "semantic/",
        "recursive/",
    ]
    # Before the recommended strategy is processed: the baseline first, then the others.
    assert query_columns.default_configurations([c for c in choices if c[1] != "cluster_parent_child/"]) == [
        "fixed_size/",
        "parent_child/",
        "recursive/",
        "semantic/",
    ]


class Evaluator:
    """Answers each column extractively from that column's own context, as the evaluator does:
    the small chunks' two sentences, joined with a gap; the large chunk's first sentence."""

    ANSWERS = {
        "small": "Lamps burned oil. … Radio came later.",
        "large": "Fog horns warned ships when the beam was hidden.",
    }

    def __init__(self):
        self.requests: list[evaluator_pb2.AnswerRequest] = []

    def answer(self, request):
        self.requests.append(request)
        found = {"small": SMALL, "large": LARGE}[request.retrieval.config_id]
        yield evaluator_pb2.AnswerEvent(
            context=evaluator_pb2.AnswerContext(
                query_id="q", retrieved_chunks=found.retrieved_chunks, expansion_tree=found.expansion_tree
            )
        )
        text = self.ANSWERS[request.retrieval.config_id]
        yield evaluator_pb2.AnswerEvent(delta=text)
        yield evaluator_pb2.AnswerEvent(
            result=evaluator_pb2.AnswerResult(
                query_id="q", answer=text, extractive=True, model="extractive", latency_ms=41.2
            )
        )


def test_each_column_gets_its_own_answer_with_the_chunk_each_piece_came_from(columns):
    evaluator = Evaluator()
    base = common_pb2.RetrievalOptions(top_k=2, hybrid=True)
    steps = list(query_columns.answer_all(evaluator, QUESTION.text, base, columns[1]))
    # One redraw per searched column (the failed one is not asked), the last with both answers.
    assert len(steps) == 2
    assert sorted((r.retrieval.strategy, r.retrieval.config_id, r.retrieval.top_k) for r in evaluator.requests) == [
        ("fixed_size", "large", 2),
        ("fixed_size", "small", 2),
    ]
    page = ET.fromstring(query_columns.columns_html(steps[-1], QUESTION, FORMATS))
    small = column(page, "small").find("div[@class='cl-column-answer']")
    assert small.get("data-extractive") == "true"
    assert small.find("div[@class='cl-answer-text']").text == "Lamps burned oil. … Radio came later."
    assert [li.get("data-cite") for li in small.findall(".//ol[@class='cl-citations']/li")] == [
        "hit #1 · chunk 0",
        "hit #2 · chunk 3",
    ]
    large = column(page, "large").find("div[@class='cl-column-answer']")
    assert [li.get("data-cite") for li in large.findall(".//ol[@class='cl-citations']/li")] == ["hit #1 · chunk 1"]
    assert column(page, "", "semantic").find("div[@class='cl-column-answer']") is None


def test_a_column_whose_strategy_ignores_the_neighbours_says_so(columns):
    from chunklab.v1 import chunker_pb2

    strategies = {
        "fixed_size": chunker_pb2.StrategyInfo(name="fixed_size", expansion=common_pb2.EXPANSION_KIND_NEIGHBORS)
    }
    recursive = Configuration("recursive", "", "recursive · active sets")
    found = [*columns[1][:1], query_columns.Column(recursive, SMALL)]
    strategies["recursive"] = chunker_pb2.StrategyInfo(name="recursive", expansion=common_pb2.EXPANSION_KIND_NONE)
    options = common_pb2.RetrievalOptions(neighbor_prev=1, neighbor_next=1)
    page = ET.fromstring(query_columns.columns_html(found, None, FORMATS, options=options, strategies=strategies))
    assert column(page, "small").find("p[@class='cl-column-note cl-neighbours-ignored']") is None
    note = column(page, "", "recursive").find("p[@class='cl-column-note cl-neighbours-ignored']")
    assert note.text == "neighbor_prev 1 / neighbor_next 1: no effect: recursive returns its hits only"
