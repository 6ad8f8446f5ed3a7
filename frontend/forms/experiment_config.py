"""From the Experiments form's values to an ExperimentConfig.

A knob grid is typed as the values to try, separated by commas ("250, 500");
an empty field leaves the strategy's default. Values are typed and checked
here by chunklab.knobs from the chunker's KnobSpecs (so "2.5" for a
whole-number knob, or a cell whose chunk_overlap is not below its chunk_size,
is refused at once), with the words the evaluator would use. No Gradio here.
"""

from __future__ import annotations

from chunklab import knobs, retrieval
from chunklab.v1 import common_pb2, evaluator_pb2
from frontend.forms.knobs import StrategyForm


def strategy_grid(form: StrategyForm, texts: list[str | None]) -> evaluator_pb2.StrategyGrid:
    """One strategy's grid: texts in the order of form.fields, each the values to try.
    Raises KnobError (a ValueError) for a value, or a cell, the evaluator would refuse."""
    axes = [
        (field.name, field.knob.parse_values(form.name, text)) for field, text in zip(form.fields, texts, strict=True)
    ]
    return knobs.strategy_grid(form.name, form.knobs, [(name, values) for name, values in axes if values])


def run_count(grids: list[evaluator_pb2.StrategyGrid]) -> int:
    """How many runs (grid cells) the grids make: per strategy the product of its value counts."""
    total = 0
    for grid in grids:
        cells = 1
        for knob in grid.grid:
            cells *= len(knob.values)
        total += cells
    return total


def endpoint(base_url: str | None, model: str | None, api_key: str | None) -> evaluator_pb2.ModelEndpoint | None:
    """A chat endpoint from three fields; None when all are empty (the configured one applies)."""
    base_url, model, api_key = (base_url or "").strip(), (model or "").strip(), (api_key or "").strip()
    if not (base_url or model or api_key):
        return None
    return evaluator_pb2.ModelEndpoint(base_url=base_url, model=model, api_key=api_key)


def whole(value: float | None, default: int, what: str = "") -> int:
    """A Number field's value as a whole number; empty means the default. `what` names the field in the refusal."""
    if value is None:
        return default
    if not float(value).is_integer():
        raise ValueError(
            f"{what} takes a whole number; you entered {value:g}." if what else f"{value} is not a whole number"
        )
    return int(value)


def optional_whole(text: str | float | None, what: str) -> int | None:
    """A text field that may stay empty (None), else a whole number.

    Used for knobs whose empty state means something (sentence_window's
    window: "as indexed"), which a gr.Number cannot show: it displays 0.
    """
    if text is None or not str(text).strip():
        return None
    try:
        number = float(str(text).strip())
    except ValueError:
        raise ValueError(f"{what} takes a whole number, got {text!r}") from None
    if not number.is_integer():
        raise ValueError(f"{what} takes a whole number, got {text!r}")
    return int(number)


# The Experiments form's choices of winner validation (ADR 0046), the default first.
VALIDATIONS = {
    "half chooses, half confirms (holdout)": evaluator_pb2.VALIDATION_MODE_HOLDOUT,
    "5 folds, each confirms the others' choice (k-fold)": evaluator_pb2.VALIDATION_MODE_K_FOLD,
    "chosen and scored on every question (optimistic)": evaluator_pb2.VALIDATION_MODE_NONE,
}


def validation(choice: str | None, seed) -> evaluator_pb2.Validation:
    """The form's validation choice and seed; ValueError for a choice the form does not offer."""
    if choice not in VALIDATIONS:
        raise ValueError(f"Choose how the winner is checked: {', '.join(VALIDATIONS)}.")
    return evaluator_pb2.Validation(mode=VALIDATIONS[choice], seed=whole(seed, 0))


def experiment_config(
    *,
    name: str,
    question_set_id: str,
    grids: list[evaluator_pb2.StrategyGrid],
    top_k: int = 5,
    embedding_model: str = "",
    retrieval_only: bool = False,
    answer_model: evaluator_pb2.ModelEndpoint | None = None,
    judge_model: evaluator_pb2.ModelEndpoint | None = None,
    document_ids: list[str] | None = None,
    validation: evaluator_pb2.Validation | None = None,
    rerank: common_pb2.RerankOptions | None = None,
    **row,
) -> evaluator_pb2.ExperimentConfig:
    """The config RunExperiment takes; raises ValueError for what the form can tell is missing.
    `row`: the retrieval row's settings by path (forms.retrieval.row_values: neighbor_prev,
    window, hybrid, recency_lambda, …), filled by chunklab.retrieval.options; `window` None
    leaves each set's own window."""
    if not question_set_id:
        raise ValueError("Choose a question set (or import one) first.")
    if not grids:
        raise ValueError("Tick at least one strategy to run.")
    config = evaluator_pb2.ExperimentConfig(
        name=name.strip(),
        question_set_id=question_set_id,
        strategies=grids,
        retrieval=retrieval.options(
            {"top_k": top_k, **row, "embedding_model": embedding_model or "", "filter.document_ids": document_ids or []}
        ),
        retrieval_only=retrieval_only,
        validation=validation,
    )
    if rerank is not None:
        config.retrieval.rerank.CopyFrom(rerank)
    if answer_model is not None:
        config.answer_model.CopyFrom(answer_model)
    if judge_model is not None:
        config.judge_model.CopyFrom(judge_model)
    return config


def document_mapping(text: str | None) -> dict[str, str]:
    """ "corpus_id=document_id" lines (for a question file's corpus ids) into a dict."""
    mapping = {}
    for number, line in enumerate((text or "").splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"document mapping line {number}: write corpus_id=document_id, got {line!r}")
        mapping[key.strip()] = value.strip()
    return mapping
