"""The evaluator's tables read and written in protobuf terms: one store per
aggregate (question sets, generations, experiments, queries), one object
for the service to hold."""

from __future__ import annotations

from services.evaluator.storage.experiments import ExperimentStore
from services.evaluator.storage.generations import GenerationStore
from services.evaluator.storage.queries import QueryStore
from services.evaluator.storage.question_sets import QuestionSetStore


class Repository(QuestionSetStore, GenerationStore, ExperimentStore, QueryStore):
    """Every store over one database's sessions (`Repository(sessionmaker)`)."""
