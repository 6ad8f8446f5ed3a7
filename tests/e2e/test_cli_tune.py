"""`chunklab tune` as a person types it (issue 29, item 3; ADR 0116), against the running
stack and the real study: upload two documents, import ten hand-made questions, search a
budget of a few trials with a progress bar on stderr, print the winner beside the static
recommendation and the baseline on the confirmation questions; the same as JSON; a question
set too small to split refused before anything runs, saying how many questions it needs."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.support import study_docs
from tests.support.cli import run_cli

pytestmark = pytest.mark.e2e
TRIALS = 3


def cli(stack, *args: str) -> subprocess.CompletedProcess:
    return run_cli(stack.env(), *args, timeout=900)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tune")
    for name, text in study_docs.DOCUMENTS.items():
        (folder / name).write_text(text)
    (folder / "questions.jsonl").write_text(study_docs.questions_jsonl())
    return folder


def test_tune_searches_a_few_trials_and_prints_the_winner_beside_the_recommendation_and_the_baseline(stack, files):
    corpus = [str(files / name) for name in study_docs.DOCUMENTS]
    done = cli(
        stack, "tune", "--corpus", *corpus, "--questions", str(files / "questions.jsonl"), "--trials", str(TRIALS)
    )
    assert done.returncode == 0, done.stderr
    # The bar counts the trials against the budget, and says the best so far.
    assert f"{TRIALS}/{TRIALS} " in done.stderr and "best so far: " in done.stderr
    assert "imported 10 questions" in done.stderr
    out = done.stdout
    assert f"budget {TRIALS} trials" in out
    assert "tuned on 5 questions, confirmed on 5 other questions" in out
    for role in ("winner", "static recommendation", "fixed_size baseline"):
        line = re.search(
            rf"^  {role}(?: \([^)]*\))?: (\S+)\n    recall (.+) · IoU (.+) · tokens per question (.+)$", out, re.M
        )
        assert line, f"{role} is not shown in:\n{out}"
        assert re.fullmatch(r"\d+\.\d% \[\d+\.\d%, \d+\.\d%\]", line.group(2)), line.group(2)
    assert "Lead over the static recommendation on recall" in out
    study_id = re.search(r"^study (\S+):", out, re.M).group(1)
    assert f"chunklab export snippet --experiment {study_id} --run" in out

    # A study compares alone in Compare: each trial against its first, the static recommendation.
    compared = cli(stack, "compare", study_id)
    assert compared.returncode == 0, compared.stderr
    first = re.search(r"^  static recommendation(?: \([^)]*\))?: (\S+)$", out, re.M).group(1)
    assert re.search(rf"^recall\s+\S+\s+vs {re.escape(first[:30])}", compared.stdout, re.M), compared.stdout

    # The same study as JSON: the three configurations' intervals and every trial.
    again = cli(stack, "tune", "--question-set", question_set_of(done.stderr), "--trials", "2", "--json")
    assert again.returncode == 0, again.stderr
    shown = json.loads(again.stdout)
    assert {c["role"] for c in shown["confirmation"]} == {"winner", "recommendation", "baseline"}
    winner = next(c for c in shown["confirmation"] if c["role"] == "winner")
    assert winner["recall"]["ci_low"] <= winner["recall"]["mean"] <= winner["recall"]["ci_high"]
    assert [t["number"] for t in shown["trials"]] == [1, 2]
    assert shown["trials"][0]["origin"] == "recommendation"


def question_set_of(stderr: str) -> str:
    return re.search(r"imported 10 questions as (\S+)", stderr).group(1)


def test_a_question_set_too_small_to_split_is_refused_before_anything_runs(stack, files):
    few = files / "few.jsonl"
    few.write_text("".join(study_docs.questions_jsonl().splitlines(keepends=True)[:3]))
    done = cli(stack, "tune", "--questions", str(few), "--trials", "3")
    assert done.returncode == 3, done.stderr  # the evaluator refused: INVALID_ARGUMENT
    assert "the question set has 3 questions with reference excerpts" in done.stderr, done.stderr
    assert "needs at least 8 (4 on each side): add questions" in done.stderr
    assert "best so far" not in done.stderr  # no trial ran


def test_flags_that_do_not_go_together_are_refused_with_what_to_write(stack):
    done = cli(stack, "tune", "--question-set", "x", "--objective", "iou")
    assert done.returncode == 2
    assert "--objective iou needs --min-recall (e.g. --min-recall 90%)" in done.stderr
