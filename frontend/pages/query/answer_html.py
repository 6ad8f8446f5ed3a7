"""The Query page's answer: following the Answer stream and drawing it.

EvaluatorService.Answer sends the retrieval context first, then the answer in
pieces as it is written, then the result. `AnswerStream` folds those events
into what the page shows at each moment, so the page can redraw after every
event and the reader sees the answer grow. No Gradio here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chunklab.retrieval import options as built_options
from chunklab.v1 import common_pb2, evaluator_pb2
from chunklab.views import numbers, retrieval_view
from chunklab.views.metric_format import usd
from chunklab.views.render import render

# The data-state values, in the order an answer goes through them.
WAITING, WRITING, DONE, FAILED = "retrieving", "writing", "done", "failed"


@dataclass
class AnswerStream:
    """The answer so far: its context, the text written until now, and the result once it came."""

    context: evaluator_pb2.AnswerContext | None = None
    pieces: list[str] = field(default_factory=list)
    result: evaluator_pb2.AnswerResult | None = None

    def add(self, event: evaluator_pb2.AnswerEvent) -> None:
        kind = event.WhichOneof("event")
        if kind == "context":
            self.context = event.context
        elif kind == "delta":
            self.pieces.append(event.delta)
        elif kind == "result":
            self.result = event.result

    @property
    def text(self) -> str:
        # The result holds the whole answer; before it, what the pieces add up to.
        return self.result.answer if self.result is not None else "".join(self.pieces)

    @property
    def state(self) -> str:
        if self.result is not None:
            return DONE
        return WRITING if self.context is not None else WAITING

    @property
    def query_id(self) -> str:
        if self.result is not None:
            return self.result.query_id
        return self.context.query_id if self.context is not None else ""


# How extractive answers join sentences that do not follow one another in their chunk
# (services/evaluator/judging/answers.py writes them so).
GAP = " … "


@dataclass(frozen=True)
class Cited:
    """A stretch of an answer and the context chunk it was taken from ("hit #1 · chunk 6"),
    None where no chunk holds it word for word."""

    text: str
    cite: str | None


def _words(text: str) -> str:
    return " ".join(text.split())


def cited_pieces(answer: str, retrieved) -> list[Cited]:
    """An extractive answer cut where it skips ahead (GAP), each piece with the first chunk of
    the context, in the order the LLM would read it, that holds it word for word (line breaks
    and runs of spaces read as one space, as the answer writes them): where it came from.
    An empty context has nothing to cite: the answer is then the evaluator's notice that it is
    empty, which is not flagged as missing from it."""
    contents = [_words(item.chunk.content) for item in retrieved]
    if not any(contents):
        # No context to take sentences from: the answer is the evaluator's own sentence saying
        # so ("The retrieved context is empty: …"), not a piece of the context to look for.
        return []
    pieces = []
    for text in answer.split(GAP):
        where = next((i for i, content in enumerate(contents) if _words(text) and _words(text) in content), None)
        if where is None:
            pieces.append(Cited(text, None))
            continue
        view = retrieval_view.chunk_view(retrieved[where])
        pieces.append(Cited(text, f"{view.badge} · {view.unit} {view.chunk_index}"))
    return pieces


def answer_html(stream: AnswerStream, error: str = "") -> str:
    """The answer box: who wrote it (an LLM, or extractive), the text escaped, and its cost.

    With an error (the stream broke off), what was written so far stays, marked as cut short.
    """
    state = FAILED if error else stream.state
    result = stream.result
    facts = []
    if result is not None:
        usage = result.usage
        facts.append(numbers.milliseconds(result.latency_ms))
        if usage.llm_calls:
            facts.append(
                f"{numbers.count(usage.prompt_tokens)} prompt + {numbers.count(usage.completion_tokens)} completion tokens"
            )
            facts.append(f"≈ {usd(usage.estimated_cost_usd)}")
    return render(
        "frontend",
        "answer.html.j2",
        state=state,
        error=error,
        extractive=None if error or result is None else result.extractive,
        model=result.model if result is not None else "",
        text=stream.text,
        pending=state in (WAITING, WRITING),
        facts=facts,
        cited=cited_pieces(result.answer, stream.context.retrieved_chunks)
        if result is not None and result.extractive and stream.context is not None and not error
        else [],
    )


def retrieval_options(
    strategy: str,
    *,
    top_k: int = 5,
    document_ids: list[str] | None = None,
    collections: list[str] | None = None,
    languages: list[str] | None = None,
    embedding_model: str = "",
    config_id: str = "",
    rerank: common_pb2.RerankOptions | None = None,
    **row,
) -> common_pb2.RetrievalOptions:
    """The Query form's retrieval options: `row` the retrieval row's settings by path
    (forms.retrieval.row_values: neighbor_prev, window, hybrid, recency_lambda, …), filled
    by chunklab.retrieval.options; `window` None leaves the set's own window, an empty
    `config_id` searches each document's active set, `rerank` None (or off) reranks nothing."""
    retrieval = built_options(
        {
            "strategy": strategy,
            "config_id": config_id,
            "top_k": top_k,
            **row,
            "filter.document_ids": document_ids or [],
            "filter.collections": collections or [],
            "filter.languages": languages or [],
            "embedding_model": embedding_model,
        }
    )
    if rerank is not None:
        retrieval.rerank.CopyFrom(rerank)
    return retrieval


def answer_request(
    question: str, strategy: str, *, answer_model: evaluator_pb2.ModelEndpoint | None = None, **options
) -> evaluator_pb2.AnswerRequest:
    """The AnswerRequest for the Query form: the question, retrieval_options(strategy, **options)
    and the answer model (None: the stack's own)."""
    request = evaluator_pb2.AnswerRequest(question=question.strip(), retrieval=retrieval_options(strategy, **options))
    if answer_model is not None:
        request.answer_model.CopyFrom(answer_model)
    return request


def feedback_html(feedback: evaluator_pb2.Feedback, summary: list[evaluator_pb2.FeedbackSummary]) -> str:
    """Thanks for the rating, and the running tally per strategy."""
    return render(
        "frontend",
        "feedback.html.j2",
        thumbs_up=feedback.thumbs_up,
        strategy=feedback.strategy,
        verdict="👍 helpful" if feedback.thumbs_up else "👎 not helpful",
        tally=[{"strategy": s.strategy, "thumbs_up": s.thumbs_up, "thumbs_down": s.thumbs_down} for s in summary],
    )
