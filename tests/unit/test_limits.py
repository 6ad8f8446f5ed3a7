"""The shared request limits (chunklab/rpc/limits.py) on hand-built messages: the exact
refusal for each kind of field, the servicer decorator that checks every request
(and every message of a client stream) before the method runs, and the shared
checks that other owners keep: collection names, page tokens, grid sizes and
vector dimensions."""

from __future__ import annotations

import math

import pytest

from chunklab.embeddings import MAX_DIMENSION, check_dimension
from chunklab.errors import InvalidArgument
from chunklab.rpc import limits, paging
from chunklab.v1 import (
    chunker_pb2,
    common_pb2,
    documents_pb2,
    evaluator_pb2,
    evaluator_pb2_grpc,
    ingest_pb2,
    retriever_pb2,
)
from services.evaluator.experiments import grid

TEN_MB = "x" * 10_000_000


def refusal(message) -> str:
    with pytest.raises(InvalidArgument) as err:
        limits.check_message(message)
    return err.value.message


# -- excerpts ---------------------------------------------------------------------


def test_an_excerpt_is_cut_with_an_ellipsis_and_keeps_short_values_whole():
    assert limits.excerpt("fixed_size") == "fixed_size"
    assert limits.excerpt("a\n\tb   c") == "a b c"
    assert limits.excerpt("y" * 500) == "y" * 79 + "…" and len(limits.excerpt("y" * 500)) == 80
    assert limits.excerpt("abcdef", 4) == "abc…"
    assert limits.quoted("../../etc") == "'../../etc'" and limits.quoted(3) == "3" and limits.quoted(None) == "None"
    assert limits.quoted("z" * 100, 10) == "'zzzzzzzzz…'"
    assert limits.cut("line one\nline two", 9) == "line one…" and limits.cut("short") == "short"


# -- strings ----------------------------------------------------------------------


def test_each_kind_of_string_has_its_limit_and_a_message_naming_the_field():
    assert refusal(retriever_pb2.RetrieveRequest(query="word " * 2_000_000)) == (
        "query is 10,000,000 characters long, over its limit of 8,000 (it starts 'word word word word word word word word…')"
    )
    assert refusal(ingest_pb2.GetDocumentRequest(document_id=TEN_MB)) == (
        f"document_id is 10,000,000 characters long, over its limit of 128 (it starts '{'x' * 39}…')"
    )
    header = ingest_pb2.CreateDocumentRequest(header=ingest_pb2.UploadHeader(name="n" * 257))
    assert refusal(header).startswith("header.name is 257 characters long, over its limit of 256")
    feedback = evaluator_pb2.SubmitFeedbackRequest(query_id="q", comment="c" * 2001)
    assert refusal(feedback).startswith("comment is 2,001 characters long, over its limit of 2,000")
    questions = evaluator_pb2.CreateQuestionSetRequest(
        name="set", questions=[evaluator_pb2.Question(text="fine"), evaluator_pb2.Question(text="q" * 8001)]
    )
    assert refusal(questions).startswith("questions[1].text is 8,001 characters long, over its limit of 8,000")
    filters = retriever_pb2.RetrieveRequest(
        query="q",
        options=common_pb2.RetrievalOptions(filter=common_pb2.RetrievalFilter(document_ids=["ok", "d" * 129])),
    )
    assert refusal(filters).startswith("options.filter.document_ids[1] is 129 characters long, over its limit of 128")


def test_strings_at_their_limit_and_long_chunk_text_pass():
    limits.check_message(retriever_pb2.RetrieveRequest(query="q" * limits.TEXT_CHARS))
    limits.check_message(ingest_pb2.GetDocumentRequest(document_id="d" * limits.ID_CHARS))
    chunk = common_pb2.Chunk(chunk_id="c", content="a whole section " * 100_000)
    limits.check_message(
        retriever_pb2.IndexChunksRequest(
            batch=retriever_pb2.IndexChunkBatch(chunks=[retriever_pb2.IndexedChunk(chunk=chunk, vector=[0.5] * 384)])
        )
    )


def test_map_keys_and_values_are_bounded_and_named_by_their_key():
    spec = common_pb2.StrategySpec(name="semantic", knobs={"k" * 300: common_pb2.KnobValue(int_value=1)})
    assert refusal(chunker_pb2.PreviewChunksRequest(document_id="d", strategy=spec)).startswith(
        "strategy.knobs key is 300 characters long, over its limit of 256"
    )
    header = evaluator_pb2.ImportHeader(name="set", document_ids={"chatlogs": "i" * 129})
    assert refusal(evaluator_pb2.ImportQuestionSetRequest(header=header)).startswith(
        "header.document_ids['chatlogs'] is 129 characters long, over its limit of 128"
    )


def test_a_nul_character_is_refused_in_every_string_even_unbounded_chunk_text():
    # PostgreSQL cannot store U+0000; SQLite can: every request is refused alike before any work.
    assert refusal(evaluator_pb2.AnswerRequest(question="which\x00river")) == (
        "question holds a NUL character (U+0000) at character 5: that is binary data, not text; "
        "remove it and send it again"
    )
    assert refusal(evaluator_pb2.SubmitFeedbackRequest(query_id="q", comment="ok\x00")).startswith(
        "comment holds a NUL character (U+0000) at character 2:"
    )
    chunk = common_pb2.Chunk(chunk_id="c", content="a section" * 10 + "\x00")
    batch = retriever_pb2.IndexChunkBatch(chunks=[retriever_pb2.IndexedChunk(chunk=chunk, vector=[0.5] * 4)])
    assert refusal(retriever_pb2.IndexChunksRequest(batch=batch)).startswith(
        "batch.chunks[0].chunk.content holds a NUL character (U+0000) at character 90:"
    )


def test_every_string_field_of_every_request_has_a_limit():
    """A new request field gets a limit by its name (or its name a row in STRING_LIMITS)."""
    seen: set[str] = set()
    missing: list[str] = []

    def visit(descriptor):
        if descriptor.full_name in seen:
            return
        seen.add(descriptor.full_name)
        for field in descriptor.fields:
            entry = field.message_type
            if entry is not None and entry.GetOptions().map_entry:  # keys are names; values go by the map's name
                value = entry.fields_by_name["value"]
                if value.message_type is not None:
                    visit(value.message_type)
                    continue
            elif entry is not None:
                visit(entry)
                continue
            if field.type == field.TYPE_STRING or entry is not None:
                try:
                    limits.string_limit(field.name)
                except KeyError:
                    missing.append(f"{descriptor.name}.{field.name}")

    for module in (ingest_pb2, retriever_pb2, chunker_pb2, evaluator_pb2):
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                visit(method.input_type)
    assert not missing, f"give these fields a limit in chunklab/rpc/limits.py STRING_LIMITS: {missing}"
    assert limits.string_limit("resume_experiment_id") == limits.ID_CHARS
    assert limits.string_limit("content") is None


# -- enums, numbers, timestamps -------------------------------------------------------


def test_an_enum_value_the_contract_does_not_declare_is_refused_with_the_names_it_takes():
    upload = ingest_pb2.CreateDocumentRequest(header=ingest_pb2.UploadHeader(name="a.md", format=99))
    assert refusal(upload) == (
        "header.format is 99, which DocumentFormat does not declare; use one of "
        "DOCUMENT_FORMAT_UNSPECIFIED, DOCUMENT_FORMAT_MARKDOWN, DOCUMENT_FORMAT_TEXT, "
        "DOCUMENT_FORMAT_DOCX, DOCUMENT_FORMAT_PDF, DOCUMENT_FORMAT_HTML"
    )
    config = evaluator_pb2.ExperimentConfig(validation=evaluator_pb2.Validation(mode=7))
    assert refusal(evaluator_pb2.RunExperimentRequest(config=config)).startswith(
        "config.validation.mode is 7, which ValidationMode does not declare; use one of VALIDATION_MODE_UNSPECIFIED"
    )
    chunk = common_pb2.Chunk(role=-3)
    batch = retriever_pb2.IndexChunksRequest(
        batch=retriever_pb2.IndexChunkBatch(
            chunks=[retriever_pb2.IndexedChunk(), retriever_pb2.IndexedChunk(chunk=chunk)]
        )
    )
    assert refusal(batch).startswith("batch.chunks[1].chunk.role is -3, which ChunkRole does not declare")
    limits.check_message(ingest_pb2.GetDocumentRequest(document_id="d", view=documents_pb2.DOCUMENT_VIEW_FULL))


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_nan_and_infinities_are_refused_wherever_a_number_is(value):
    knob = common_pb2.StrategySpec(name="semantic", knobs={"threshold": common_pb2.KnobValue(double_value=value)})
    assert refusal(chunker_pb2.ProcessDocumentRequest(document_id="d", strategies=[knob])) == (
        f"strategies[0].knobs['threshold'].double_value is {value}; give a finite number"
    )
    options = common_pb2.RetrievalOptions(recency_lambda=value)
    assert refusal(evaluator_pb2.RunExperimentRequest(config=evaluator_pb2.ExperimentConfig(retrieval=options))) == (
        f"config.retrieval.recency_lambda is {value}; give a finite number"
    )
    vector = [0.1] * 300 + [value] + [0.2] * 83
    batch = retriever_pb2.IndexChunksRequest(
        batch=retriever_pb2.IndexChunkBatch(chunks=[retriever_pb2.IndexedChunk(vector=vector)])
    )
    assert refusal(batch) == f"batch.chunks[0].vector[300] is {value}; give a finite number"


def test_huge_finite_vector_values_are_not_mistaken_for_infinities():
    # float32 holds up to 3.4e38; a sum of many such values overflows a double only
    # when they are near 1e308, which is then checked value by value.
    batch = retriever_pb2.IndexChunksRequest(
        batch=retriever_pb2.IndexChunkBatch(chunks=[retriever_pb2.IndexedChunk(vector=[3.0e38] * 4096)])
    )
    limits.check_message(batch)


def test_timestamps_outside_protobufs_range_are_refused_before_any_conversion():
    assert refusal(retriever_pb2.SweepRequest(as_of={"seconds": 10**15})) == (
        "as_of is outside 0001-01-01 to 9999-12-31 (seconds 1000000000000000, nanos 0); "
        "give a date in that range, or leave it unset"
    )
    header = ingest_pb2.UploadHeader(name="a.md", published_at={"seconds": 0, "nanos": -1})
    assert refusal(ingest_pb2.CreateDocumentRequest(header=header)).startswith(
        "header.published_at is outside 0001-01-01 to 9999-12-31 (seconds 0, nanos -1)"
    )
    limits.check_message(retriever_pb2.SweepRequest(as_of={"seconds": limits.MAX_SECONDS, "nanos": 999_999_999}))
    limits.check_message(retriever_pb2.SweepRequest(as_of={"seconds": limits.MIN_SECONDS}))


# -- the servicer decorator ---------------------------------------------------------


def test_a_bounded_servicer_checks_requests_and_stream_messages_before_its_body_runs():
    ran: list[str] = []
    order: list[str] = []

    @limits.bounded(
        evaluator_pb2.DESCRIPTOR.services_by_name["EvaluatorService"],
        first={"RunExperiment": lambda request: order.append("first")},
    )
    class Servicer(evaluator_pb2_grpc.EvaluatorServiceServicer):
        def GetExperiment(self, request, context):
            ran.append(request.experiment_id)
            return evaluator_pb2.Experiment()

        def RunExperiment(self, request, context):
            order.append("body")
            yield evaluator_pb2.ExperimentEvent()

        def ImportQuestionSet(self, request_iterator, context):
            return [message.WhichOneof("part") for message in request_iterator]

    servicer = Servicer()
    servicer.GetExperiment(evaluator_pb2.GetExperimentRequest(experiment_id="e1"), None)
    with pytest.raises(InvalidArgument, match="experiment_id is 129 characters long"):
        servicer.GetExperiment(evaluator_pb2.GetExperimentRequest(experiment_id="e" * 129), None)
    assert ran == ["e1"]
    assert list(servicer.RunExperiment(evaluator_pb2.RunExperimentRequest(), None)) == [evaluator_pb2.ExperimentEvent()]
    assert order == ["first", "body"]
    stream = [
        evaluator_pb2.ImportQuestionSetRequest(header=evaluator_pb2.ImportHeader(name="set")),
        evaluator_pb2.ImportQuestionSetRequest(data=b"{}"),
    ]
    assert servicer.ImportQuestionSet(iter(stream), None) == ["header", "data"]
    bad = [evaluator_pb2.ImportQuestionSetRequest(header=evaluator_pb2.ImportHeader(name="set", format=5))]
    with pytest.raises(InvalidArgument, match="header.format is 5, which QuestionSetFormat does not declare"):
        servicer.ImportQuestionSet(iter(bad), None)


# -- shared checks kept by their owners --------------------------------------------------


@pytest.mark.parametrize("name", ["../../etc", ".hidden", "a/b", "", "c" * 129, "news letters"])
def test_collection_names_that_could_name_a_path_are_refused(name):
    with pytest.raises(InvalidArgument) as err:
        limits.check_collection(name)
    assert err.value.message == (
        f"{limits.quoted(name)} is not a collection name: use letters, digits, '.', '_' or '-' "
        "(up to 128, starting with a letter or digit)"
    )


def test_collection_names_of_letters_digits_dots_and_dashes_pass():
    for name in ("default", "news", "hr-2026", "v1.2_docs", "c" * 128):
        limits.check_collection(name)


@pytest.mark.parametrize("offset", [10**30, paging.MAX_OFFSET + 1, "²", "1e9", "-5"])
def test_forged_page_tokens_cannot_overflow_a_database_offset(offset):
    with pytest.raises(InvalidArgument) as err:
        paging.decode_offset(paging.encode_token(offset))
    assert err.value.message == "page_token is not one this service gave out; pass next_page_token unchanged"
    assert paging.decode_offset(paging.encode_token(paging.MAX_OFFSET)) == paging.MAX_OFFSET


def values(count: int) -> list[common_pb2.KnobValue]:
    return [common_pb2.KnobValue(int_value=100 + i) for i in range(count)]


def test_a_grid_of_a_million_cells_is_counted_not_built():
    million = evaluator_pb2.StrategyGrid(
        strategy="fixed_size",
        grid=[
            evaluator_pb2.KnobGrid(knob="chunk_size", values=values(1000)),
            evaluator_pb2.KnobGrid(knob="chunk_overlap", values=values(1000)),
        ],
    )
    with pytest.raises(InvalidArgument) as err:
        grid.check_size([million])
    assert err.value.message == "the grids make 1,000,000 runs; at most 200 per experiment"
    small = evaluator_pb2.StrategyGrid(
        strategy="fixed_size",
        grid=[
            evaluator_pb2.KnobGrid(knob="chunk_size", values=values(20)),
            evaluator_pb2.KnobGrid(knob="chunk_overlap", values=values(10)),
        ],
    )
    assert grid.check_size([small]) == 200
    assert grid.check_size([small.__class__(strategy="recursive")]) == 1


def test_grids_too_many_or_too_wide_or_empty_are_refused_by_their_shape():
    many = [evaluator_pb2.StrategyGrid(strategy="fixed_size")] * 201
    with pytest.raises(InvalidArgument, match="names 201 strategy grids, each at least one run; at most 200"):
        grid.check_size(many)
    wide = evaluator_pb2.StrategyGrid(
        strategy="fixed_size", grid=[evaluator_pb2.KnobGrid(knob=f"k{i}", values=values(1)) for i in range(33)]
    )
    with pytest.raises(
        InvalidArgument, match="the 'fixed_size' grid sets 33 knobs; a grid sets each knob once, at most 32"
    ):
        grid.check_size([wide])
    empty = evaluator_pb2.StrategyGrid(strategy="fixed_size", grid=[evaluator_pb2.KnobGrid(knob="chunk_size")])
    with pytest.raises(InvalidArgument, match="^fixed_size.chunk_size has no values to try$"):
        grid.check_size([empty])


class Model:
    def __init__(self, name: str, dimension: int | None) -> None:
        self.name, self._dimension = name, dimension

    def known_dimension(self) -> int | None:
        return self._dimension


def test_a_vector_dimension_must_be_the_models_own():
    check_dimension(Model("all-MiniLM-L6-v2", 384), 384)
    with pytest.raises(InvalidArgument, match="^all-MiniLM-L6-v2 gives 384-dimensional vectors, not 7$"):
        check_dimension(Model("all-MiniLM-L6-v2", 384), 7)
    check_dimension(Model("openai:text-embedding-3-large", None), 3072)  # learnt on the first call
    with pytest.raises(InvalidArgument, match=f"between 1 and {MAX_DIMENSION:,}, got 1000000"):
        check_dimension(Model("openai:huge", None), 1_000_000)
