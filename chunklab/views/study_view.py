"""A tuning study as the UI and the command line show it alike (issue 29, ADR 0116): where the
search stands (trials so far, best so far), its trials, and its result (the winner beside the
baseline and the static recommendation on the same confirmation questions, 95% intervals, and
whether the lead over the recommendation is a tie). Plain data: the UI's templates and the
CLI's lines read it; every number is formatted by the metric catalogue (MetricFormat)."""

from __future__ import annotations

from chunklab import experiment_state
from chunklab.v1 import evaluator_pb2 as pb
from chunklab.views import numbers
from chunklab.views.metric_format import MetricFormat, plural

RECALL, IOU, TOKENS = "recall", "iou", "tokens_sent"
MEASURES = (RECALL, IOU, TOKENS)
ROLES = {
    "winner": "winner",
    "recommendation": "static recommendation",
    "baseline": "fixed_size baseline",
    "front": "on the Pareto front",
}
ORIGINS = {
    "recommendation": "the static recommendation",
    "baseline": "the baseline",
    "neighbourhood": "a step from the best so far",
    "search": "search",
}


def is_study(experiment: pb.Experiment) -> bool:
    return experiment.config.HasField("study")


def state_name(experiment: pb.Experiment) -> str:
    return experiment_state.name(experiment.state)


def budget_text(budget: pb.StudyBudget) -> str:
    """ "30 trials", "10 min", "30 trials or 10 min, whichever comes first"."""
    parts = []
    if budget.trials:
        parts.append(plural(budget.trials, "trial"))
    if budget.seconds:
        whole_minutes = budget.seconds >= 60 and float(budget.seconds / 60).is_integer()
        parts.append(f"{budget.seconds / 60:.0f} min" if whole_minutes else numbers.duration(budget.seconds))
    if not parts:
        return "30 trials (the default)"
    return " or ".join(parts) + (", whichever comes first" if len(parts) > 1 else "")


def objective_text(objective: pb.StudyObjective, metrics: MetricFormat) -> str:
    """The objective in words, e.g. "highest recall with at most 800 tokens per question, ties by IoU"."""
    cap = f" with at most {numbers.count(objective.max_tokens)} tokens per question" if objective.max_tokens else ""
    if objective.kind == pb.STUDY_OBJECTIVE_KIND_IOU_AT_RECALL:
        return f"highest IoU with recall at least {metrics.value(RECALL, objective.min_recall)}" + (
            f" and{cap}" if cap else ""
        )
    if objective.kind == pb.STUDY_OBJECTIVE_KIND_PARETO:
        return (
            f"the Pareto front of recall, IoU and tokens sent{cap} (each front configuration confirmed; "
            "the winner: its highest recall)"
        )
    return f"highest recall{cap}, ties by IoU"


def fraction(study: pb.StudyProgress) -> tuple[float, float]:
    """(done, total) of the budget: trials when a trial budget is set, else seconds."""
    if study.trials_budget:
        return float(study.trials_done), float(study.trials_budget)
    return study.seconds_used, max(study.seconds_budget, 1.0)


def best_text(run_key: str, recall: float, iou: float, tokens: float, metrics: MetricFormat) -> str:
    if not run_key:
        return "no configuration meets the objective yet"
    return (
        f"{run_key}: recall {metrics.value(RECALL, recall)}, IoU {metrics.value(IOU, iou)}, "
        f"{metrics.value(TOKENS, tokens)} tokens per question"
    )


def progress_line(progress: pb.ExperimentProgress, metrics: MetricFormat, counted: bool = True) -> str:
    """One line on where a study stands: trials so far (not when a bar beside it counts them),
    what it does now, the best so far."""
    study = progress.study
    doing = progress.message or ("confirming on the held-out questions" if study.phase == "confirming" else "searching")
    count = (
        f"{numbers.count(study.trials_done)}/{plural(study.trials_budget, 'trial')}"
        if study.trials_budget
        else f"{plural(study.trials_done, 'trial')} in {numbers.duration(study.seconds_used)} of "
        f"{numbers.duration(study.seconds_budget)}"
    )
    best = best_text(study.best_run_key, study.best_recall, study.best_iou, study.best_tokens_sent, metrics)
    return f"{count + ' · ' if counted else ''}{doing} · best so far: {best}"


def trial_rows(experiment: pb.Experiment, metrics: MetricFormat) -> list[dict]:
    """Every trial in the order tried, its selection-question means and whether it is on the front."""
    front = set(experiment.study.pareto_run_keys)
    rows = []
    for run in experiment.runs:
        if not run.HasField("trial"):
            continue
        t = run.trial
        rows.append(
            {
                "number": t.number,
                "run_key": run.run_key,
                "origin": ORIGINS.get(t.origin, t.origin),
                "state": t.state,
                "questions": t.questions,
                "recall": metrics.value(RECALL, t.recall),
                "iou": metrics.value(IOU, t.iou),
                "tokens": metrics.value(TOKENS, t.tokens_sent),
                "feasible": t.feasible,
                "pareto": t.pareto or run.run_key in front,
                "best": run.run_key == experiment.study.best_run_key,
                "error": run.error,
            }
        )
    return sorted(rows, key=lambda row: row["number"])


def _measure(candidate: pb.StudyCandidate, name: str, metrics: MetricFormat) -> dict:
    found = next((m for m in candidate.means if m.metric == name), None)
    if found is None:
        return {"value": "-", "interval": ""}
    return {
        "value": metrics.value(name, found.mean),
        "interval": f"[{metrics.value(name, found.ci_low)}, {metrics.value(name, found.ci_high)}]",
    }


def candidate_rows(result: pb.StudyResult, metrics: MetricFormat) -> list[dict]:
    """The winner, the recommendation, the baseline and (PARETO) the front on the confirmation questions."""
    order = {role: i for i, role in enumerate(ROLES)}
    return [
        {
            "role": ROLES.get(c.role, c.role),
            "kind": c.role,
            "run_key": c.run_key,
            "feasible": c.feasible,
            **{name: _measure(c, name, metrics) for name in MEASURES},
        }
        for c in sorted(result.confirmation, key=lambda c: order.get(c.role, len(order)))
    ]


def lead_text(result: pb.StudyResult, metrics: MetricFormat) -> str:
    """The winner's lead over the recommendation, and whether its interval holds a tie."""
    if not result.deciding_metric:
        return ""
    name = result.deciding_metric
    interval = metrics.interval(name, result.lead_ci_low, result.lead_ci_high)
    said = f"Lead over the static recommendation on {metrics.label(name)}: {metrics.difference(name, result.lead)} "
    said += f"(95% interval {interval})"
    if result.tie:
        return said + ": the interval holds 0, so on these questions this is a tie."
    return said + "."


def result_view(experiment: pb.Experiment, metrics: MetricFormat) -> dict:
    """Everything the result section shows, as strings and rows."""
    result = experiment.study
    study = experiment.config.study
    best = winner(experiment)
    return {
        "experiment_id": experiment.experiment_id,
        "summary": result.summary,
        "objective": objective_text(study.objective, metrics),
        "budget": budget_text(study.budget),
        "trials": f"{plural(result.trials_done, 'trial')} ({numbers.count(result.trials_pruned)} pruned, "
        f"{numbers.count(result.trials_failed)} failed) in {numbers.duration(result.seconds_used)}",
        "split": f"tuned on {plural(result.selection_questions, 'question')}, confirmed on "
        f"{plural(result.confirmation_questions, 'other question')}",
        "winner": best,
        "take_home": take_home(experiment)[0],
        "take_home_text": take_home_text(experiment),
        "candidates": candidate_rows(result, metrics),
        "lead": lead_text(result, metrics),
        "tie": result.tie,
        "notes": list(result.notes),
        "finished": result.finished,
    }


def winner(experiment: pb.Experiment) -> str:
    """The study's winner's run key; empty while none (or no configuration meets the objective)."""
    return next((c.run_key for c in experiment.study.confirmation if c.role == "winner"), "")


def document_rows(run: pb.ExperimentRun | None, metrics: MetricFormat) -> list[dict]:
    """Why the winner won, document by document: its figures on each document's questions."""
    if run is None:
        return []
    return [
        {
            "name": d.document_name or d.document_id,
            "questions": numbers.count(d.metrics.questions_labelled or d.metrics.questions),
            "recall": metrics.value(RECALL, d.metrics.recall),
            "precision": metrics.value("precision", d.metrics.precision),
            "iou": metrics.value(IOU, d.metrics.iou),
            "tokens": metrics.value(TOKENS, d.metrics.tokens_sent),
        }
        for d in run.per_document
    ]


def ended_text(experiment: pb.Experiment) -> tuple[str, str]:
    """(a sentence on how the study ended, its kind: ok, warning or error)."""
    said = f"{plural(experiment.study.trials_done, 'trial')} in {numbers.duration(experiment.study.seconds_used)}"
    if experiment.state == pb.EXPERIMENT_STATE_SUCCEEDED:
        return f"The study is done: {said}.", "ok"
    if experiment.state == pb.EXPERIMENT_STATE_INTERRUPTED:
        return (
            f"The study was stopped after {said}. Its trials are kept: Resume goes on from them "
            f"(chunklab tune --resume {experiment.experiment_id}).",
            "warning",
        )
    error = f": {experiment.error}" if experiment.error else ""
    if experiment.state == pb.EXPERIMENT_STATE_PARTIAL:
        return f"The study ended after {said}, some trials failed{error}.", "warning"
    return f"The study {state_name(experiment)} after {said}{error}.", "error"


def _mean(candidate: pb.StudyCandidate, metric: str) -> float:
    return next((m.mean for m in candidate.means if m.metric == metric), 0.0)


def take_home(experiment: pb.Experiment) -> tuple[str, str]:
    """(run key, "winner" or "recommendation"): the configuration to take home. The winner, unless
    on the confirmation questions it falls below the static recommendation on recall or IoU:
    then the recommendation holds, and that is what the study honestly offers."""
    found = {c.role: c for c in experiment.study.confirmation}
    chosen, held = found.get("winner"), found.get("recommendation")
    if chosen is None:
        return "", ""
    below = held is not None and any(_mean(chosen, m) < _mean(held, m) for m in (RECALL, IOU))
    if below and held.run_key != chosen.run_key:
        return held.run_key, "recommendation"
    return chosen.run_key, "winner"


def take_home_text(experiment: pb.Experiment) -> str:
    key, who = take_home(experiment)
    if who == "recommendation":
        return (
            f"Take home the static recommendation, {key}: on the questions the search did not see, "
            "the winner falls below it on recall or IoU."
        )
    return f"Take home the winner, {key}." if key else ""
