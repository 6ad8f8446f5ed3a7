"""Where a person stands on the first hour's path (ADR 0091): documents, questions, the best
configuration, taking it home. Each step's state comes from what the stack holds, never from
what this page remembers, so a page opened later (or by another person) says the same.

A step is done when the stack holds its result: a document uploaded; a question set; an
experiment over two runs or more that finished (succeeded, or partial: some runs answered).
Taking the configuration home (copying the winner's settings as code, exporting an index
set's chunks) leaves nothing in the stack, so the last step is never done: it is next once
an experiment has finished. The first step not done is the next one; the page marks it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chunklab import experiment_state
from chunklab.v1 import documents_pb2, evaluator_pb2
from chunklab.views.metric_format import plural
from frontend.views import experiments_html, formatting
from frontend.views.opening import newest_finished

DONE, NEXT, TODO = "done", "next", "todo"


@dataclass(frozen=True)
class Step:
    """One step: what it is, the tab its button opens, its state and a sentence on where it stands."""

    number: int
    title: str
    tab: str
    button: str
    state: str
    detail: str


def _documents(documents: Sequence[documents_pb2.Document]) -> tuple[bool, str]:
    if not documents:
        return False, "Upload the documents your questions are about: Markdown, text, DOCX, PDF or HTML."
    newest = formatting.document_choices(documents[:1])[0][0]
    return True, f"{plural(len(documents), 'document')} uploaded; the newest is {newest}."


def _questions(question_sets: Sequence[evaluator_pb2.QuestionSet]) -> tuple[bool, str]:
    if not question_sets:
        return False, (
            "Write questions by hand, selecting the passage that answers each one (no LLM needed), "
            "or import or generate a set."
        )
    newest = experiments_html.question_set_label(question_sets[0])
    return True, f"{plural(len(question_sets), 'question set')}; the newest is {newest}."


def _experiment(experiments: Sequence[evaluator_pb2.Experiment], outcome: str) -> tuple[bool, str]:
    done = newest_finished(experiments)
    if done is not None:
        return True, f"{experiments_html.title(done)} finished. {outcome}".strip()
    ask = "Run an experiment over two or more strategies with your question set: it names the one that finds most."
    if experiments:
        newest = experiments[0]
        return False, f"{experiments_html.title(newest)} is {experiment_state.name(newest.state)}. {ask}"
    return False, ask


# Each step's title, the tab (its id in frontend/app.py) its button opens, and the button's words.
SHAPE = (
    ("Upload documents", "documents", "Go to Documents"),
    ("Write or import questions", "questions", "Go to Question sets"),
    ("Find the best configuration", "experiments", "Go to Experiments"),
    ("Take it home", "experiments", "Copy the winner's settings"),
)
HOME = (
    "Copy the winner's settings as code (Experiments, below the chosen experiment) "
    "or export an index set's chunks (Documents, Index sets and export)."
)


# Step 4 when the newest finished experiment names no single winner: nothing to copy yet.
NO_WINNER_BUTTON = "See the leaders"
NO_WINNER = (
    "No single winner to copy: {leaders} share the lead. The verdict on Experiments says what "
    "separates them; take the one that suits you (Documents, Index sets and export), or add "
    "questions and run again to tell them apart."
)


def _home(leaders: Sequence[str]) -> tuple[str, str]:
    """Step 4's button words and detail: copy the winner, or why there is none to copy."""
    if len(leaders) > 1:
        return NO_WINNER_BUTTON, NO_WINNER.format(leaders=" and ".join(leaders))
    return SHAPE[-1][2], HOME


def steps(
    documents: Sequence[documents_pb2.Document],
    question_sets: Sequence[evaluator_pb2.QuestionSet],
    experiments: Sequence[evaluator_pb2.Experiment],
    outcome: str = "",
    leaders: Sequence[str] = (),
) -> list[Step]:
    """The four steps in order, the first one not done marked next; `outcome` is a sentence on
    the newest finished experiment's result (its verdict), said in step 3, and `leaders` the
    runs its verdict puts in the lead (several: no single winner to copy in step 4)."""
    home_button, home = _home(leaders)
    found = [_documents(documents), _questions(question_sets), _experiment(experiments, outcome), (False, home)]
    first_open = next(i for i, (done, _) in enumerate(found) if not done)
    buttons = [button for _, _, button in SHAPE[:-1]] + [home_button]
    return [
        Step(i + 1, title, tab, button, DONE if done else NEXT if i == first_open else TODO, detail)
        for i, ((title, tab, _), button, (done, detail)) in enumerate(zip(SHAPE, buttons, found, strict=True))
    ]
