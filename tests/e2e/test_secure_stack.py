"""A whole stack with a token and TLS on (ADR 0048), started by the launcher
with a certificate the test makes: the end-to-end slice passes through the
client library, the services' calls to each other and the CLI; a client
without the token, or without TLS, does not get in. A service bound beyond
loopback without a token warns at start."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from chunklab.client import ChunkLab, ClientError, experiment_outcome
from chunklab.v1 import common_pb2, evaluator_pb2
from chunklab_app.stack import REPO, Stack, wait_serving
from tests.support.certificates import make_certificates
from tests.support.topics import expected_windows

pytestmark = pytest.mark.e2e

TOKEN = "stack-token-for-the-secure-slice-42"
FIXTURE = Path(__file__).parents[1] / "fixtures" / "topics.md"
NO_TOKEN = "This ChunkLab stack needs a token: set CHUNKLAB_AUTH_TOKEN to the stack's token."


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    """Four services, each its own process, with the token and TLS on."""
    certificates = make_certificates(tmp_path_factory.mktemp("certificates"))
    stack = Stack(
        data_dir=tmp_path_factory.mktemp("secure-stack"), extra_env={"CHUNKLAB_AUTH_TOKEN": TOKEN, **certificates.env()}
    )
    stack.start()
    yield stack
    stack.stop()


@pytest.fixture(scope="module")
def topics(secure):
    """The hand-built document, uploaded and processed with fixed_size 41/0 (eight paragraph windows)."""
    lab = secure.client()
    document = lab.upload_document(FIXTURE, language="en").document
    spec = common_pb2.StrategySpec(
        name="fixed_size",
        knobs={"chunk_size": common_pb2.KnobValue(int_value=41), "chunk_overlap": common_pb2.KnobValue(int_value=0)},
    )
    result = lab.process(document.document_id, [spec])
    assert [(o.strategy, o.chunk_count) for o in result.strategies_completed] == [("fixed_size", 8)], result
    return document


def test_the_slice_uploads_processes_and_retrieves_with_the_token_over_tls(secure, topics):
    lab = secure.client()
    assert secure.settings().tls and secure.settings().auth_token == TOKEN
    assert lab.get_document_text(topics.document_id).text == FIXTURE.read_text(encoding="utf-8")
    response = lab.retrieve(
        "how do sailors trim a mainsail?",
        common_pb2.RetrievalOptions(
            strategy="fixed_size", top_k=1, filter=common_pb2.RetrievalFilter(document_ids=[topics.document_id])
        ),
    )
    (entry,) = response.retrieved_chunks
    windows = expected_windows(FIXTURE.read_text(encoding="utf-8"), 41)
    # The window that holds "Sailors trim the mainsail" (it ends there; 6 goes on with the jib).
    assert (entry.chunk.chunk_index, entry.chunk.content) == (5, windows[5])
    assert windows[5].endswith("Sailors trim the mainsail and")


def test_a_tiny_experiment_runs_through_the_evaluators_peers(secure, topics):
    """The evaluator calls the ingest, the chunker and the retriever with the token, over TLS."""
    lab = secure.client()
    questions = "\n".join(
        json.dumps(q)
        for q in [
            {
                "question": "How do volcanologists predict an eruption?",
                "references": [{"document": "topics", "content": "measuring the gas a volcano releases"}],
            },
            {
                "question": "What do jazz musicians improvise over?",
                "references": [{"document": "topics", "content": "improvise over the chord changes"}],
            },
        ]
    ).encode()
    question_set = lab.import_question_set(questions, name="secure.jsonl", document_ids={"topics": topics.document_id})
    config = evaluator_pb2.ExperimentConfig(
        name="secure slice",
        question_set_id=question_set.question_set_id,
        retrieval_only=True,
        strategies=[
            evaluator_pb2.StrategyGrid(
                strategy="fixed_size",
                grid=[
                    evaluator_pb2.KnobGrid(knob="chunk_size", values=[common_pb2.KnobValue(int_value=41)]),
                    evaluator_pb2.KnobGrid(knob="chunk_overlap", values=[common_pb2.KnobValue(int_value=0)]),
                ],
            )
        ],
        retrieval=common_pb2.RetrievalOptions(top_k=1),
    )
    experiment = lab.get_experiment(experiment_outcome(lab.run_experiment(config)).experiment.experiment_id)
    assert experiment.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, experiment.error
    (run,) = experiment.runs
    assert (run.run_key, run.chunk_count, run.index_reused) == ("fixed_size[chunk_size=41,chunk_overlap=0]", 8, True)
    found = {
        r.question: ([e.chunk.chunk_index for e in r.retrieved_chunks], r.metrics.recall_hits)
        for r in experiment.results
    }
    assert found == {
        "How do volcanologists predict an eruption?": ([4], 1.0),
        "What do jazz musicians improvise over?": ([7], 1.0),
    }


def test_without_the_token_or_with_a_wrong_one_a_client_is_told_what_to_set(secure, topics):
    tls_only = secure.settings().model_copy(update={"auth_token": ""})
    with pytest.raises(ClientError) as caught:
        ChunkLab.at(secure.addresses, tls_only).list_documents()
    assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
    assert caught.value.message == f"The ingest service at {secure.addresses['ingest']} refused the call. {NO_TOKEN}"
    wrong = secure.settings().model_copy(update={"auth_token": "another-stack-token-0000"})
    for call in (lambda lab: lab.list_strategies(), lambda lab: list(lab.process_document(topics.document_id, []))):
        with pytest.raises(ClientError) as caught:
            call(ChunkLab.at(secure.addresses, wrong))
        assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
        assert "The token sent is not this ChunkLab stack's" in caught.value.message
    # Health needs no token (the launcher and probes wait on it), but TLS it does.
    wait_serving(secure.addresses["retriever"], 10, tls_only)
    plaintext = secure.settings().model_copy(update={"tls_ca": "", "tls_cert": "", "tls_key": ""})
    with pytest.raises(ClientError) as caught:
        ChunkLab.at(secure.addresses, plaintext).list_strategies()
    assert caught.value.code == grpc.StatusCode.UNAVAILABLE


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "chunklab_app.cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_cli_works_with_the_token_and_without_it_exits_with_what_to_set(secure, topics):
    listed = cli(secure.env(), "strategies")
    assert listed.returncode == 0, listed.stderr
    assert "fixed_size" in listed.stdout
    asked = cli(
        secure.env(), "query", "how do sailors trim a mainsail?", "--strategy", "fixed_size", "--top-k", "1", "--json"
    )
    assert asked.returncode == 0, asked.stderr
    assert "Sailors trim the mainsail and" in asked.stdout
    env = {k: v for k, v in secure.env().items() if k != "CHUNKLAB_AUTH_TOKEN"}
    refused = cli(env, "strategies")
    assert refused.returncode == 3
    assert (
        refused.stderr
        == f"chunklab: The chunker service at {secure.addresses['chunker']} refused the call. {NO_TOKEN}\n"
    )


def test_a_service_bound_beyond_loopback_without_a_token_warns_at_start(tmp_path):
    env = {
        "CHUNKLAB_DATA_DIR": str(tmp_path),
        "CHUNKLAB_INGEST_ADDRESS": "0.0.0.0:0",
        "CHUNKLAB_RETRIEVER_ADDRESS": "127.0.0.1:1",
        "PATH": "/usr/bin:/bin",
        "HF_HUB_OFFLINE": "1",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "services.ingest"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert "ingest listening on 0.0.0.0:" in process.stdout.readline()
    finally:
        # The warning is written before the line read above; how the service stops is
        # test_shutdown.py's subject, so this one does not wait on it.
        process.kill()
    _, stderr = process.communicate()
    assert (
        "WARNING: chunklab ingest listens on 0.0.0.0, beyond loopback, without a token: anyone who can reach "
        "it can call it. Set CHUNKLAB_AUTH_TOKEN (and CHUNKLAB_TLS_CERT/KEY) to protect it."
    ) in stderr
