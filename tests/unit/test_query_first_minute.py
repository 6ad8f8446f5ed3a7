"""The Query page's first minute and what its columns show, on hand-built inputs: the
sample's first question picked without typing, one document's overlapping or touching
chunks merged into one passage (the tokens sent still counted per chunk), extractive
answers cited chunk by chunk, and the reranking boxes checked as the retriever checks them."""

from __future__ import annotations

import pytest

from chunklab.metrics import Span
from chunklab.v1 import common_pb2, evaluator_pb2
from chunklab.views import retrieval_view
from chunklab_app import sample_loader
from frontend.forms import rerank as rerank_form
from frontend.pages.query import answer_html, first_minute

TEXT = "Fog horns warned ships. The horn sounded twice a minute. Flags showed a gale. Radio came later."
HIT, NEIGHBOR = common_pb2.CHUNK_LABEL_HIT, common_pb2.CHUNK_LABEL_NEIGHBOR


def item(start, end, index, label=NEIGHBOR, rank=0, document="d1", tokens=None):
    chunk = common_pb2.Chunk(
        chunk_id=f"{document}-{index}",
        document_id=document,
        document_name=f"{document}.md",
        chunk_index=index,
        content=TEXT[start:end],
        start_char=start,
        end_char=end,
        token_count=tokens if tokens is not None else (end - start) // 4,
    )
    return common_pb2.RetrievedChunk(chunk=chunk, label=label, rank=rank)


def test_overlapping_and_touching_chunks_of_one_document_are_one_passage_and_their_tokens_stay_counted():
    retrieved = [
        item(0, 30, 0, HIT, 1, tokens=7),
        item(24, 56, 1, tokens=8),
        item(56, 77, 2, tokens=5),
        item(82, 95, 4, HIT, 2, tokens=3),
        item(0, 10, 0, document="d2", tokens=2),
    ]
    passages = retrieval_view.passage_view(retrieved, references=[Span("d1", 10, 22)])
    assert [(p.start_char, p.end_char, [c.chunk_index for c in p.chunks]) for p in passages] == [
        (0, 77, [0, 1, 2]),
        (82, 95, [4]),
        (0, 10, [0]),
    ]
    merged = passages[0]
    assert merged.text == TEXT[0:77]  # the overlap (chars 24-30) shown once
    assert merged.repeated_chars == 6 and merged.tokens_sent == 20  # but sent twice, and counted as sent
    assert [(s.start, s.end, s.marked) for s in merged.segments] == [(0, 10, False), (10, 22, True), (22, 77, False)]
    assert passages[1].repeated_chars == 0 and passages[1].segments == ()


def test_a_passage_says_what_is_merged_in_the_page():
    from chunklab.v1 import retriever_pb2
    from frontend.views import retrieval_html

    html = retrieval_html.flat_list_html(
        retriever_pb2.RetrieveResponse(retrieved_chunks=[item(0, 30, 0, HIT, 1, tokens=7), item(24, 56, 1, tokens=8)])
    )
    assert (
        "2 chunks of d1.md merged here, chars 0–56: 6 overlapping characters shown once, though each chunk is "
        "sent in full (15 tokens sent)"
    ) in html
    assert html.count(TEXT[24:30]) == 1


def test_an_extractive_answer_cites_the_first_chunk_that_holds_each_piece():
    retrieved = [item(0, 30, 0, HIT, 1), item(24, 56, 1), item(56, 95, 2, HIT, 2)]
    answer = "Fog horns warned ships. … Flags showed a gale. … Not in the context."
    assert answer_html.cited_pieces(answer, retrieved) == [
        answer_html.Cited("Fog horns warned ships.", "hit #1 · chunk 0"),
        answer_html.Cited("Flags showed a gale.", "hit #2 · chunk 2"),
        answer_html.Cited("Not in the context.", None),
    ]


def test_the_sentence_an_empty_context_gets_is_not_checked_against_that_context():
    from services.evaluator.judging import answers

    said = answers.extractive_answer(None, "Anything?", [], answers.SentenceEmbeddings())
    assert said.text.startswith("The retrieved context is empty")
    assert answer_html.cited_pieces(said.text, []) == []
    stream = answer_html.AnswerStream()
    stream.add(evaluator_pb2.AnswerEvent(context=evaluator_pb2.AnswerContext(query_id="q")))
    stream.add(evaluator_pb2.AnswerEvent(result=evaluator_pb2.AnswerResult(answer=said.text, extractive=True)))
    html = answer_html.answer_html(stream)
    assert "not found word for word" not in html and "The retrieved context is empty" in html


def question(number, references=1):
    refs = [evaluator_pb2.Reference(document_id="d1", start_char=0, end_char=9)] * references
    return evaluator_pb2.Question(question_id=f"q{number}", text=f"Question {number}?", references=refs)


def test_the_page_opens_on_the_samples_first_labelled_question_asked_of_its_first_configurations():
    sets = [
        evaluator_pb2.QuestionSet(question_set_id="other", name="mine.jsonl"),
        evaluator_pb2.QuestionSet(question_set_id="s1", name=sample_loader.QUESTION_SET_NAME),
    ]
    assert first_minute.sample_set_id(sets) == "s1"
    assert first_minute.sample_set_id(sets[:1]) is None
    the_set = evaluator_pb2.QuestionSet(question_set_id="s1", questions=[question(1, 0), question(2), question(3)])
    offered = [
        ("fixed_size · active sets", "fixed_size/"),
        ("fixed_size · 128", "fixed_size/abc"),
        ("cluster_parent_child · active sets", "cluster_parent_child/"),
        ("recursive · active sets", "recursive/"),
    ]
    view = first_minute.first_view(the_set, offered)
    assert (view.question_set_id, view.question.question_id) == ("s1", "q2")
    assert view.configurations == ["cluster_parent_child/", "fixed_size/", "recursive/"]
    # Not there yet: no set, or nothing indexed; the page waits.
    assert first_minute.first_view(None, offered) is None
    assert first_minute.first_view(the_set, []) is None


def test_reranking_is_off_unless_chosen_and_refused_in_the_boxes_words():
    assert rerank_form.kind_choices() == ["off", "cross_encoder", "http", "tei", "llm"]
    assert rerank_form.rerank_options("off", 50, "ignored", "", top_k=5) is None
    assert rerank_form.rerank_options("tei", 30, "", " http://tei:8080/rerank ", top_k=5) == common_pb2.RerankOptions(
        kind=common_pb2.RERANKER_KIND_TEI, depth=30, base_url="http://tei:8080/rerank"
    )
    with pytest.raises(ValueError) as low:
        rerank_form.rerank_options("http", 3, "", "", top_k=5)
    assert str(low.value) == (
        "'Candidates to rerank' is 3, below top_k (5): the reranker must see at least the hits it keeps."
    )
    with pytest.raises(ValueError) as folder:
        rerank_form.rerank_options("cross_encoder", 0, "/models/ce", "http://x", top_k=5)
    assert str(folder.value) == (
        "'Reranker URL' is for http, tei and llm rerankers; a cross_encoder is a folder named by 'Reranker model'."
    )
    with pytest.raises(ValueError, match=r"^'Candidates to rerank' must be between 1 and 100, got 500\.$"):
        rerank_form.rerank_options("llm", 500, "", "", top_k=5)
    with pytest.raises(ValueError, match=r"^'Reranker URL' value|^'ftp://x' is not an http"):
        rerank_form.rerank_options("http", 0, "", "ftp://x", top_k=5)


def test_the_evaluators_warm_up_answers_extractively_from_its_fixed_context():
    from services.evaluator.judging import answers

    class Provider:
        """Scores by how many of the question's words a sentence has (the keeper's one wins)."""

        name, dimension = "words", 2
        asked: list[str] = []

        def embed_documents(self, texts):
            import numpy as np

            return np.array([[float("keeper" in t), 1.0] for t in texts], dtype=np.float32)

        def embed_query(self, text):
            import numpy as np

            self.asked.append(text)
            return np.array([1.0, 0.0], dtype=np.float32)

    provider = Provider()
    answers.warm_up(provider)
    assert provider.asked == ["What does a keeper do?"]


def test_the_experiment_form_sends_its_reranking_boxes_checked_against_its_top_k():
    from frontend.forms.retrieval import ROW, RetrievalInputs
    from frontend.pages.experiments.experiment_form import RunSettings

    boxes = {name: object() for name in ("question_set", "name", "embedding_model", "retrieval_only", "documents")}
    row = RetrievalInputs({s.path: object() for s in ROW})  # the retrieval row, by setting path
    settings = RunSettings(
        **boxes,
        retrieval=row,
        answer=(object(), object(), object()),
        judge=(object(), object(), object()),
        validation=(object(), object()),
        rerank=(object(), object(), object(), object()),
    )
    values = {
        **{row[s.path]: None for s in ROW},  # every box of the row empty but those set below
        boxes["question_set"]: "qs",
        boxes["name"]: "",
        row["top_k"]: 8,
        row["neighbor_prev"]: 0,
        row["neighbor_next"]: 0,
        row["window"]: "",
        boxes["embedding_model"]: "",
        row["hybrid"]: True,
        row["recency_lambda"]: 0,
        boxes["retrieval_only"]: True,
        boxes["documents"]: [],
        **{c: "" for c in (*settings.answer, *settings.judge)},
        settings.validation[0]: next(iter(experiment_config_validations())),
        settings.validation[1]: 0,
    }
    kind, depth, model, url = settings.rerank
    grids = [evaluator_pb2.StrategyGrid(strategy="fixed_size")]
    config = settings.config({**values, kind: "cross_encoder", depth: 40, model: "/models/ms-marco", url: ""}, grids)
    assert config.retrieval.rerank == common_pb2.RerankOptions(
        kind=common_pb2.RERANKER_KIND_CROSS_ENCODER, depth=40, model="/models/ms-marco"
    )
    assert not settings.config({**values, kind: "off", depth: 0, model: "", url: ""}, grids).retrieval.HasField(
        "rerank"
    )
    with pytest.raises(ValueError, match=r"^'Candidates to rerank' is 5, below top_k \(8\)"):
        settings.config({**values, kind: "llm", depth: 5, model: "", url: ""}, grids)


def experiment_config_validations():
    from frontend.forms import experiment_config

    return experiment_config.VALIDATIONS


def test_without_the_sample_the_columns_say_whether_it_is_coming_or_was_left_out(monkeypatch):
    from chunklab.settings import load_settings

    assert "loads it in the background" in first_minute.without_sample(load_settings().sample)
    monkeypatch.setenv("CHUNKLAB_SAMPLE", "0")  # what `python -m chunklab_app.stack --no-sample` sets for the UI
    left_out = first_minute.without_sample(load_settings().sample)
    assert "started without the sample" in left_out and "Documents page" in left_out
