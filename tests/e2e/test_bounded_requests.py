"""Hostile requests through the real services (the stack, each service its own
process), as issue 14 found them: each is refused with INVALID_ARGUMENT and a
message that names the field and quotes the input only in an excerpt, before
any work, and nothing is stored or indexed. Raw stubs are used, so that
nothing on the client side checks first."""

from __future__ import annotations

import json
import math

import grpc
import pytest

from chunklab.rpc import channels, limits, paging
from chunklab.v1 import chunker_pb2, common_pb2, documents_pb2, evaluator_pb2, ingest_pb2, retriever_pb2
from tests.support.status import status_of

pytestmark = pytest.mark.e2e

INVALID = grpc.StatusCode.INVALID_ARGUMENT
TEN_MB = "x" * 10_000_000
X_EXCERPT = "'" + "x" * 39 + "…'"
WORDS = "word " * 2_000_000  # 10 MB of text
WORDS_EXCERPT = "'word word word word word word word word…'"
FORGED_TOKEN = paging.encode_token(10**30)
FORGED = "page_token is not one this service gave out; pass next_page_token unchanged"


@pytest.fixture(scope="module")
def stubs(stack):
    a = stack.addresses
    return (
        channels.ingest(a["ingest"]),
        channels.chunker(a["chunker"]),
        channels.retriever(a["retriever"]),
        channels.evaluator(a["evaluator"]),
    )


@pytest.fixture(scope="module")
def document(stack) -> documents_pb2.Document:
    return (
        stack.client()
        .upload_document(b"# Bounds\n\nEvery request is checked first.\n", name="bounds.md", collection="bounded")
        .document
    )


@pytest.fixture(scope="module")
def question_set(stubs) -> evaluator_pb2.QuestionSet:
    evaluator = stubs[3]
    return evaluator.CreateQuestionSet(
        evaluator_pb2.CreateQuestionSetRequest(
            name="bounded", questions=[evaluator_pb2.Question(text="What is checked first?")]
        ),
        timeout=30,
    )


def upload(ingest, header: ingest_pb2.UploadHeader, data: bytes = b"# A\n\ntext\n"):
    messages = [ingest_pb2.CreateDocumentRequest(header=header), ingest_pb2.CreateDocumentRequest(data=data)]
    return ingest.CreateDocument(iter(messages), timeout=30)


def documents_total(ingest) -> int:
    return ingest.ListDocuments(ingest_pb2.ListDocumentsRequest(), timeout=30).total_size


def experiments_total(evaluator) -> int:
    return len(evaluator.ListExperiments(evaluator_pb2.ListExperimentsRequest(page_size=1000), timeout=30).experiments)


def values(*numbers: int) -> list[common_pb2.KnobValue]:
    return [common_pb2.KnobValue(int_value=n) for n in numbers]


def run(evaluator, config: evaluator_pb2.ExperimentConfig, dry_run: bool = False):
    return lambda: evaluator.RunExperiment(
        evaluator_pb2.RunExperimentRequest(config=config, dry_run=dry_run), timeout=60
    )


# -- grids ---------------------------------------------------------------------------


def test_a_grid_of_a_million_cells_is_refused_by_its_count(stubs, question_set):
    evaluator = stubs[3]
    square = evaluator_pb2.StrategyGrid(
        strategy="fixed_size",
        grid=[
            evaluator_pb2.KnobGrid(knob="chunk_size", values=values(*range(100, 1100))),
            evaluator_pb2.KnobGrid(knob="chunk_overlap", values=values(*range(1000))),
        ],
    )
    one_axis = evaluator_pb2.StrategyGrid(
        strategy="fixed_size", grid=[evaluator_pb2.KnobGrid(knob="chunk_size", values=values(*range(100, 1_000_100)))]
    )
    for grid in (square, one_axis):
        config = evaluator_pb2.ExperimentConfig(question_set_id=question_set.question_set_id, strategies=[grid])
        assert status_of(run(evaluator, config, dry_run=True)) == (
            INVALID,
            "the grids make 1,000,000 runs; at most 200 per experiment",
        )


def test_bad_grids_and_nan_settings_are_refused_and_no_experiment_is_stored(stubs, question_set):
    evaluator = stubs[3]
    before = experiments_total(evaluator)
    overlap_is_size = evaluator_pb2.StrategyGrid(
        strategy="fixed_size",
        grid=[
            evaluator_pb2.KnobGrid(knob="chunk_size", values=values(100)),
            evaluator_pb2.KnobGrid(knob="chunk_overlap", values=values(100)),
        ],
    )
    config = evaluator_pb2.ExperimentConfig(
        question_set_id=question_set.question_set_id, strategies=[overlap_is_size], retrieval_only=True
    )
    assert status_of(run(evaluator, config)) == (
        INVALID,
        (
            "fixed_size[chunk_size=100,chunk_overlap=100]: fixed_size.chunk_overlap must be smaller than "
            "chunk_size (100), got 100"
        ),
    )
    nan_decay = evaluator_pb2.ExperimentConfig(
        question_set_id=question_set.question_set_id,
        strategies=[evaluator_pb2.StrategyGrid(strategy="fixed_size")],
        retrieval=common_pb2.RetrievalOptions(recency_lambda=math.nan),
        retrieval_only=True,
    )
    assert status_of(run(evaluator, nan_decay)) == (
        INVALID,
        "config.retrieval.recency_lambda is nan; give a finite number",
    )
    mode = evaluator_pb2.ExperimentConfig(
        question_set_id=question_set.question_set_id,
        strategies=[evaluator_pb2.StrategyGrid(strategy="fixed_size")],
        validation=evaluator_pb2.Validation(mode=9),
    )
    assert status_of(run(evaluator, mode)) == (
        INVALID,
        (
            "config.validation.mode is 9, which ValidationMode does not declare; use one of VALIDATION_MODE_UNSPECIFIED, "
            "VALIDATION_MODE_NONE, VALIDATION_MODE_HOLDOUT, VALIDATION_MODE_K_FOLD"
        ),
    )
    assert experiments_total(evaluator) == before


# -- sizes -----------------------------------------------------------------------------


def test_ten_megabytes_of_query_or_question_cost_no_search(stubs):
    _, _, retriever, evaluator = stubs
    options = common_pb2.RetrievalOptions(strategy="fixed_size")
    assert status_of(
        lambda: retriever.Retrieve(retriever_pb2.RetrieveRequest(query=WORDS, options=options), timeout=30)
    ) == (INVALID, f"query is 10,000,000 characters long, over its limit of 8,000 (it starts {WORDS_EXCERPT})")
    answer = evaluator_pb2.AnswerRequest(question=WORDS, retrieval=options)
    assert status_of(lambda: evaluator.Answer(answer, timeout=30)) == (
        INVALID,
        f"question is 10,000,000 characters long, over its limit of 8,000 (it starts {WORDS_EXCERPT})",
    )


def test_ten_megabyte_names_and_questions_are_not_stored(stubs, stack):
    ingest, _, _, evaluator = stubs
    before = documents_total(ingest)
    assert status_of(lambda: upload(ingest, ingest_pb2.UploadHeader(name=TEN_MB + ".md"))) == (
        INVALID,
        f"header.name is 10,000,003 characters long, over its limit of 256 (it starts {X_EXCERPT})",
    )
    assert documents_total(ingest) == before
    named = evaluator_pb2.CreateQuestionSetRequest(name=TEN_MB, questions=[evaluator_pb2.Question(text="q?")])
    assert status_of(lambda: evaluator.CreateQuestionSet(named, timeout=30)) == (
        INVALID,
        f"name is 10,000,000 characters long, over its limit of 256 (it starts {X_EXCERPT})",
    )
    asked = evaluator_pb2.CreateQuestionSetRequest(name="long", questions=[evaluator_pb2.Question(text=TEN_MB)])
    assert status_of(lambda: evaluator.CreateQuestionSet(asked, timeout=30)) == (
        INVALID,
        f"questions[0].text is 10,000,000 characters long, over its limit of 8,000 (it starts {X_EXCERPT})",
    )
    # A file's questions are bounded as a request's are.
    line = json.dumps({"question": TEN_MB}).encode() + b"\n"
    assert status_of(lambda: stack.client().import_question_set(line, name="long.jsonl")) == (
        INVALID,
        f"line 1: the question is 10,000,000 characters long, over its limit of 8,000 (it starts {X_EXCERPT})",
    )
    sets = evaluator.ListQuestionSets(evaluator_pb2.ListQuestionSetsRequest(page_size=1000), timeout=30).question_sets
    assert not [s for s in sets if s.name in ("long", "long.jsonl") or len(s.name) > 256]


def test_a_ten_megabyte_id_is_invalid_in_every_service_never_a_transport_error(stubs):
    ingest, chunker, retriever, evaluator = stubs
    calls = [
        lambda: ingest.GetDocument(ingest_pb2.GetDocumentRequest(document_id=TEN_MB), timeout=30),
        lambda: chunker.PreviewChunks(
            chunker_pb2.PreviewChunksRequest(document_id=TEN_MB, strategy=common_pb2.StrategySpec(name="fixed_size")),
            timeout=30,
        ),
        lambda: retriever.RestoreDocument(retriever_pb2.RestoreDocumentRequest(document_id=TEN_MB), timeout=30),
        lambda: evaluator.GetExperiment(evaluator_pb2.GetExperimentRequest(experiment_id=TEN_MB), timeout=30),
    ]
    for call, field in zip(calls, ("document_id", "document_id", "document_id", "experiment_id")):
        assert status_of(call) == (
            INVALID,
            f"{field} is 10,000,000 characters long, over its limit of 128 (it starts {X_EXCERPT})",
        )


# -- timestamps, enums, NaN --------------------------------------------------------------

OUT_OF_RANGE = (
    "is outside 0001-01-01 to 9999-12-31 (seconds 1000000000000000, nanos 0); "
    "give a date in that range, or leave it unset"
)


def test_out_of_range_timestamps_are_invalid_not_internal(stubs):
    ingest, _, retriever, _ = stubs
    header = ingest_pb2.UploadHeader(name="late.md", published_at={"seconds": 10**15})
    assert status_of(lambda: upload(ingest, header)) == (INVALID, f"header.published_at {OUT_OF_RANGE}")
    request = retriever_pb2.RetrieveRequest(
        query="when?", options=common_pb2.RetrievalOptions(strategy="fixed_size"), as_of={"seconds": 10**15}
    )
    assert status_of(lambda: retriever.Retrieve(request, timeout=30)) == (INVALID, f"as_of {OUT_OF_RANGE}")
    sweep = retriever_pb2.SweepRequest(dry_run=True, as_of={"seconds": 10**15})
    assert status_of(lambda: retriever.Sweep(sweep, timeout=30)) == (INVALID, f"as_of {OUT_OF_RANGE}")


def test_enum_values_the_contract_does_not_declare_are_refused_and_nothing_is_stored(stubs, document):
    ingest, chunker, _, evaluator = stubs
    before = documents_total(ingest)
    assert status_of(lambda: upload(ingest, ingest_pb2.UploadHeader(name="odd.md", format=99))) == (
        INVALID,
        (
            "header.format is 99, which DocumentFormat does not declare; use one of DOCUMENT_FORMAT_UNSPECIFIED, "
            "DOCUMENT_FORMAT_MARKDOWN, DOCUMENT_FORMAT_TEXT, DOCUMENT_FORMAT_DOCX, DOCUMENT_FORMAT_PDF, DOCUMENT_FORMAT_HTML"
        ),
    )
    assert documents_total(ingest) == before
    view = ingest_pb2.GetDocumentRequest(document_id=document.document_id, view=5)
    assert status_of(lambda: ingest.GetDocument(view, timeout=30)) == (
        INVALID,
        (
            "view is 5, which DocumentView does not declare; use one of DOCUMENT_VIEW_UNSPECIFIED, DOCUMENT_VIEW_BASIC, "
            "DOCUMENT_VIEW_FULL"
        ),
    )
    report = evaluator_pb2.GetReportRequest(experiment_id="any", view=8)
    assert status_of(lambda: evaluator.GetReport(report, timeout=30)) == (
        INVALID,
        (
            "view is 8, which ReportView does not declare; use one of REPORT_VIEW_UNSPECIFIED, REPORT_VIEW_BOTH, "
            "REPORT_VIEW_MANAGERIAL, REPORT_VIEW_TECHNICAL"
        ),
    )
    imported = [
        evaluator_pb2.ImportQuestionSetRequest(header=evaluator_pb2.ImportHeader(name="odd", format=3)),
        evaluator_pb2.ImportQuestionSetRequest(data=b'{"question": "a"}\n'),
    ]
    assert status_of(lambda: evaluator.ImportQuestionSet(iter(imported), timeout=30)) == (
        INVALID,
        (
            "header.format is 3, which QuestionSetFormat does not declare; use one of QUESTION_SET_FORMAT_UNSPECIFIED, "
            "QUESTION_SET_FORMAT_JSONL, QUESTION_SET_FORMAT_CSV"
        ),
    )
    process = chunker_pb2.ProcessDocumentRequest(
        document_id=document.document_id, activation=4, strategies=[common_pb2.StrategySpec(name="fixed_size")]
    )
    assert status_of(lambda: chunker.ProcessDocument(process, timeout=60)) == (
        INVALID,
        (
            "activation is 4, which Activation does not declare; use one of ACTIVATION_UNSPECIFIED, ACTIVATION_MAKE_ACTIVE, "
            "ACTIVATION_KEEP_CURRENT"
        ),
    )


def test_a_nan_threshold_is_refused_and_nothing_is_indexed(stubs, document):
    _, chunker, retriever, _ = stubs
    spec = common_pb2.StrategySpec(name="semantic", knobs={"threshold": common_pb2.KnobValue(double_value=math.nan)})
    process = chunker_pb2.ProcessDocumentRequest(document_id=document.document_id, strategies=[spec])
    assert status_of(lambda: chunker.ProcessDocument(process, timeout=60)) == (
        INVALID,
        "strategies[0].knobs['threshold'].double_value is nan; give a finite number",
    )
    sets = retriever.ListIndexedSets(retriever_pb2.ListIndexedSetsRequest(document_id=document.document_id), timeout=30)
    assert list(sets.sets) == []


# -- names the services must agree on ------------------------------------------------------


def test_ingest_refuses_the_collection_names_the_retriever_refuses_with_the_same_words(stubs):
    ingest, _, retriever, _ = stubs
    expected = (
        "'../../etc' is not a collection name: use letters, digits, '.', '_' or '-' "
        "(up to 128, starting with a letter or digit)"
    )
    before = documents_total(ingest)
    assert status_of(lambda: upload(ingest, ingest_pb2.UploadHeader(name="etc.md", collection="../../etc"))) == (
        INVALID,
        expected,
    )
    window = retriever_pb2.UpdateFreshnessWindowRequest(
        window=retriever_pb2.FreshnessWindow(collection="../../etc", max_age_days=1)
    )
    assert status_of(lambda: retriever.UpdateFreshnessWindow(window, timeout=30)) == (INVALID, expected)
    assert documents_total(ingest) == before


def test_answer_with_an_unknown_strategy_is_refused_not_answered_empty(stubs):
    _, chunker, _, evaluator = stubs
    names = ", ".join(
        s.name for s in chunker.ListStrategies(chunker_pb2.ListStrategiesRequest(), timeout=30).strategies
    )
    request = evaluator_pb2.AnswerRequest(
        question="What is checked first?", retrieval=common_pb2.RetrievalOptions(strategy="magic")
    )
    assert status_of(lambda: evaluator.Answer(request, timeout=30)) == (
        INVALID,
        f"unknown strategy 'magic'; available: {names}",
    )


def test_index_chunks_takes_only_a_known_model_at_its_own_dimension_and_leaves_no_index_behind(stubs):
    retriever = stubs[2]

    def indexes() -> list[tuple[str, int]]:
        stats = retriever.GetIndexStats(retriever_pb2.GetIndexStatsRequest(), timeout=30)
        return sorted((i.embedding_model, i.dimension) for i in stats.indexes)

    before = indexes()
    for model, dimension, message in (
        (
            "bogus-model",
            7,
            "unknown embedding model 'bogus-model'; available: all-MiniLM-L6-v2, all-MiniLM-L6-v2-onnx, "
            "all-MiniLM-L6-v2-onnx-int8, multilingual-e5-small; "
            "or openai:<model> for an OpenAI-compatible endpoint",
        ),
        ("all-MiniLM-L6-v2", 7, "all-MiniLM-L6-v2 gives 384-dimensional vectors, not 7"),
    ):
        header = retriever_pb2.IndexHeader(
            document_id="bounded-doc",
            strategy="fixed_size",
            config_id="c1",
            embedding_model=model,
            dimension=dimension,
            expansion=common_pb2.EXPANSION_KIND_NEIGHBORS,
        )
        chunk = retriever_pb2.IndexedChunk(
            vector=[1.0] * dimension,
            chunk=common_pb2.Chunk(
                chunk_id="6f1c3f0e-8a5b-5c1e-9d7a-2b3c4d5e6f70", document_id="bounded-doc", strategy="fixed_size"
            ),
        )
        messages = [
            retriever_pb2.IndexChunksRequest(header=header),
            retriever_pb2.IndexChunksRequest(batch=retriever_pb2.IndexChunkBatch(chunks=[chunk])),
        ]
        assert status_of(lambda: retriever.IndexChunks(iter(messages), timeout=30)) == (INVALID, message)
    assert indexes() == before


# -- page tokens ---------------------------------------------------------------------------


def test_forged_page_tokens_with_huge_offsets_are_invalid_in_every_list(stubs):
    ingest, _, retriever, evaluator = stubs
    calls = [
        lambda: ingest.ListDocuments(ingest_pb2.ListDocumentsRequest(page_token=FORGED_TOKEN), timeout=30),
        lambda: retriever.ListIndexedSets(retriever_pb2.ListIndexedSetsRequest(page_token=FORGED_TOKEN), timeout=30),
        lambda: evaluator.ListQuestionSets(evaluator_pb2.ListQuestionSetsRequest(page_token=FORGED_TOKEN), timeout=30),
        lambda: evaluator.ListExperiments(evaluator_pb2.ListExperimentsRequest(page_token=FORGED_TOKEN), timeout=30),
    ]
    for call in calls:
        assert status_of(call) == (INVALID, FORGED)
    long_token = ingest_pb2.ListDocumentsRequest(page_token="p" * (limits.SETTING_CHARS + 1))
    code, message = status_of(lambda: ingest.ListDocuments(long_token, timeout=30))
    assert code == INVALID and message.startswith("page_token is 2,049 characters long, over its limit of 2,048")
