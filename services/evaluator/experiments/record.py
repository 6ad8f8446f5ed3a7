"""An experiment's record before it runs: its runs' options, and its provenance
(what it ran on, so that a result can be told apart from another's)."""

from __future__ import annotations

import uuid

from chunklab.timeutil import to_proto, utcnow
from chunklab.v1 import common_pb2, evaluator_pb2
from services.evaluator.experiments import per_document
from services.evaluator.experiments.grid import Cell
from services.evaluator.experiments.plan import Plan
from services.evaluator.judging import answers, judge, models


def new_experiment(plan: Plan, code_version: str) -> evaluator_pb2.Experiment:
    experiment = evaluator_pb2.Experiment(
        experiment_id=str(uuid.uuid4()),
        config=plan.config,
        state=evaluator_pb2.EXPERIMENT_STATE_PENDING,
        question_set_hash=plan.question_set.content_hash,
        created_at=to_proto(utcnow()),
        questions_total=len(plan.cells) * len(plan.question_set.questions),
    )
    experiment.provenance.CopyFrom(provenance(plan, code_version))
    for cell in plan.cells:
        experiment.runs.add(
            run_key=cell.run_key,
            retrieval=run_options(cell, plan),
            spec=cell.spec,
            expansion=cell.info.expansion,
            config_id=cell.config_id,
            questions_total=len(plan.question_set.questions),
        )
    return experiment


def preview(plan: Plan) -> evaluator_pb2.Experiment:
    """What a dry run shows of the experiment it would start: its runs, nothing stored."""
    experiment = evaluator_pb2.Experiment(
        config=plan.config,
        state=evaluator_pb2.EXPERIMENT_STATE_PENDING,
        question_set_hash=plan.question_set.content_hash,
        questions_total=len(plan.cells) * len(plan.question_set.questions),
    )
    for cell in plan.cells:
        experiment.runs.add(
            run_key=cell.run_key,
            config_id=cell.config_id,
            spec=cell.spec,
            expansion=cell.info.expansion,
            questions_total=len(plan.question_set.questions),
        )
    return experiment


def provenance(plan: Plan, code_version: str) -> evaluator_pb2.ExperimentProvenance:
    records = {document_id: plan.records[document_id] for document_id in plan.documents}
    hashes = {d: r.content_hash for d, r in records.items()}
    return evaluator_pb2.ExperimentProvenance(
        question_set_hash=plan.question_set.content_hash,
        embedding_model=plan.provider.name,
        answer_model=models.describe(
            plan.answer, "retrieval only (no answers)" if plan.config.retrieval_only else "extractive (no LLM)"
        ),
        judge_model=models.describe(plan.judge, "none (judge scores not measured)"),
        judge_prompt_version=judge.prompt_version(),
        code_version=code_version,
        document_hashes=hashes,
        extractive_method=(answers.EXTRACTIVE_METHOD if plan.answer is None and not plan.config.retrieval_only else ""),
        document_names={d: r.name for d, r in records.items()},
        document_collections={d: r.collection or per_document.DEFAULT_COLLECTION for d, r in records.items()},
    )


def run_options(cell: Cell, plan: Plan) -> common_pb2.RetrievalOptions:
    """The experiment's options for one run: its strategy, its own set, its documents."""
    options = common_pb2.RetrievalOptions()
    options.CopyFrom(plan.config.retrieval)
    options.strategy = cell.spec.name
    options.config_id = cell.config_id
    del options.filter.document_ids[:]
    options.filter.document_ids.extend(plan.documents)
    if cell.window is not None:
        options.window = cell.window
    return options
