"""One question of one run: retrieved and measured against its references, then
(unless the experiment is retrieval only) answered and judged."""

from __future__ import annotations

import threading
import time

from chunklab import retrieval
from chunklab.errors import Cancelled, ServiceError, Unavailable
from chunklab.llm import ChatClient, LLMError
from chunklab.metrics import cosine
from chunklab.v1 import common_pb2, evaluator_pb2, retriever_pb2
from services.evaluator.deps import RunnerDeps
from services.evaluator.experiments import per_document
from services.evaluator.experiments.grid import Cell
from services.evaluator.experiments.plan import Plan
from services.evaluator.judging import answers, judge, pricing
from services.evaluator.judging.scoring import retrieval_metrics
from services.evaluator.peers import retrieve_request


class Interrupted(Exception):
    """The service is stopping, or the experiment was cancelled: it is marked interrupted."""

    def __init__(self, cancelled: bool = False) -> None:
        super().__init__("cancelled" if cancelled else "stopping")
        self.cancelled = cancelled


def expected_answer(question: evaluator_pb2.Question) -> str:
    """The expected answer, or the reference excerpts joined when there is none."""
    if question.expected_answer:
        return question.expected_answer
    return "\n".join(r.content for r in question.references)


class Asker:
    def __init__(self, deps: RunnerDeps, stopping: threading.Event) -> None:
        """stopping: set once the service stops; an LLM answer being written stops with it."""
        self._deps = deps
        self._stopping = stopping

    def ask(
        self,
        cell: Cell,
        run: evaluator_pb2.ExperimentRun,
        question: evaluator_pb2.Question,
        plan: Plan,
        answer_client: ChatClient | None,
        judge_runner: judge.Judge | None,
    ) -> evaluator_pb2.QuestionResult:
        result = evaluator_pb2.QuestionResult(
            question_id=question.question_id,
            question=question.text,
            run_key=cell.run_key,
            document_ids=per_document.question_documents(question),
        )
        response = self._retrieve(question, run.retrieval, result)
        if response is None or plan.config.retrieval_only:
            return result
        answer = self._answer(question, response.retrieved_chunks, plan, answer_client, result)
        if answer is None:
            return result
        result.answer, result.extractive = answer.text, answer.extractive
        result.metrics.answer_ms = answer.latency_ms
        usage = result.usage
        usage.prompt_tokens += answer.prompt_tokens
        usage.completion_tokens += answer.completion_tokens
        if not answer.extractive:
            usage.llm_calls += 1
            usage.estimated_cost_usd += pricing.cost_usd(answer.model, answer.prompt_tokens, answer.completion_tokens)
        expected = expected_answer(question)
        if expected and answer.text:
            vectors = plan.provider.embed_documents([answer.text, expected])
            result.metrics.embedding_answer_similarity = max(0.0, cosine(vectors[0], vectors[1]))
        self._judge(question, response, answer, expected, judge_runner, result)
        return result

    def _retrieve(
        self,
        question: evaluator_pb2.Question,
        options: common_pb2.RetrievalOptions,
        result: evaluator_pb2.QuestionResult,
    ) -> retriever_pb2.RetrieveResponse | None:
        """The retrieved chunks, measured into `result`; None when the retriever refused the
        question (said in `result.error`). A retriever out of reach stops the experiment."""
        request = retrieve_request(question.text, options)
        top_k = retrieval.top_k(options)
        started = time.perf_counter()
        try:
            response = self._deps.peers.retrieve(request)
        except Unavailable:
            raise
        except ServiceError as exc:
            result.error = f"retrieval failed: {exc.message}"
            result.metrics.CopyFrom(retrieval_metrics([], common_pb2.ExpansionTree(), question.references, top_k))
            return None
        retrieve_ms = (time.perf_counter() - started) * 1e3
        result.retrieved_chunks.extend(response.retrieved_chunks)
        result.expansion_tree.CopyFrom(response.expansion_tree)
        metrics = retrieval_metrics(response.retrieved_chunks, response.expansion_tree, question.references, top_k)
        metrics.retrieve_ms = retrieve_ms
        result.metrics.CopyFrom(metrics)
        return response

    def _answer(
        self, question, retrieved, plan: Plan, client: ChatClient | None, result: evaluator_pb2.QuestionResult
    ) -> answers.Answer | None:
        if client is None:
            return answers.extractive_answer(plan.provider, question.text, retrieved, self._deps.sentence_cache)
        try:
            final = None
            for piece in answers.stream_llm_answer(client, question.text, retrieved, self._stopping):
                if isinstance(piece, answers.Answer):
                    final = piece
            return final
        except Cancelled:
            raise Interrupted() from None
        except LLMError as exc:
            result.error = f"the answer model failed: {exc}"
            result.usage.llm_calls += 1
            result.judge.CopyFrom(
                evaluator_pb2.JudgeScores(
                    prompt_version=judge.prompt_version(),
                    **{m: judge.not_measured("no answer to judge") for m in judge.MEASURES},
                )
            )
            return None

    @staticmethod
    def _judge(
        question: evaluator_pb2.Question,
        response: retriever_pb2.RetrieveResponse,
        answer: answers.Answer,
        expected: str,
        judge_runner: judge.Judge | None,
        result: evaluator_pb2.QuestionResult,
    ) -> None:
        if judge_runner is None:
            reason = "no judge model configured"
            result.judge.CopyFrom(
                evaluator_pb2.JudgeScores(
                    prompt_version=judge.prompt_version(),
                    **{m: judge.not_measured(reason) for m in judge.MEASURES},
                )
            )
            return
        outcome = judge_runner.score(
            judge.JudgeInput(
                question=question.text,
                context=answers.context_text(response.retrieved_chunks),
                answer=answer.text,
                expected=expected,
            )
        )
        result.judge.CopyFrom(outcome.scores)
        result.metrics.judge_ms = outcome.elapsed_ms
        usage = result.usage
        usage.prompt_tokens += outcome.prompt_tokens
        usage.completion_tokens += outcome.completion_tokens
        usage.llm_calls += outcome.calls
        usage.estimated_cost_usd += pricing.cost_usd(
            judge_runner.model, outcome.prompt_tokens, outcome.completion_tokens
        )
