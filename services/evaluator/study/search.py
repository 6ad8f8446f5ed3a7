"""A study's run (ADR 0113): the static recommendation and the fixed_size baseline first, then
the configurations one step from the best so far (ADR 0132), then Optuna's TPE sampler proposes;
each trial is an experiment run added as the search goes, asked the selection questions rung by
rung and pruned between rungs only when even the top of its interval cannot win (ADR 0133);
when the budget is spent the winner, the baseline and the recommendation are asked the
confirmation questions (confirm.py). Every finished question is stored at once, so a cancelled
or interrupted study resumes from its stored trials: they are told to the sampler again, the
trial that was running goes on from its last question, and the neighbourhood of the best so far
is found again from them."""

from __future__ import annotations

import json
import logging
import statistics
import time
from collections.abc import Callable

import optuna

from chunklab.errors import ServiceError, Unavailable
from chunklab.v1 import evaluator_pb2 as pb
from services.evaluator.experiments.ask import Asker
from services.evaluator.experiments.index_sets import IndexSets
from services.evaluator.experiments.plan import Plan
from services.evaluator.experiments.run import QUESTIONS_IN_FLIGHT, SAVE_EVERY_S, in_order
from services.evaluator.study import confirm, objective, pruning
from services.evaluator.study import space as spaces
from services.evaluator.study.neighbours import neighbours
from services.evaluator.study.setup import StudyPlan, cell

log = logging.getLogger("chunklab.evaluator")
optuna.logging.set_verbosity(optuna.logging.WARNING)

Publish = Callable[[pb.ExperimentEvent], None]
CheckStop = Callable[[], None]

# The neighbourhood phase (ADR 0132) may use up to this share of the budget (trials or seconds).
LOCAL_SHARE = 0.5
# Proposals in a row that repeat a finished trial before the search calls its space exhausted.
MAX_REPEATS = 50
# PARETO confirms at most this many of the front beside the winner, spread along the tokens sent.
MAX_FRONT_CONFIRMED = 6
# A study's typical trial is the median of this many of its latest (ADR 0158).
TYPICAL_OF = 5
# Time left at the end worth a note: at least this share of the time budget (and a second).
NOTE_LEFT_SHARE = 0.02
# How the progress line names each configuration asked the confirmation questions.
CONFIRMING = {
    "winner": "the winner",
    "baseline": "the fixed_size baseline",
    "recommendation": "the recommendation",
    "front": "a configuration on the Pareto front",
}
# The user attribute a PARETO trial carries for its sampler's constraint: tokens over the cap.
OVER_CAP = "tokens_over_cap"


def _over_cap(trial: optuna.trial.FrozenTrial) -> tuple[float]:
    return (trial.user_attrs.get(OVER_CAP, 0.0),)


class Search:
    """One study's search and confirmation over an experiment record (its runs are the trials)."""

    def __init__(self, deps, sets: IndexSets, asker: Asker, experiment: pb.Experiment, plan: Plan, study: StudyPlan):
        self._deps, self._sets, self._asker = deps, sets, asker
        self.experiment, self.plan, self.study = experiment, plan, study
        self.goal = plan.config.study.objective
        self._positions = {q.question_id: i for i, q in enumerate(plan.question_set.questions)}
        self._results: dict[str, list[pb.QuestionResult]] = {}
        for result in deps.repository.results(experiment.experiment_id):
            self._results.setdefault(result.run_key, []).append(result)
        self._started = time.monotonic()
        self._used_before = experiment.study.seconds_used
        self._asked = [0.0, 0]  # seconds spent asking questions in this process, and how many were asked

    # -- the budget -----------------------------------------------------------

    def seconds_used(self) -> float:
        return self._used_before + time.monotonic() - self._started

    def trials_done(self) -> int:
        return sum(1 for r in self.experiment.runs if r.trial.state in ("complete", "pruned", "failed"))

    def spent(self) -> bool:
        """The trial budget is used up, or the time left would hold no more than the confirmation."""
        if self.trials_spent():
            return True
        return bool(self.study.seconds) and self.seconds_left() <= self.confirmation_reserve()

    def trials_spent(self) -> bool:
        return bool(self.study.trials) and self.trials_done() >= self.study.trials

    def seconds_left(self) -> float:
        return self.study.seconds - self.seconds_used()

    def reuses_sets(self, candidate: spaces.Candidate) -> bool:
        """An earlier trial of the study built (or found) the candidate's index sets: the trial
        is retrieval only."""
        config_id = cell(candidate, self.study.space.infos[candidate.strategy]).config_id
        return any(
            r.config_id == config_id and r.spec.name == candidate.strategy and r.trial.state != "failed"
            for r in self.experiment.runs
        )

    def typical_trial(self, reuses_sets: bool | None = None) -> float:
        """How long a trial takes here (ADR 0166): the median of the last TYPICAL_OF trials run of
        its kind, retrieval only (reuses_sets) or with index sets of its own; of every kind when
        reuses_sets is None or no trial of its kind ran yet; 0 before any trial."""
        finished = [r for r in self.experiment.runs if r.trial.state in ("complete", "pruned", "failed")]
        kind = [r for r in finished if reuses_sets is None or r.index_reused == reuses_sets] or finished
        taken = [r.trial.seconds for r in kind]
        return statistics.median(taken[-TYPICAL_OF:]) if taken else 0.0

    def confirmation_reserve(self) -> float:
        """The seconds the confirmation will take (ADR 0166): the winner, the baseline and the
        recommendation (PARETO: up to MAX_FRONT_CONFIRMED more) each asked the confirmation
        questions, at the pace this study's questions were asked so far (0 before any)."""
        if not self._asked[1]:
            return 0.0
        runs = 3 + (min(len(self.front()), MAX_FRONT_CONFIRMED) if objective.is_pareto(self.goal) else 0)
        return runs * len(self.study.split.confirmation) * self._asked[0] / self._asked[1]

    def fits(self, candidate: spaces.Candidate) -> tuple[bool, float]:
        """Whether the trial would end, and the confirmation after it, within the time budget
        (ADR 0158, 0166); with the seconds such a trial takes here."""
        expected = self.typical_trial(self.reuses_sets(candidate))
        if not self.study.seconds:
            return True, expected
        return self.seconds_left() >= expected + self.confirmation_reserve(), expected

    # -- the search -----------------------------------------------------------

    def local_open(self) -> bool:
        """The neighbourhood phase may go on: less than LOCAL_SHARE of each budget spent."""
        if self.study.trials and self.trials_done() >= LOCAL_SHARE * self.study.trials:
            return False
        return not self.study.seconds or self.seconds_used() < LOCAL_SHARE * self.study.seconds

    def sampler_study(self) -> optuna.Study:
        """Optuna's TPE sampler; for PARETO, its multi-objective form with the token cap as a
        constraint (ADR 0146). Pruning is the study's own rule (pruning.cannot_win), between rungs."""
        seed = self.plan.config.study.seed
        if objective.is_pareto(self.goal):
            sampler = optuna.samplers.TPESampler(
                seed=seed, n_startup_trials=6, multivariate=True, group=True, constraints_func=_over_cap
            )
            return optuna.create_study(directions=list(objective.PARETO_DIRECTIONS), sampler=sampler)
        sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=6, multivariate=True, group=True)
        return optuna.create_study(direction="maximize", sampler=sampler, pruner=optuna.pruners.NopPruner())

    def tell(self, sampler: optuna.Study, trial, run_key: str) -> None:
        """Tells the sampler a complete trial's scores on the selection questions."""
        scores = self._scores(run_key)
        trial.set_user_attr(OVER_CAP, objective.over_cap(scores, self.goal))
        sampler.tell(trial, objective.values(scores, self.goal))

    def run(self, publish: Publish, check_stop: CheckStop) -> None:
        sampler = self.sampler_study()
        waiting = self._replay(sampler)
        for origin, params in spaces.starting_points(self.study.space):
            if not any(r.trial.origin == origin for r in self.experiment.runs):
                waiting.append((origin, params))
        ring: list[dict] = []  # the neighbourhood of the best so far, dropped once its share is spent
        while not self.spent():
            check_stop()
            if not self.local_open():
                ring = []
            elif not ring and not waiting:
                ring = self.around_best()
            if waiting:
                origin, params = waiting.pop(0)
            else:
                origin, params = ("neighbourhood", ring.pop(0)) if ring else ("search", None)
            if params is not None:
                sampler.enqueue_trial(params)
            proposal = fresh_proposal(sampler, self.study.space, self.experiment.runs, self.tell)
            if proposal is None:
                self._note(f"every configuration the search proposed had been tried ({self.trials_done()} trials)")
                break
            fits, expected = self.fits(proposal[1])
            if not fits:
                self._note_time_left(proposal[1], expected)
                break
            self._trial(sampler, *proposal, origin, publish, check_stop)
        self.confirm(publish, check_stop)

    def _note_time_left(self, candidate: spaces.Candidate, expected: float) -> None:
        """Says so when the search ended with time worth a note left (NOTE_LEFT_SHARE) because the
        next trial, and the confirmation after it, would not have ended within the budget."""
        left = self.seconds_left()
        if left >= max(1.0, NOTE_LEFT_SHARE * self.study.seconds):
            kind = "retrieval only" if self.reuses_sets(candidate) else "with index sets of its own"
            self._note(
                f"stopped {left:.0f} s before the time budget: the next trial ({kind}) takes about {expected:.0f} s "
                f"here and confirming the result about {self.confirmation_reserve():.0f} s, so it would not have "
                "ended within it"
            )

    def _note(self, note: str) -> None:
        if note not in self.experiment.study.notes:
            self.experiment.study.notes.append(note)

    def around_best(self) -> list[dict]:
        """The untried configurations one step from the best complete trial so far (ADR 0132);
        empty when there is none yet or every one of them was tried."""
        key = self.experiment.study.best_run_key or self.best()
        run = next((r for r in self.experiment.runs if r.run_key == key), None)
        if run is None:
            return []
        tried = {r.run_key for r in self.experiment.runs}
        found = []
        for params in neighbours(self.study.space, json.loads(run.trial.params or "{}")):
            run_key = spaces.suggest(optuna.trial.FixedTrial(params), self.study.space).run_key
            if run_key not in tried:
                tried.add(run_key)
                found.append(params)
        return found

    def _replay(self, sampler: optuna.Study) -> list[tuple[str, dict]]:
        """Tells the sampler the stored trials again; returns the one left running, to go on first."""
        waiting = []
        for run in self.experiment.runs:
            params = json.loads(run.trial.params or "{}")
            if run.trial.state == "running":
                waiting.append((run.trial.origin, params))
                continue
            sampler.enqueue_trial(params)
            trial = sampler.ask()
            spaces.suggest(trial, self.study.space)
            if run.trial.state == "complete":
                self.tell(sampler, trial, run.run_key)
            else:
                sampler.tell(trial, state=optuna.trial.TrialState.PRUNED)
        return waiting

    def _trial(self, sampler, trial, candidate: spaces.Candidate, origin: str, publish, check_stop) -> None:
        started = time.monotonic()
        run = self._run_of(candidate, origin, trial.params)
        info = self.study.space.infos[candidate.strategy]
        chunking = cell(candidate, info)
        try:
            self._sets.ensure(chunking, self.plan, run, lambda *a, **k: None, check_stop)
        except Unavailable:
            raise
        except ServiceError as exc:
            run.trial.state, run.trial.error = "failed", exc.message
            sampler.tell(trial, state=optuna.trial.TrialState.FAIL)
            self._finish(run, started, publish)
            return
        run.retrieval.config_id = chunking.config_id
        state = "complete"
        for step, rung in enumerate(self.study.split.rungs()):
            self._ask(chunking, run, rung, check_stop, publish)
            if not objective.is_pareto(self.goal):  # Optuna takes no intermediate values for several
                trial.report(objective.value(self._scores(run.run_key), self.goal), step)
            if step < len(self.study.split.rungs()) - 1 and self._cannot_win(run.run_key):
                state = "pruned"
                break
        run.trial.state = state
        if state == "pruned":
            sampler.tell(trial, state=optuna.trial.TrialState.PRUNED)
        else:
            self.tell(sampler, trial, run.run_key)
        self._finish(run, started, publish)

    def _cannot_win(self, run_key: str) -> bool:
        """The trial, on the questions asked so far, cannot win even at the top of its interval."""
        best = self.best()
        best_results = self._selection_results(best) if best and best != run_key else None
        return pruning.cannot_win(self._selection_results(run_key), best_results, self.goal)

    def _selection_results(self, run_key: str) -> list[pb.QuestionResult]:
        wanted = {q.question_id for q in self.study.split.selection}
        return [r for r in self._results.get(run_key, []) if r.question_id in wanted]

    def _run_of(self, candidate: spaces.Candidate, origin: str, params: dict) -> pb.ExperimentRun:
        """The trial's run: a new one, or the stored one of a resumed trial (a finished trial's
        configuration is never run again: fresh_proposal)."""
        key = candidate.run_key
        number = self.trials_done() + 1
        for run in self.experiment.runs:
            if run.run_key == key and run.trial.state == "running":
                return run
        info = self.study.space.infos[candidate.strategy]
        chunking = cell(candidate, info)
        base = self.plan.config.retrieval
        options = spaces.retrieval_options(candidate, base, self.study.space.rerank)
        options.strategy, options.config_id = candidate.strategy, chunking.config_id
        if chunking.window is not None:
            options.window = chunking.window
        del options.filter.document_ids[:]
        options.filter.document_ids.extend(self.plan.documents)
        run = self.experiment.runs.add(
            run_key=key,
            retrieval=options,
            spec=chunking.spec,
            expansion=info.expansion,
            config_id=chunking.config_id,
            questions_total=len(self.study.split.selection),
        )
        run.trial.CopyFrom(pb.StudyTrial(number=number, origin=origin, state="running"))
        run.trial.params = spaces.params_json(params)
        self.experiment.questions_total += run.questions_total
        self._deps.repository.save_experiment(self.experiment)
        return run

    def _ask(self, chunking, run: pb.ExperimentRun, questions, check_stop, publish) -> None:
        """The questions the run has not answered yet, QUESTIONS_IN_FLIGHT at once as an
        experiment asks them (ADR 0143): a study is retrieval only."""
        chunking.run_key = run.run_key
        done = {r.question_id for r in self._results.get(run.run_key, [])}
        remaining = [(self._positions[q.question_id], q) for q in questions if q.question_id not in done]
        asked = in_order(
            remaining,
            lambda question: self._asker.ask(chunking, run, question, self.plan, None, None),
            check_stop,
            QUESTIONS_IN_FLIGHT,
        )
        unsaved, first_unsaved = [], 0.0  # retrieval only: saved together within SAVE_EVERY_S (ADR 0121)
        asking = time.perf_counter()
        try:
            started = time.perf_counter()
            for position, _, result in asked:
                self._asked[1] += 1
                unsaved.append((position, result))
                self._results.setdefault(run.run_key, []).append(result)
                self.experiment.questions_done += 1
                run.questions_done += 1
                first_unsaved, started = first_unsaved or started, time.perf_counter()
                if started - first_unsaved >= SAVE_EVERY_S:
                    self._deps.repository.save_progress(self.experiment, unsaved)
                    unsaved, first_unsaved = [], 0.0
        finally:  # what was asked before a stop is kept
            asked.close()
            self._deps.repository.save_progress(self.experiment, unsaved)
            self._asked[0] += time.perf_counter() - asking

    def _scores(self, run_key: str, confirmation: bool = False) -> objective.Scores:
        wanted = {
            q.question_id for q in (self.study.split.confirmation if confirmation else self.study.split.selection)
        }
        return objective.scores([r for r in self._results.get(run_key, []) if r.question_id in wanted])

    def _finish(self, run: pb.ExperimentRun, started: float, publish: Publish) -> None:
        s = self._scores(run.run_key)
        run.trial.questions, run.trial.recall, run.trial.iou, run.trial.tokens_sent = (
            s.questions,
            s.recall,
            s.iou,
            s.tokens,
        )
        run.trial.feasible = objective.feasible(s, self.goal)
        run.trial.seconds += time.monotonic() - started
        self.update()
        self._deps.repository.save_experiment(self.experiment)
        self._publish(publish, f"trial {run.trial.number} ({run.trial.state}): {run.run_key}", run, "searching")

    # -- the result -----------------------------------------------------------

    def best(self) -> str:
        """The best complete trial so far, among those at least the recommendation (ADR 0134)."""
        reference = next(
            (
                r.run_key
                for r in self.experiment.runs
                if r.trial.origin == "recommendation" and r.trial.state == "complete"
            ),
            "",
        )
        return objective.best(self.complete(), self.goal, reference)

    def complete(self) -> list[tuple[str, objective.Scores]]:
        return [(r.run_key, self._scores(r.run_key)) for r in self.experiment.runs if r.trial.state == "complete"]

    def update(self) -> None:
        """The study's result so far: counts, the best trial, the Pareto front."""
        result = self.experiment.study
        runs = self.experiment.runs
        result.trials_done = self.trials_done()
        result.trials_pruned = sum(1 for r in runs if r.trial.state == "pruned")
        result.trials_failed = sum(1 for r in runs if r.trial.state == "failed")
        result.seconds_used = self.seconds_used()
        result.selection_questions = len(self.study.split.selection)
        result.confirmation_questions = len(self.study.split.confirmation)
        result.best_run_key = self.best()
        front = self.front()
        del result.pareto_run_keys[:]
        result.pareto_run_keys.extend(front)
        for run in runs:
            run.trial.pareto = run.run_key in front

    def confirm(self, publish: Publish, check_stop: CheckStop) -> None:
        """The winner, the baseline and the recommendation asked the confirmation questions."""
        self.update()
        result = self.experiment.study
        roles = {"winner": result.best_run_key}
        for origin in ("baseline", "recommendation"):
            run = next(
                (r for r in self.experiment.runs if r.trial.origin == origin and r.trial.state != "failed"), None
            )
            roles[origin] = run.run_key if run is not None else ""
        if not result.best_run_key:
            near = objective.smallest_tokens(self.complete())
            if near is not None and self.goal.max_tokens:
                self._note(
                    f"the fewest tokens per question any trial sent was {near[1]:.0f} ({near[0]}), over the cap of {self.goal.max_tokens}"
                )
        front = self.front_to_confirm(set(roles.values()))
        confirming = [(role, roles[role]) for role in ("winner", "baseline", "recommendation")]
        for role, key in [*confirming, *(("front", key) for key in front)]:
            run = next((r for r in self.experiment.runs if r.run_key == key), None)
            if run is None:
                continue
            if run.questions_total < len(self.study.split.selection) + len(self.study.split.confirmation):
                run.questions_total += len(self.study.split.confirmation)
                self.experiment.questions_total += len(self.study.split.confirmation)
            candidate_cell = cell_of_run(run, self.study.space)
            self._publish(publish, f"confirming {CONFIRMING[role]} on the held-out questions: {key}", run, "confirming")
            self._ask(candidate_cell, run, self.study.split.confirmation, check_stop, publish)
        wanted = {q.question_id for q in self.study.split.confirmation}
        keys = [k for k in [*roles.values(), *front] if k]
        by_run = {k: [r for r in self._results.get(k, []) if r.question_id in wanted] for k in keys}
        confirm.fill(result, roles, by_run, self.goal, front)
        result.finished = True
        result.seconds_used = self.seconds_used()

    def front_to_confirm(self, confirmed: set[str]) -> list[str]:
        """PARETO: the front of the trials within the token cap, beside the runs confirmed anyway,
        at most MAX_FRONT_CONFIRMED spread along the tokens sent; other objectives: none."""
        if not objective.is_pareto(self.goal):
            return []
        front = set(self.front())
        others = [(key, s) for key, s in self.complete() if key in front and key not in confirmed]
        return objective.spread(others, MAX_FRONT_CONFIRMED)

    def front(self) -> list[str]:
        """The Pareto front of the finished trials that meet the objective's limits (the token cap,
        the recall floor): a trial over the cap is never shown as a trade-off worth taking."""
        return objective.pareto([(key, s) for key, s in self.complete() if objective.feasible(s, self.goal)])

    def _publish(self, publish: Publish, message: str, run: pb.ExperimentRun, phase: str) -> None:
        result = self.experiment.study
        best = next((r for r in self.experiment.runs if r.run_key == result.best_run_key), None)
        progress = pb.StudyProgress(
            trials_done=result.trials_done,
            trials_budget=self.study.trials,
            seconds_used=self.seconds_used(),
            seconds_budget=self.study.seconds,
            best_run_key=result.best_run_key,
            trial=run.trial,
            trial_run_key=run.run_key,
            phase=phase,
        )
        if best is not None:
            progress.best_recall, progress.best_iou = best.trial.recall, best.trial.iou
            progress.best_tokens_sent = best.trial.tokens_sent
        publish(
            pb.ExperimentEvent(
                progress=pb.ExperimentProgress(
                    experiment_id=self.experiment.experiment_id,
                    questions_done=self.experiment.questions_done,
                    questions_total=self.experiment.questions_total,
                    message=message,
                    run_key=run.run_key,
                    study=progress,
                )
            )
        )


def fresh_proposal(
    sampler: optuna.Study,
    space: spaces.Space,
    runs,
    tell: Callable[[optuna.Study, optuna.trial.Trial, str], None],
) -> tuple[optuna.trial.Trial, spaces.Candidate] | None:
    """The sampler's next configuration that no finished trial has tried. A repeat is not run
    again and not counted against the budget: the sampler is told the stored trial's outcome
    (its value, or pruned, or failed) and asked again. None after MAX_REPEATS repeats in a row:
    the space holds nothing new the sampler would try. tell(sampler, trial, run_key) tells a
    complete trial's scores."""
    for _ in range(MAX_REPEATS):
        trial = sampler.ask()
        candidate = spaces.suggest(trial, space)
        earlier = next((r for r in runs if r.run_key == candidate.run_key and r.trial.state != "running"), None)
        if earlier is None:
            return trial, candidate
        if earlier.trial.state == "complete":
            tell(sampler, trial, earlier.run_key)
        else:
            state = optuna.trial.TrialState.PRUNED if earlier.trial.state == "pruned" else optuna.trial.TrialState.FAIL
            sampler.tell(trial, state=state)
    return None


def cell_of_run(run: pb.ExperimentRun, space: spaces.Space):
    """A stored run's cell (its spec and config_id as stored)."""
    from services.evaluator.experiments.grid import Cell

    window = run.retrieval.window if run.retrieval.HasField("window") else None
    return Cell(run.run_key, run.spec, space.infos[run.spec.name], window, run.config_id)
