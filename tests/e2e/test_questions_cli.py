"""From an uploaded document and an OpenAI-compatible endpoint to an
experiment, from the command line (issue 16): `chunklab questions generate`
against the stack with the fake OpenAI server as the generator, the set
exported and validated, then an experiment run on it; a broken file is
told what to fix."""

from __future__ import annotations

import json
import subprocess

import pytest

from chunklab.settings import Settings
from tests.support.cli import run_cli
from tests.support.fake_openai import FakeOpenAI

pytestmark = pytest.mark.e2e

# Three paragraphs on three topics, in bytes no other test uploads.
ALMANAC = """# Quillon almanac

Quillon's glassblowers fire their furnaces with beech wood cut in the northern forest each autumn.

The Quillon tramway climbs from the harbour to the observatory in eleven minutes on a steel cable.

Every spring the Quillon choir sings the tide hymn on the breakwater at the first full moon.
"""


def cli(stack, *args: str) -> subprocess.CompletedProcess:
    return run_cli(stack.env(), *args)


SENTENCES = [line for line in ALMANAC.splitlines() if line.endswith(".")]


def questions_on(messages, model) -> str:
    """A question on the almanac's sentence that shares the most words with the passage; that
    sentence is its excerpt."""
    passage = set(messages[-1]["content"].split('"""')[1].split())
    sentence = max(SENTENCES, key=lambda s: len(passage & set(s.split())))
    words = sentence.split()
    return json.dumps(
        {
            "question": f"What is said of {' '.join(words[1:3])} in Quillon?",
            "answer": " ".join(words[3:8]),
            "excerpts": [sentence],
        }
    )


def test_a_generated_set_is_exported_validated_and_an_experiment_runs_on_it(stack, tmp_path):
    document = tmp_path / "quillon.md"
    document.write_text(ALMANAC)
    exported = tmp_path / "quillon-questions.jsonl"
    with FakeOpenAI() as fake:
        fake.responder = questions_on
        dry = cli(
            stack,
            "questions",
            "generate",
            str(document),
            "--count",
            "3",
            "--base-url",
            fake.base_url,
            "--model",
            "fake",
            "--dry-run",
        )
        assert dry.returncode == 0, dry.stderr
        assert json.loads(dry.stdout)["estimate"]["llm_calls"] == 3 and fake.calls == []
        done = cli(
            stack,
            "questions",
            "generate",
            str(document),
            "--count",
            "3",
            "--seed",
            "4",
            "--name",
            "quillon",
            "--base-url",
            fake.base_url,
            "--model",
            "fake",
            "--out",
            str(exported),
            "--json",
        )
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert (outcome["state"], outcome["asked"], outcome["kept"], outcome["failed"], outcome["dropped"]) == (
        "succeeded",
        3,
        3,
        0,
        {},
    )
    assert outcome["provenance"]["generator_model"] == f"fake at {fake.base_url}"
    assert (
        outcome["provenance"]["seed"] == "4" and outcome["provenance"]["embedding_model"] == Settings().embedding_model
    )
    records = [json.loads(line) for line in exported.read_text().splitlines()]
    assert [r["references"][0]["content"] for r in records] == SENTENCES

    checked = cli(stack, "questions", "validate", str(exported), "--json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    report = json.loads(checked.stdout)
    assert (report["questions_valid"], report["references_exact"], report.get("problems", [])) == (3, 3, [])

    run = cli(
        stack,
        "experiment",
        "--question-set",
        outcome["question_set_id"],
        "--strategy",
        "fixed_size",
        "--grid",
        "fixed_size.chunk_size=32",
        "--grid",
        "fixed_size.chunk_overlap=0",
        "--top-k",
        "2",
        "--retrieval-only",
        "--json",
    )
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert summary["state"] == "succeeded" and [r["questions"] for r in summary["runs"]] == [3]


def test_a_broken_file_is_told_what_to_fix_and_a_lenient_import_leaves_it_out(stack, tmp_path):
    stack.client().upload_document(
        ALMANAC.replace("Quillon almanac", "Quillon notes").encode(), name="quillon-notes.md"
    )
    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        "\n".join(
            json.dumps(q)
            for q in [
                {
                    "question": "How fast is the tramway?",
                    "references": [
                        {
                            "document": "quillon-notes",
                            "content": "The tramway climbs to the observatory in eleven minutes",
                        }
                    ],
                },
                {
                    "question": "Who sings?",
                    "references": [{"document": "quillon-notes", "content": "the Quillon choir"}],
                },
            ]
        )
        + "\n"
    )
    checked = cli(stack, "questions", "validate", str(broken))
    assert checked.returncode == 1
    lines = checked.stdout.splitlines()
    assert lines[0] == "1 of 2 questions kept (strict); references: 1 exact, 0 snapped, 1 not located, of 2"
    assert lines[1].startswith(
        "line 1 reference 1: not_found (left out): line 1: the excerpt 'The tramway climbs "
        "to the observatory in eleven minutes' does not occur in 'quillon-notes'; the closest "
        "span, text["
    )
    imported = cli(stack, "questions", "import", str(broken), "--lenient", "--json")
    assert imported.returncode == 0, imported.stderr
    summary = json.loads(imported.stdout)
    assert summary["question_count"] == 1 and summary["validation"]["questions_left_out"] == 1
    run = cli(
        stack,
        "experiment",
        "--questions",
        str(broken),
        "--lenient",
        "--strategy",
        "fixed_size",
        "--grid",
        "fixed_size.chunk_size=32",
        "--grid",
        "fixed_size.chunk_overlap=0",
        "--top-k",
        "2",
        "--retrieval-only",
        "--json",
    )
    assert run.returncode == 0, run.stderr
    assert "(1 left out: `chunklab questions validate` says why)" in run.stderr
    assert [r["questions"] for r in json.loads(run.stdout)["runs"]] == [1]
