"""Views of the Question sets page (ADR 0059): a generation's estimate and
progress, an import's validation report, and one question of a set with its
excerpts marked in a window of the document's text. Pure functions of
messages: the page calls the services, these lay the answers out."""

from __future__ import annotations

from dataclasses import dataclass

from chunklab.v1 import evaluator_pb2
from chunklab.views import numbers
from chunklab.views.render import render

# Characters of the document shown on each side of an excerpt.
WINDOW_CHARS = 240

DROP_REASONS = {
    evaluator_pb2.DROP_REASON_EXCERPT_NOT_FOUND: "excerpt not in the document",
    evaluator_pb2.DROP_REASON_DUPLICATE: "near-duplicate",
    evaluator_pb2.DROP_REASON_ANSWERED_BY_QUESTION: "answered by the question",
    evaluator_pb2.DROP_REASON_EXCERPT_TOO_LONG: "excerpt too long",
    evaluator_pb2.DROP_REASON_NO_EXCERPT: "no excerpt",
}
STATES = {
    evaluator_pb2.GENERATION_STATE_RUNNING: "running",
    evaluator_pb2.GENERATION_STATE_SUCCEEDED: "succeeded",
    evaluator_pb2.GENERATION_STATE_INTERRUPTED: "interrupted",
    evaluator_pb2.GENERATION_STATE_FAILED: "failed",
}
PROBLEM_KINDS = {
    evaluator_pb2.EXCERPT_PROBLEM_KIND_SNAPPED: "snapped",
    evaluator_pb2.EXCERPT_PROBLEM_KIND_NOT_FOUND: "not found",
    evaluator_pb2.EXCERPT_PROBLEM_KIND_RANGE_MISMATCH: "range mismatch",
    evaluator_pb2.EXCERPT_PROBLEM_KIND_BAD_RANGE: "bad range",
    evaluator_pb2.EXCERPT_PROBLEM_KIND_EMPTY: "empty",
}


def generator_label(base_url: str, model: str) -> str:
    """Which chat endpoint generates: the form's, else the stack's configured one."""
    if not base_url:
        return "none configured: fill in the endpoint's base URL and model"
    return f"{model or 'the default model'} at {base_url}"


def estimate_html(estimate: evaluator_pb2.GenerationEstimate, generator: str) -> str:
    facts = [
        ("documents", numbers.count(estimate.documents)),
        ("passages", numbers.count(estimate.passages)),
        ("LLM calls", numbers.count(estimate.llm_calls)),
        ("prompt tokens", numbers.count(estimate.prompt_tokens)),
        ("completion tokens", numbers.count(estimate.completion_tokens)),
        ("estimated cost", numbers.usd(estimate.estimated_cost_usd)),
    ]
    if estimate.passages_done:
        facts.append(("passages already done", numbers.count(estimate.passages_done)))
    return render(
        "frontend",
        "generation.html.j2",
        dry_run=True,
        generator=generator,
        facts=facts,
        notes=list(estimate.notes),
        progress=None,
    )


@dataclass(frozen=True)
class GenerationView:
    """What the progress box shows, from a progress event or the final generation."""

    generation_id: str
    state: str
    done: int
    total: int
    kept: int
    dropped: list[tuple[str, int]]
    failed: int
    message: str
    question_set_id: str = ""
    error: str = ""


def dropped_counts(counts) -> list[tuple[str, int]]:
    return [(DROP_REASONS.get(c.reason, "other"), c.count) for c in counts if c.count]


def progress_view(progress: evaluator_pb2.GenerationProgress) -> GenerationView:
    return GenerationView(
        progress.generation_id,
        "running",
        progress.passages_done,
        progress.passages_total,
        progress.kept,
        dropped_counts(progress.dropped),
        progress.failed,
        progress.message,
    )


def generation_view(generation: evaluator_pb2.Generation) -> GenerationView:
    return GenerationView(
        generation.generation_id,
        STATES.get(generation.state, "unknown"),
        generation.asked,
        generation.passages_total,
        generation.kept,
        dropped_counts(generation.dropped),
        generation.failed,
        "",
        generation.question_set_id,
        generation.error,
    )


def progress_html(view: GenerationView, generator: str, problems: list[tuple[int, str]] = ()) -> str:
    """The generation's counts; `problems` are (passage number, why) of the dropped and failed."""
    return render(
        "frontend",
        "generation.html.j2",
        dry_run=False,
        generator=generator,
        facts=[],
        notes=[],
        progress=view,
        problems=list(problems),
    )


def passage_problems(generation: evaluator_pb2.Generation) -> list[tuple[int, str]]:
    return [
        (o.passage_number, o.problem)
        for o in generation.outcomes
        if o.outcome != evaluator_pb2.GENERATION_OUTCOME_KEPT and o.problem
    ]


def validation_html(validation: evaluator_pb2.QuestionSetValidation) -> str:
    """The report: counts, then every problem with its closest span and fix."""
    rows = [
        {
            "line": p.line or p.where,
            "question": p.question_number,
            "reference": p.reference_number,
            "excerpt": p.excerpt,
            "kind": PROBLEM_KINDS.get(p.kind, "problem"),
            "closest": p.suggested_content,
            "similarity": numbers.percent(p.similarity, 0) if p.suggested_content else "",
            "fix": p.message,
            "left_out": p.left_out,
        }
        for p in validation.problems
    ]
    return render("frontend", "validation_report.html.j2", v=validation, rows=rows)


def import_message(question_set: evaluator_pb2.QuestionSet) -> str:
    """ "Imported notes.jsonl: 46 of 50 questions; 4 left out: see the report." (lenient), or
    "Imported notes.jsonl: 50 questions (id …)." when none was left out."""
    validation = question_set.validation
    if validation.questions_left_out:
        return (
            f"Imported {question_set.name}: {question_set.question_count} of {validation.questions_total} "
            f"questions; {validation.questions_left_out} left out: see the report."
        )
    return f"Imported {question_set.name}: {question_set.question_count} questions (id {question_set.question_set_id})."


def excerpt_windows(
    text: dict[str, str], references, document_names: dict[str, str], window: int = WINDOW_CHARS
) -> list[dict]:
    """Each reference's excerpt with up to `window` characters of its document on
    each side; `text` holds the documents' canonical text by id."""
    shown = []
    for ref in references:
        doc, start, end = text.get(ref.document_id, ""), ref.start_char, ref.end_char
        lo, hi = max(0, start - window), min(len(doc), end + window)
        shown.append(
            {
                "document": document_names.get(ref.document_id, ref.document_id),
                "start": start,
                "end": end,
                "before": doc[lo:start],
                "excerpt": doc[start:end] or ref.content,
                "after": doc[end:hi],
                "cut_before": lo > 0,
                "cut_after": hi < len(doc),
            }
        )
    return shown


def question_html(question: evaluator_pb2.Question, number: int, total: int, windows: list[dict]) -> str:
    return render("frontend", "question_review.html.j2", q=question, number=number, total=total, windows=windows)


def question_choices(question_set: evaluator_pb2.QuestionSet) -> list[tuple[str, str]]:
    return [(f"{i}. {q.text[:80]}", q.question_id) for i, q in enumerate(question_set.questions, 1)]
