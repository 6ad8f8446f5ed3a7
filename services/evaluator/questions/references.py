"""A question set's references checked against the canonical texts, and the
validation report that lists every problem with its fix (ADR 0059).

Every excerpt is located by chunklab.text.excerpts. One that is not exactly
where the set says is a problem carrying the closest span (its range, its
exact text as the suggested fix, its similarity). STRICT refuses a set with
any problem; LENIENT keeps the questions whose excerpts are all located
(exactly, or by a span at least SIMILARITY_THRESHOLD alike, stored as that
exact span) and leaves out the others, counted, including those that name a
document that is not uploaded (which STRICT refuses as FAILED_PRECONDITION). Whatever the mode, a stored
reference satisfies text[start_char:end_char] == content.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chunklab.errors import FailedPrecondition, InvalidArgument
from chunklab.rpc.limits import quoted
from chunklab.text.excerpts import SIMILARITY_THRESHOLD, Located, locate
from chunklab.v1 import evaluator_pb2
from services.evaluator.questions.question_sets import DocumentResolver, RawQuestion, RawReference

STRICT = evaluator_pb2.EXCERPT_CHECK_STRICT
LENIENT = evaluator_pb2.EXCERPT_CHECK_LENIENT
Kind = evaluator_pb2.ExcerptProblemKind

# Problems a refusal quotes; the report (ValidateQuestionSet) has them all.
FIRST_PROBLEMS = 3


@dataclass
class Checked:
    """The questions a check keeps, with their located references, and its report."""

    questions: list[evaluator_pb2.Question]
    validation: evaluator_pb2.QuestionSetValidation


def mode_of(excerpt_check: int) -> int:
    return LENIENT if excerpt_check == LENIENT else STRICT


def _percent(similarity: float) -> str:
    return f"{similarity:.0%}"


def _problem(
    kind: int, raw: RawReference, document_id: str, found: Located | None, message: str
) -> evaluator_pb2.ExcerptProblem:
    problem = evaluator_pb2.ExcerptProblem(kind=kind, document_id=document_id, excerpt=raw.content, message=message)
    if found is not None:
        problem.start_char, problem.end_char = found.start, found.end
        problem.suggested_content, problem.similarity = found.span, found.similarity
    return problem


def _closest(found: Located | None) -> str:
    if found is None:
        return ""
    if found.located:
        return (
            f"; the closest span, text[{found.start}:{found.end}] {quoted(found.span, 60)}, is "
            f"{_percent(found.similarity)} alike: use it as the content (a lenient import stores it)"
        )
    return (
        f"; the closest span, text[{found.start}:{found.end}] {quoted(found.span, 60)}, is only "
        f"{_percent(found.similarity)} alike (under {_percent(SIMILARITY_THRESHOLD)}): check the excerpt "
        "against the uploaded text"
    )


def resolve(
    raw: RawReference, resolver: DocumentResolver, where: str
) -> tuple[evaluator_pb2.Reference | None, evaluator_pb2.ExcerptProblem | None]:
    """The reference to store (None when it cannot be located) and its problem
    (None when it is exactly where the set says). A reference snapped to a
    close span comes back with a SNAPPED or RANGE_MISMATCH problem."""
    document_id = resolver.document_id(raw.document, where)
    text = resolver.text(document_id, where)
    name = quoted(raw.document)

    def stored(start: int, end: int) -> evaluator_pb2.Reference:
        return evaluator_pb2.Reference(document_id=document_id, start_char=start, end_char=end, content=text[start:end])

    if raw.start is None and raw.end is None:
        if not raw.content.strip():
            return None, _problem(
                Kind.EXCERPT_PROBLEM_KIND_EMPTY,
                raw,
                document_id,
                None,
                f"{where}: a reference needs a character range or its excerpt text",
            )
        found = locate(text, raw.content)
        if found is not None and found.exact:
            return stored(found.start, found.end), None
        located = found is not None and found.located
        kind = Kind.EXCERPT_PROBLEM_KIND_SNAPPED if located else Kind.EXCERPT_PROBLEM_KIND_NOT_FOUND
        problem = _problem(
            kind,
            raw,
            document_id,
            found,
            f"{where}: the excerpt {quoted(raw.content, 60)} does not occur in {name}{_closest(found)}",
        )
        return (stored(found.start, found.end) if located else None), problem
    if raw.start is None or raw.end is None or not 0 <= raw.start < raw.end <= len(text):
        found = locate(text, raw.content) if raw.content.strip() else None
        message = (
            f"{where}: a reference range needs both start and end"
            if raw.start is None or raw.end is None
            else f"{where}: reference range {raw.start}..{raw.end} is outside {name} "
            f"(0..{len(text)} characters) or empty"
        )
        return None, _problem(Kind.EXCERPT_PROBLEM_KIND_BAD_RANGE, raw, document_id, found, message + _closest(found))
    if not raw.content or text[raw.start : raw.end] == raw.content:
        return stored(raw.start, raw.end), None
    found = locate(text, raw.content)
    problem = _problem(
        Kind.EXCERPT_PROBLEM_KIND_RANGE_MISMATCH,
        raw,
        document_id,
        found,
        f"{where}: text[{raw.start}:{raw.end}] of {name} is {quoted(text[raw.start : raw.end], 60)}, not the "
        f"reference's content {quoted(raw.content, 60)}; the offsets or the document differ{_closest(found)}",
    )
    return (stored(found.start, found.end) if found.located else None), problem


def check(raw: Sequence[RawQuestion], resolver: DocumentResolver, excerpt_check: int) -> Checked:
    """Every reference of every question located, every problem reported; the
    questions the mode keeps. Refuses nothing itself (see `refuse`)."""
    mode = mode_of(excerpt_check)
    report = evaluator_pb2.QuestionSetValidation(
        excerpt_check=mode, questions_total=len(raw), similarity_threshold=SIMILARITY_THRESHOLD
    )
    kept = []
    for number, item in enumerate(raw, start=1):
        question = evaluator_pb2.Question(text=item.text, expected_answer=item.expected_answer, metadata=item.metadata)
        problems, keep = [], True
        for reference_number, ref in enumerate(item.references, start=1):
            report.references_total += 1
            try:
                reference, problem = resolve(ref, resolver, item.where)
            except FailedPrecondition as exc:  # no such document: lenient leaves the question out
                if mode != LENIENT:
                    raise
                reference, problem = None, _problem(Kind.EXCERPT_PROBLEM_KIND_NOT_FOUND, ref, "", None, exc.message)
            if problem is None:
                report.references_exact += 1
            elif reference is not None:
                report.references_snapped += 1
            else:
                report.references_failed += 1
            if problem is not None:
                problem.where, problem.question_number, problem.line = item.where, number, item.line
                problem.reference_number = reference_number
                problems.append(problem)
            if reference is None or (problem is not None and mode == STRICT):
                keep = False
            else:
                question.references.append(reference)
        for problem in problems:
            problem.left_out = not keep
        report.problems.extend(problems)
        if keep:
            kept.append(question)
    report.questions_valid = len(kept)
    report.questions_left_out = len(raw) - len(kept)
    return Checked(kept, report)


def refuse(checked: Checked) -> None:
    """INVALID_ARGUMENT for a set the check keeps nothing of, or any problem in strict
    mode: the count and the first problems, with where the rest are listed."""
    report = checked.validation
    if not report.problems and checked.questions:
        return
    if report.excerpt_check == LENIENT and checked.questions:
        return
    first = "; ".join(p.message for p in report.problems[:FIRST_PROBLEMS])
    more = f"; and {len(report.problems) - FIRST_PROBLEMS} more" if len(report.problems) > FIRST_PROBLEMS else ""
    located = report.references_total - report.references_failed
    if report.excerpt_check == LENIENT:
        head = f"none of the {report.questions_total} questions has every excerpt located"
    else:
        head = (
            f"{len(report.problems)} of {report.references_total} references are not exactly where the set "
            f"says, in {report.questions_left_out} of {report.questions_total} questions "
            f"({located} could be located, some by a close span)"
        )
    raise InvalidArgument(
        f"{head}: {first}{more}. `chunklab questions validate` (ValidateQuestionSet) lists "
        "every problem with its fix; a lenient import keeps the located questions"
    )
