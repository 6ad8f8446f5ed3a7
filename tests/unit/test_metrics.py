"""The evaluator's measures on hand-computed cases: character recall, precision
and IoU (the Chroma report's definitions), hit rate and MRR on hits and on
the expanded context, means, bootstrap intervals, prices, judge parsing and
the reading of question files."""

from __future__ import annotations

import pytest

from chunklab import knobs
from chunklab.errors import FailedPrecondition, InvalidArgument
from chunklab.metrics import Span, intersect, merge, overlap, reciprocal_rank
from chunklab.v1 import chunker_pb2, common_pb2, documents_pb2, evaluator_pb2
from services.evaluator.experiments import grid
from services.evaluator.judging import judge, pricing
from services.evaluator.judging.scoring import mean_metrics, retrieval_metrics
from services.evaluator.questions import question_sets, references
from services.evaluator.reports import compare

HIT, NEIGHBOR, PARENT = common_pb2.CHUNK_LABEL_HIT, common_pb2.CHUNK_LABEL_NEIGHBOR, common_pb2.CHUNK_LABEL_PARENT


def rc(doc: str, start: int, end: int, label=HIT, index: int = 0, rank: int = 0, tokens: int = 0):
    chunk = common_pb2.Chunk(
        document_id=doc,
        start_char=start,
        end_char=end,
        chunk_index=index,
        token_count=tokens,
        chunk_id=f"{doc}-{start}-{end}",
    )
    return common_pb2.RetrievedChunk(chunk=chunk, label=label, rank=rank)


def ref(doc: str, start: int, end: int) -> evaluator_pb2.Reference:
    return evaluator_pb2.Reference(document_id=doc, start_char=start, end_char=end)


# -- ranges ---------------------------------------------------------------------


def test_merge_and_intersect_ranges():
    assert merge([(5, 10), (0, 3), (3, 4), (9, 12), (20, 20)]) == [(0, 4), (5, 12)]
    assert intersect([(0, 10), (20, 30)], [(5, 25)]) == [(5, 10), (20, 25)]
    assert intersect([(0, 5)], [(5, 9)]) == []


def test_overlap_counts_characters_like_the_chroma_report():
    # One reference of 10 characters; two chunks of 15 and 18 that both cover part of it.
    result = overlap([Span("A", 10, 20)], [Span("A", 0, 15), Span("A", 12, 30)])
    assert result.intersection == 10 and result.relevant == 10 and result.retrieved == 33
    assert result.recall == 1.0
    assert result.precision == pytest.approx(10 / 33)  # overlapping text counts once per chunk
    assert result.iou == pytest.approx(10 / (33 + 10 - 10))


def test_overlap_keeps_documents_apart():
    # The reference in B and a chunk of C at the same offsets do not meet.
    result = overlap([Span("A", 10, 20), Span("B", 0, 5)], [Span("A", 15, 25), Span("C", 0, 100)])
    assert result.intersection == 5 and result.relevant == 15 and result.retrieved == 110
    assert result.recall == pytest.approx(5 / 15)
    assert result.precision == pytest.approx(5 / 110)
    assert result.iou == pytest.approx(5 / (110 + 15 - 5))


def test_overlapping_references_count_once_and_nothing_retrieved_scores_zero():
    assert overlap([Span("A", 0, 10), Span("A", 5, 15)], [Span("A", 0, 15)]).iou == 1.0
    empty = overlap([Span("A", 0, 10)], [])
    assert (empty.recall, empty.precision, empty.iou) == (0.0, 0.0, 0.0)


def test_reciprocal_rank_is_one_over_the_first_group_that_touches_a_reference():
    refs = [Span("A", 40, 60)]
    assert reciprocal_rank([[Span("A", 0, 40)], [Span("A", 59, 70)]], refs) == 0.5  # [0,40) only touches at the edge
    assert reciprocal_rank([[Span("B", 40, 60)]], refs) == 0.0


# -- metrics of a retrieval result ----------------------------------------------


def test_hit_only_and_expanded_measures_of_a_neighbour_expansion():
    hit1 = rc("A", 100, 200, HIT, index=2, rank=1, tokens=25)
    hit2 = rc("A", 0, 50, HIT, index=0, rank=2, tokens=12)
    prev = rc("A", 50, 100, NEIGHBOR, index=1, tokens=12)
    tree = common_pb2.ExpansionTree(
        hits=[
            common_pb2.ExpansionNode(hit=hit1, neighbors_prev=[prev]),
            common_pb2.ExpansionNode(hit=hit2),
        ]
    )
    flat = [hit2, prev, hit1]
    m = retrieval_metrics(flat, tree, [ref("A", 40, 60)], top_k=5)
    assert m.labelled and m.chunks_sent == 3 and m.tokens_sent == 49
    # Hits only: [100,200) and [0,50) against [40,60): 10 characters of 20.
    assert (m.recall_hits, m.precision_hits, m.iou_hits) == pytest.approx((0.5, 10 / 150, 10 / 160))
    assert m.hit_rate_hits == 1.0 and m.mrr_hits == 0.5
    # Expanded: the neighbour of hit 1 covers the rest, so hit 1's context already touches the reference.
    assert (m.recall, m.precision, m.iou) == pytest.approx((1.0, 20 / 200, 20 / 200))
    assert m.hit_rate == 1.0 and m.mrr == 1.0


def test_parent_child_expanded_measures_read_the_parents():
    child = rc("A", 10, 20, HIT, rank=1)
    parent = rc("A", 0, 100, PARENT)
    tree = common_pb2.ExpansionTree(hits=[common_pb2.ExpansionNode(hit=child, parent=parent)])
    m = retrieval_metrics([parent], tree, [ref("A", 50, 60)], top_k=5)
    assert (m.recall_hits, m.hit_rate_hits, m.mrr_hits) == (0.0, 0.0, 0.0)
    assert (m.recall, m.precision, m.iou, m.hit_rate, m.mrr) == pytest.approx((1.0, 0.1, 0.1, 1.0, 1.0))


def test_a_question_without_references_is_not_labelled_and_means_skip_it():
    unlabelled = retrieval_metrics([rc("A", 0, 10, tokens=4)], common_pb2.ExpansionTree(), [], top_k=5)
    assert not unlabelled.labelled and unlabelled.tokens_sent == 4
    labelled = evaluator_pb2.RetrievalMetrics(
        labelled=True, recall=0.5, iou=0.25, tokens_sent=10, questions=1, embedding_answer_similarity=0.8
    )
    mean = mean_metrics([unlabelled, labelled])
    assert mean.questions == 2 and mean.questions_labelled == 1
    assert mean.recall == 0.5 and mean.iou == 0.25  # over the labelled question only
    assert mean.tokens_sent == 7  # over both
    assert mean.embedding_answer_similarity == pytest.approx(0.8)  # -1 means "no expected answer"


# -- comparisons, prices --------------------------------------------------------


def test_bootstrap_interval_is_seeded_and_brackets_the_mean():
    import numpy as np

    constant = np.full(30, 0.2)
    assert compare.bootstrap_ci(constant, 500) == pytest.approx((0.2, 0.2))
    spread = np.linspace(-1, 1, 41) + 0.1
    low, high = compare.bootstrap_ci(spread, 2000)
    assert low < spread.mean() < high
    assert (low, high) == compare.bootstrap_ci(spread, 2000)  # same seed, same interval


def test_prices_per_model_and_unknown_models_cost_nothing_and_say_so():
    assert pricing.cost_usd("gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)
    assert pricing.cost_usd("gpt-4o-mini-2024-07-18", 2_000_000) == pytest.approx(0.30)
    assert pricing.cost_usd("llama3:8b", 10**9, 10**9) == 0.0
    assert "unknown price" in pricing.price_note("llama3:8b") and pricing.price_note("gpt-4o") == ""


# -- judge replies ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"score": 7, "reason": "mostly relevant"}', (7.0, "mostly relevant")),
        ('```json\n{"score": 10, "reason": "all of it"}\n```', (10.0, "all of it")),
    ],
)
def test_judge_replies_that_follow_the_format_are_read(text, expected):
    assert judge.parse_reply("context_relevance", text) == expected


@pytest.mark.parametrize(
    "text, problem",
    [
        ("7 out of 10", "not JSON"),
        ('{"score": 11, "reason": "x"}', "between 1 and 10"),
        ('{"score": 0, "reason": "x"}', "between 1 and 10"),
        ('{"score": 7.5, "reason": "x"}', "integer"),
        ('{"score": true, "reason": "x"}', "integer"),
        ('{"score": 7}', "keys"),
        ('{"score": 7, "reason": "x", "extra": 1}', "keys"),
        ('{"score": 7, "reason": ""}', "reason"),
        ('[7, "x"]', "not an object"),
    ],
)
def test_judge_replies_that_break_the_format_are_refused(text, problem):
    with pytest.raises(judge.UnusableReply, match=problem):
        judge.parse_reply("faithfulness", text)


def test_hallucination_is_yes_or_no():
    assert judge.parse_reply("hallucination", '{"hallucination": "yes", "reason": "made up a date"}') == (
        1.0,
        "made up a date",
    )
    assert judge.parse_reply("hallucination", '{"hallucination": "No", "reason": "all supported"}')[0] == 0.0
    with pytest.raises(judge.UnusableReply):
        judge.parse_reply("hallucination", '{"hallucination": 1, "reason": "x"}')


def test_the_prompt_version_names_the_prompts_it_hashes(monkeypatch):
    version = judge.prompt_version()
    assert version.startswith("judge-v1+") and len(version) == len("judge-v1+") + 12
    monkeypatch.setitem(judge.PROMPTS, "faithfulness", judge.PROMPTS["faithfulness"] + " Be strict.")
    assert judge.prompt_version() != version


# -- grids ----------------------------------------------------------------------------

FIXED = chunker_pb2.StrategyInfo(
    name="fixed_size",
    knobs=[
        chunker_pb2.KnobSpec(
            name="chunk_size",
            type=chunker_pb2.KNOB_TYPE_INT,
            default_value=common_pb2.KnobValue(int_value=512),
            min_value=8,
            max_value=8192,
        ),
        chunker_pb2.KnobSpec(
            name="chunk_overlap",
            type=chunker_pb2.KNOB_TYPE_INT,
            default_value=common_pb2.KnobValue(int_value=64),
            min_value=0,
        ),
    ],
)
WINDOWED = chunker_pb2.StrategyInfo(
    name="sentence_window",
    knobs=[
        chunker_pb2.KnobSpec(
            name="window",
            type=chunker_pb2.KNOB_TYPE_INT,
            query_time=True,
            default_value=common_pb2.KnobValue(int_value=2),
            min_value=0,
        ),
    ],
)


def values(*numbers: int) -> list[common_pb2.KnobValue]:
    return [common_pb2.KnobValue(int_value=n) for n in numbers]


def test_grids_expand_to_the_cartesian_product_with_defaults_filled_in():
    grids = [
        evaluator_pb2.StrategyGrid(
            strategy="fixed_size",
            grid=[
                evaluator_pb2.KnobGrid(knob="chunk_size", values=values(250, 500)),
                evaluator_pb2.KnobGrid(knob="chunk_overlap", values=values(0, 50)),
            ],
        ),
        evaluator_pb2.StrategyGrid(
            strategy="sentence_window",
            grid=[
                evaluator_pb2.KnobGrid(knob="window", values=values(1)),
            ],
        ),
    ]
    cells = grid.expand(grids, [FIXED, WINDOWED], window=None)
    assert [c.run_key for c in cells] == [
        "fixed_size[chunk_size=250,chunk_overlap=0]",
        "fixed_size[chunk_size=250,chunk_overlap=50]",
        "fixed_size[chunk_size=500,chunk_overlap=0]",
        "fixed_size[chunk_size=500,chunk_overlap=50]",
        "sentence_window[window=1]",
    ]
    assert cells[0].config_id == knobs.config_id(
        "fixed_size", knobs.from_info(FIXED), {"chunk_size": 250, "chunk_overlap": 0}
    )
    # The query-time window goes to the retriever and is not part of the chunking configuration.
    assert cells[-1].window == 1 and cells[-1].config_id == knobs.config_id("sentence_window", (), {})
    plain = grid.expand([evaluator_pb2.StrategyGrid(strategy="fixed_size")], [FIXED], window=3)
    assert plain[0].run_key == "fixed_size" and plain[0].spec.knobs["chunk_size"].int_value == 512


def test_the_config_id_is_the_one_the_chunker_computes():
    from services.chunker.strategies import REGISTRY

    cell = grid.expand(
        [
            evaluator_pb2.StrategyGrid(
                strategy="fixed_size", grid=[evaluator_pb2.KnobGrid(knob="chunk_size", values=values(250))]
            )
        ],
        [REGISTRY.get("fixed_size").info()],
        None,
    )[0]
    assert cell.config_id == REGISTRY.build(cell.spec).config_id


@pytest.mark.parametrize(
    "grids, problem",
    [
        ([evaluator_pb2.StrategyGrid(strategy="magic")], "unknown strategy"),
        (
            [
                evaluator_pb2.StrategyGrid(
                    strategy="fixed_size", grid=[evaluator_pb2.KnobGrid(knob="size", values=values(1))]
                )
            ],
            "no knob",
        ),
        (
            [
                evaluator_pb2.StrategyGrid(
                    strategy="fixed_size", grid=[evaluator_pb2.KnobGrid(knob="chunk_size", values=values(4))]
                )
            ],
            "at least 8",
        ),
        (
            [
                evaluator_pb2.StrategyGrid(
                    strategy="fixed_size",
                    grid=[evaluator_pb2.KnobGrid(knob="chunk_size", values=[common_pb2.KnobValue(string_value="big")])],
                )
            ],
            "whole number",
        ),
        (
            [evaluator_pb2.StrategyGrid(strategy="fixed_size"), evaluator_pb2.StrategyGrid(strategy="fixed_size")],
            "twice",
        ),
        ([], "at least one"),
    ],
)
def test_bad_grids_are_refused_before_anything_runs(grids, problem):
    with pytest.raises(InvalidArgument, match=problem):
        grid.expand(grids, [FIXED], None)


# -- question files ---------------------------------------------------------------

TEXT = "Alpha beta gamma. Delta epsilon zeta. Eta theta."


class FakeDocs:
    def __init__(self):
        self.docs = [documents_pb2.Document(document_id="d1", name="greek.md", text=TEXT, content_hash="h1")]

    def get(self, document_id: str, full: bool) -> documents_pb2.Document:
        from chunklab.errors import NotFound

        for doc in self.docs:
            if doc.document_id == document_id:
                return doc
        raise NotFound(f"no document {document_id}")

    def list(self):
        return self.docs

    def resolver(self, mapping=None) -> question_sets.DocumentResolver:
        return question_sets.DocumentResolver(mapping or {}, self.get, self.list)


def resolve_all(raw, docs: FakeDocs):
    """Each question's references as a strict import stores them (it refuses any problem)."""
    checked = references.check(raw, docs.resolver(), references.STRICT)
    references.refuse(checked)
    return [list(q.references) for q in checked.questions]


def test_csv_references_resolve_by_name_stem_and_are_checked_against_the_text():
    data = (
        b"question,references,corpus_id\n"
        b'"What follows beta?","[{""content"": ""gamma"", ""start_index"": 11, ""end_index"": 16}]",greek\n'
    )
    raw = question_sets.read_csv(data)
    (refs,) = resolve_all(raw, FakeDocs())
    assert refs == [evaluator_pb2.Reference(document_id="d1", start_char=11, end_char=16, content="gamma")]
    assert raw[0].metadata == {"corpus_id": "greek"}


def test_a_wrong_offset_is_refused_with_its_line_number():
    # The second record spans two lines: the third record starts on line 4.
    data = (
        b"question,references,corpus_id\n"
        b'"ok","[]",greek\n'
        b'"two\nlines","[]",greek\n'
        b'"bad","[{""content"": ""gamma"", ""start_index"": 10, ""end_index"": 15}]",greek\n'
    )
    raw = question_sets.read_csv(data)
    assert [q.where for q in raw] == ["line 2", "line 3", "line 5"]
    with pytest.raises(InvalidArgument, match=r"line 5: text\[10:15\]"):
        resolve_all(raw, FakeDocs())


def test_jsonl_excerpts_are_located_in_the_canonical_text():
    data = b'{"question": "Which letter?", "expected_answer": "eta", "references": [{"document": "greek.md", "content": "Eta theta."}]}\n'
    raw = question_sets.read_jsonl(data)
    (refs,) = resolve_all(raw, FakeDocs())
    assert (refs[0].start_char, refs[0].end_char) == (TEXT.index("Eta"), len(TEXT))
    assert raw[0].expected_answer == "eta"


@pytest.mark.parametrize(
    "data, error, problem",
    [
        (b'{"question": "x"}\n{not json}\n', InvalidArgument, "line 2: not a JSON object"),
        (b'{"question": ""}\n', InvalidArgument, "line 1: no question text"),
        (
            b'{"question": "x", "references": [{"document": "greek", "content": "omega"}]}\n',
            InvalidArgument,
            "does not occur",
        ),
        (
            b'{"question": "x", "references": [{"document": "latin", "start": 0, "end": 3}]}\n',
            FailedPrecondition,
            "no uploaded document is called 'latin'",
        ),
        (
            b'{"question": "x", "references": [{"document": "greek", "start": 3, "end": 999}]}\n',
            InvalidArgument,
            "outside",
        ),
    ],
)
def test_bad_jsonl_lines_are_refused_with_what_to_fix(data, error, problem):
    with pytest.raises(error, match=problem):
        resolve_all(question_sets.read_jsonl(data), FakeDocs())


def test_the_content_hash_changes_with_the_questions_and_only_with_them():
    q = evaluator_pb2.Question(text="a", references=[ref("d1", 0, 5)])
    same = evaluator_pb2.Question(question_id="other-id", text="a", references=[ref("d1", 0, 5)])
    moved = evaluator_pb2.Question(text="a", references=[ref("d1", 1, 5)])
    assert question_sets.content_hash([q]) == question_sets.content_hash([same])
    assert question_sets.content_hash([q]) != question_sets.content_hash([moved])
