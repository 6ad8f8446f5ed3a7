"""The Query page's first minute (issue 18): it opens on a question of the sample question set
(chunklab_app.samples, loaded by chunklab_app.sample_loader; ADR 0063) asked of several configurations at once, the recommended
strategies' and the baseline's among them (ADR 0064), with the references highlighted,
before anyone types anything.

`make up` loads the sample in the background, so the page may open before it is there: it
then says so in one sentence and fills itself in when the sample's question set and index
sets are ready. A stack started without the sample (Settings.sample off) says that instead,
and does not wait. Pure functions over the stored question sets and the offered
configurations; no Gradio here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chunklab.v1 import evaluator_pb2
from chunklab_app import samples
from frontend.pages.query import query_columns

WAITING = (
    f"The sample ({samples.QUESTION_SET_NAME}) is not loaded yet: `make up` loads it in the background, "
    "and these columns fill in by themselves as soon as it is ready (or type a question and search)."
)
NO_SAMPLE = (
    "ChunkLab was started without the sample: upload documents on the Documents page and process "
    "them, then type a question here and search."
)


def without_sample(loading: bool) -> str:
    """What the columns say while there is no sample: that it is coming, or that this stack
    was started without it."""
    return WAITING if loading else NO_SAMPLE


# Seconds between two looks for the sample while the page waits for it.
POLL_SECONDS = 5


def sample_set_id(sets: Sequence[evaluator_pb2.QuestionSet]) -> str | None:
    """The sample question set's id, when it is stored."""
    return next((s.question_set_id for s in sets if s.name == samples.QUESTION_SET_NAME), None)


def first_question(question_set: evaluator_pb2.QuestionSet) -> evaluator_pb2.Question | None:
    """The question the page opens on: the set's first one with reference excerpts."""
    return next((q for q in question_set.questions if q.references), None)


@dataclass(frozen=True)
class FirstView:
    """What the page opens on: the set, the question and the configurations (their values),
    or, while the sample is not there, nothing but why."""

    question_set_id: str
    question: evaluator_pb2.Question
    configurations: list[str]


def first_view(question_set: evaluator_pb2.QuestionSet | None, offered: Sequence[tuple[str, str]]) -> FirstView | None:
    """The sample's first question asked of query_columns.default_configurations (the
    recommended strategies' active sets, the baseline's, then others); None while the sample
    set or every index set is missing."""
    if question_set is None:
        return None
    question = first_question(question_set)
    picks = query_columns.default_configurations(offered)
    if question is None or not picks:
        return None
    return FirstView(question_set.question_set_id, question, picks)
