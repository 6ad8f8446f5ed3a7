"""A killed evaluator loses nothing it finished: SIGKILL it mid-run, start it
again on the same data folder, find the experiment interrupted with its
finished questions, and resume it without redoing them.

The evaluator here is its own process on its own data folder, talking to the
session stack's ingest, chunker and retriever; answers come from a local
OpenAI-compatible server that is told to hang on the third question.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from chunklab.client import ChunkLab
from chunklab.knobs import to_spec
from chunklab.rpc import channels
from chunklab.settings import Settings
from chunklab.v1 import evaluator_pb2, retriever_pb2
from chunklab_app.stack import REPO, wait_serving
from tests.support.fake_openai import FakeOpenAI
from tests.support.rivers import DOCUMENT, QUESTIONS, asked, rivers_experiment, run_until_the_third_answer

pytestmark = pytest.mark.e2e


def start_evaluator(stack, data_dir: Path, log: Path) -> tuple[subprocess.Popen, str]:
    env = stack.env()
    env["CHUNKLAB_DATA_DIR"] = str(data_dir)
    env["CHUNKLAB_EVALUATOR_ADDRESS"] = "127.0.0.1:0"
    env["CHUNKLAB_LLM_TIMEOUT_S"] = "300"
    process = subprocess.Popen(
        [sys.executable, "-m", "services.evaluator"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=log.open("ab"),
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
    while True:
        try:
            line = lines.get(timeout=120)
        except queue.Empty:
            process.kill()
            raise RuntimeError(f"the evaluator did not start: {log.read_text()[-2000:]}") from None
        if "listening on" in line:
            address = line.rsplit(" ", 1)[-1].strip()
            wait_serving(address, 60)
            return process, address


def test_a_killed_evaluator_keeps_finished_questions_and_resumes_without_redoing_them(stack, tmp_path):
    lab = stack.client()
    document = lab.upload_document(DOCUMENT.encode(), name="rivers.md", collection="resume-test").document
    # Indexed on the Documents page before the experiment: fixed_size 32/0.
    lab.process(document.document_id, [to_spec("fixed_size", {"chunk_size": 32, "chunk_overlap": 0})])

    def indexed() -> retriever_pb2.IndexedSet:
        return lab.indexed_set(document.document_id, "fixed_size", embedding_model=Settings().embedding_model)

    before = indexed()
    assert before is not None and before.active
    log = tmp_path / "evaluator.log"
    process, address = start_evaluator(stack, tmp_path / "evaluator-data", log)
    try:
        with FakeOpenAI() as fake:
            config = rivers_experiment(address, fake, document.document_id, "resume me")
            stream, experiment_id = run_until_the_third_answer(ChunkLab.at({"evaluator": address}), config, fake)
            assert indexed() == before  # the experiment's 16/0 is a set of its own: the active one is untouched
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
            stream.close()  # cancels the call
            assert [asked(c) for c in fake.calls] == QUESTIONS[:3]

            process, address = start_evaluator(stack, tmp_path / "evaluator-data", log)
            evaluator = channels.evaluator(address)
            interrupted = evaluator.GetExperiment(
                evaluator_pb2.GetExperimentRequest(experiment_id=experiment_id), timeout=30
            )
            assert interrupted.state == evaluator_pb2.EXPERIMENT_STATE_INTERRUPTED
            assert "interrupted" in interrupted.error
            assert [r.question for r in interrupted.results] == QUESTIONS[:2]
            assert interrupted.runs[0].questions_done == 2 and interrupted.questions_done == 2
            kept = {r.question_id: r.SerializeToString() for r in interrupted.results}
            assert indexed() == before  # killed mid-run, it left nothing to put back

            fake.calls.clear()
            fake.behaviour = "good"
            events = list(ChunkLab.at({"evaluator": address}).resume_experiment(experiment_id))
            done = events[-1].experiment
            assert done.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, done.error
            assert [asked(c) for c in fake.calls] == QUESTIONS[2:]  # the finished two were not asked again
            final = evaluator.GetExperiment(evaluator_pb2.GetExperimentRequest(experiment_id=experiment_id), timeout=30)
            assert sorted(r.question for r in final.results) == sorted(QUESTIONS)
            assert final.runs[0].questions_done == 5 and final.runs[0].usage.llm_calls == 5
            for result in final.results:
                assert result.answer == f"Answer to: {result.question}"
                if result.question_id in kept:
                    assert result.SerializeToString() == kept[result.question_id]
            # The experiment ran on its own 16/0 set (reused on resume); the active set never moved.
            assert final.runs[0].config_id != before.config_id and final.runs[0].index_reused
            assert {c.chunk.config_id for r in final.results for c in r.retrieved_chunks} == {final.runs[0].config_id}
            assert indexed() == before
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
