"""The Query page's RPCs: Answer (retrieve, then answer as it is written,
stored as a query), SubmitFeedback and SummarizeFeedback on those queries."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

from chunklab import retrieval
from chunklab.errors import Cancelled, InvalidArgument, Unavailable
from chunklab.llm import ChatClient, LLMError
from chunklab.timeutil import to_proto, utcnow
from chunklab.v1 import common_pb2, evaluator_pb2
from services.evaluator.deps import RunnerDeps
from services.evaluator.experiments import grid
from services.evaluator.judging import answers, models, pricing
from services.evaluator.peers import retrieve_request
from services.evaluator.storage.tables import FeedbackRow, QueryRow


class QueryService:
    def __init__(self, deps: RunnerDeps) -> None:
        self._deps = deps
        self._repo = deps.repository

    def answer(
        self, request: evaluator_pb2.AnswerRequest, cancelled: threading.Event | None = None
    ) -> Iterator[evaluator_pb2.AnswerEvent]:
        """The context, the answer as it is written, then the result, stored as a
        query. Once `cancelled` is set (the call ended) the model stops writing,
        nothing is stored and Cancelled is raised."""
        cancelled = cancelled or threading.Event()
        question = request.question.strip()
        if not question:
            raise InvalidArgument("the question is empty: ask something")
        settings = common_pb2.RetrievalOptions()
        settings.CopyFrom(request.retrieval)
        retrieval.check_options(settings)
        self._deps.defaults.policy.check(settings.rerank.base_url, "retrieval.rerank.base_url")
        endpoint = models.resolve(request.answer_model, self._deps.defaults, models.EXTRACTIVE, field="answer_model")
        grid.strategy_info(settings.strategy, self._deps.peers.list_strategies())  # not an empty answer for a typo
        provider = self._deps.provider_for(settings.embedding_model or self._deps.default_embedding_model)
        settings.embedding_model = provider.name
        settings.top_k = retrieval.top_k(settings)
        response = self._deps.peers.retrieve(retrieve_request(question, settings))
        if cancelled.is_set():
            raise Cancelled("the question was not answered: its call ended during retrieval")
        query_id = str(uuid.uuid4())
        context = evaluator_pb2.AnswerContext(
            query_id=query_id, retrieved_chunks=response.retrieved_chunks, expansion_tree=response.expansion_tree
        )
        yield evaluator_pb2.AnswerEvent(context=context)
        started = time.perf_counter()
        if endpoint is None:
            answer = answers.extractive_answer(provider, question, response.retrieved_chunks, self._deps.sentence_cache)
            yield evaluator_pb2.AnswerEvent(delta=answer.text)
        else:
            answer = None
            try:
                for piece in answers.stream_llm_answer(
                    ChatClient(endpoint), question, response.retrieved_chunks, cancelled
                ):
                    if isinstance(piece, answers.Answer):
                        answer = piece
                    else:
                        yield evaluator_pb2.AnswerEvent(delta=piece)
            except LLMError as exc:
                raise Unavailable(f"the answer model failed: {exc}") from None
        latency = (time.perf_counter() - started) * 1e3
        usage = common_pb2.TokenUsage(
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
            llm_calls=0 if answer.extractive else 1,
            estimated_cost_usd=0.0
            if answer.extractive
            else pricing.cost_usd(answer.model, answer.prompt_tokens, answer.completion_tokens),
        )
        self._repo.add_query(
            QueryRow(
                query_id=query_id,
                question=question,
                strategy=settings.strategy,
                answer=answer.text,
                extractive=answer.extractive,
                model=answer.model,
                latency_ms=latency,
                created_at=utcnow(),
                context=context.SerializeToString(),
                settings=settings.SerializeToString(),
            )
        )
        yield evaluator_pb2.AnswerEvent(
            result=evaluator_pb2.AnswerResult(
                query_id=query_id,
                answer=answer.text,
                extractive=answer.extractive,
                model=answer.model,
                usage=usage,
                latency_ms=latency,
            )
        )

    # -- feedback -----------------------------------------------------------

    def submit_feedback(self, request: evaluator_pb2.SubmitFeedbackRequest) -> evaluator_pb2.Feedback:
        if not request.query_id:
            raise InvalidArgument("query_id is empty: rate the query_id an Answer returned")
        query = self._repo.query(request.query_id)
        now = utcnow()
        row = FeedbackRow(
            feedback_id=str(uuid.uuid4()),
            query_id=query.query_id,
            thumbs_up=request.thumbs_up,
            comment=request.comment,
            strategy=query.strategy,
            created_at=now,
        )
        self._repo.add_feedback(row)
        context = evaluator_pb2.AnswerContext.FromString(query.context)
        return evaluator_pb2.Feedback(
            feedback_id=row.feedback_id,
            query_id=query.query_id,
            thumbs_up=row.thumbs_up,
            comment=row.comment,
            strategy=row.strategy,
            created_at=to_proto(now),
            question=query.question,
            answer=query.answer,
            retrieved_chunks=context.retrieved_chunks,
        )

    def summarize_feedback(self) -> evaluator_pb2.SummarizeFeedbackResponse:
        totals: dict[str, list[int]] = {}
        for strategy, up, count in self._repo.feedback_counts():
            totals.setdefault(strategy, [0, 0])[0 if up else 1] += count
        return evaluator_pb2.SummarizeFeedbackResponse(
            strategies=[
                evaluator_pb2.FeedbackSummary(strategy=s, thumbs_up=u, thumbs_down=d)
                for s, (u, d) in sorted(totals.items())
            ]
        )
