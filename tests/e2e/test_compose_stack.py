"""The compose stack as processes: every service of docker-compose.yml started
here with exactly the environment compose gives its container (read from the
validated compose model), beside a real PostgreSQL and a real Redis, with the
Qdrant server's REST API stood in by qdrant-client's local mode (ADR 0069).

What cannot exist on this machine is mapped, and only that
(tests/support/compose_processes.py says how): compose host names become
127.0.0.1 and free ports, /data and the image's paths become folders here,
`python -m ...` runs with this venv's python. The chunker runs as two
replicas at least (as `docker compose up --scale chunker=2`, or more where
compose's `deploy.replicas` says so); a scaled service's name becomes the list
of its replicas where peer addresses take lists, else its first replica.
Then the end-to-end slice (upload, process, query, a small experiment) and a
bulk load through Redis shared by both replicas run through it.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import sqlalchemy as sa

from chunklab.client import ChunkLab, experiment_outcome
from chunklab.settings import settings_from
from chunklab.v1 import common_pb2, evaluator_pb2
from tests.support.compose_model import REPO, resolved_model
from tests.support.compose_processes import LOOPBACK, ComposeProcesses, image_environment
from tests.support.grids import fixed as fixed_grid
from tests.support.postgres_server import PostgresServer
from tests.support.qdrant_shim import QdrantShim
from tests.support.redis_server import RedisServer
from tests.support.topics import CHUNK_SIZE, FIXTURE, expected_windows, fixed_size

pytestmark = pytest.mark.e2e

INIT_SQL = REPO / "deploy" / "postgres" / "init-databases.sql"
PEER_ADDRESSES = {f"CHUNKLAB_{name}_ADDRESS" for name in ("INGEST", "CHUNKER", "RETRIEVER", "EVALUATOR")}
# Per service, the variables mapped besides the peer addresses, the data folder and the
# image's tiktoken cache; every other value is compose's own.
MAPPED_BESIDES = {
    "retriever": {"CHUNKLAB_QDRANT_URL"},
    "ingest": {"CHUNKLAB_DATABASE_URL"},
    "chunker": {"CHUNKLAB_BROKER_URL"},
    "evaluator": {"CHUNKLAB_DATABASE_URL"},
    "ui": {"CHUNKLAB_UI_HOST", "CHUNKLAB_UI_PORT"},
}
QUESTIONS = {  # question -> the excerpt that answers it, each inside one CHUNK_SIZE-token window (chunks 1 and 6)
    "How long does sourdough rise?": "let sourdough rise overnight in a cool kitchen",
    "What do sailors do with the sheets on a broad reach?": "easing the sheets on a broad reach",
}


def run_init_sql(postgres: PostgresServer) -> None:
    """deploy/postgres/init-databases.sql, which compose mounts into the postgres
    container's first start; one statement at a time (CREATE DATABASE runs in none)."""
    text = "\n".join(line for line in INIT_SQL.read_text().splitlines() if not line.startswith("--"))
    engine = sa.create_engine(postgres.url("postgres"), isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        for statement in filter(None, (s.strip() for s in text.split(";"))):
            connection.exec_driver_sql(statement)
    engine.dispose()


@pytest.fixture(scope="module")
def backing(tmp_path_factory):
    """PostgreSQL and Redis for real, Qdrant's API in local mode."""
    postgres = PostgresServer()
    redis = qdrant = None
    try:
        run_init_sql(postgres)
        redis = RedisServer(tmp_path_factory.mktemp("redis"))
        qdrant = QdrantShim().start()
        yield {"postgres": postgres, "redis": redis, "qdrant": qdrant}
    finally:
        for server in (qdrant, redis, postgres):
            if server is not None:
                server.stop()


@pytest.fixture(scope="module")
def model() -> dict:
    return resolved_model()


@pytest.fixture(scope="module")
def stack(model, backing, tmp_path_factory):
    """Every ChunkLab service of the compose file, two chunker replicas, in compose's order."""
    port_of = {
        "postgres": backing["postgres"].port,
        "redis": backing["redis"].port,
        "qdrant": int(backing["qdrant"].root.rpartition(":")[2]),
    }
    running = ComposeProcesses(
        model,
        tmp_path_factory.mktemp("compose"),
        {name: (LOOPBACK, port) for name, port in port_of.items()},
        replicas={"chunker": 2},
    )
    running.start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def lab(stack) -> ChunkLab:
    """A client as the UI's container has it: its environment's settings."""
    return ChunkLab(settings_from(stack.processes["ui"].env))


def test_every_compose_service_runs_with_its_containers_environment_mapped_only_where_it_must_be(stack, model, backing):
    assert stack.order == ["retriever", "ingest", "chunker", "evaluator", "ui"]
    assert stack.replicas["chunker"] >= 2 and stack.names("chunker")[:2] == ["chunker", "chunker-2"]
    assert list(stack.processes) == [name for service in stack.order for name in stack.names(service)]
    hosts = "|".join(model["services"])
    for name, process in stack.processes.items():
        container = {**image_environment(), **model["services"][process.service]["environment"]}
        assert set(process.env) == set(container) | {"PATH", "HOME"}, name
        changed = {key for key, value in container.items() if process.env[key] != value}
        expected = PEER_ADDRESSES | {"CHUNKLAB_DATA_DIR", "TIKTOKEN_CACHE_DIR"} | MAPPED_BESIDES[process.service]
        assert changed == expected, name
        assert {(n, k) for n, k, _, _ in stack.mapped if n == name} == {(name, k) for k in changed}
        for key in changed:
            assert not re.search(rf"(?<![\w.-])({hosts}|0\.0\.0\.0):\d", process.env[key]), (name, key)
        own = (
            {"CHUNKLAB_UI_PORT": str(process.port)}
            if process.service == "ui"
            else {f"CHUNKLAB_{process.service.upper()}_ADDRESS": f"127.0.0.1:{process.port}"}
        )
        assert {key: process.env[key] for key in own} == own  # each replica on its own port
    postgres, redis, qdrant = backing["postgres"], backing["redis"], backing["qdrant"]
    for service in ("ingest", "evaluator"):
        assert (
            stack.processes[service].env["CHUNKLAB_DATABASE_URL"]
            == f"postgresql+psycopg://chunklab:chunklab@127.0.0.1:{postgres.port}/{service}"
        )
    assert stack.processes["chunker-2"].env["CHUNKLAB_BROKER_URL"] == redis.url
    chunkers = [f"127.0.0.1:{stack.processes[name].port}" for name in stack.names("chunker")]
    assert stack.processes["evaluator"].env["CHUNKLAB_CHUNKER_ADDRESS"] == ",".join(chunkers)
    assert stack.processes["chunker"].env["CHUNKLAB_BULK_WORKERS"] == "1"  # compose's own value
    assert stack.processes["retriever"].env["CHUNKLAB_QDRANT_URL"] == qdrant.root
    assert f"retriever index: Qdrant at {qdrant.root}" in stack.log("retriever")
    # Replicas share their service's volume; services keep their own.
    data = {name: process.env["CHUNKLAB_DATA_DIR"] for name, process in stack.processes.items()}
    assert data["chunker"] == data["chunker-2"] and len(set(data.values())) == len(stack.order)


def test_each_service_passes_its_compose_healthcheck(stack):
    for process in stack.processes.values():  # run once more now that all are up
        done = subprocess.run(process.healthcheck, capture_output=True, text=True, timeout=60)
        target = process.healthcheck[-1]
        assert target.endswith(f":{process.port}/" if process.service == "ui" else f":{process.port}")
        healthy = f"{target}: HTTP 200" if process.service == "ui" else f"{target}: SERVING"
        assert (done.returncode, done.stdout.strip()) == (0, healthy), (process.name, done.stderr)


@pytest.fixture(scope="module")
def topics(lab):
    """The hand-built document uploaded and processed with fixed_size (CHUNK_SIZE tokens)."""
    document = lab.upload_document(FIXTURE.read_bytes(), name="topics.md").document
    return document, lab.process(document.document_id, [fixed_size()])


def test_upload_process_and_query_go_through_postgresql_and_the_qdrant_api(stack, lab, backing, topics):
    document, result = topics
    assert (
        [(o.strategy, o.chunk_count) for o in result.strategies_completed]
        == [("fixed_size", len(expected_windows(FIXTURE.read_text(encoding="utf-8"), CHUNK_SIZE)))]
        == [("fixed_size", 8)]
    )

    response = lab.retrieve(
        "volcano eruption magma lava",
        common_pb2.RetrievalOptions(
            strategy="fixed_size", top_k=2, filter=common_pb2.RetrievalFilter(document_ids=[document.document_id])
        ),
    )
    assert sorted(e.chunk.chunk_index for e in response.retrieved_chunks) == [2, 4]

    qdrant = backing["qdrant"].client
    (collection,) = [c.name for c in qdrant.get_collections().collections]
    assert qdrant.count(collection).count == 8  # the retriever's points are in "the server"
    engine = sa.create_engine(backing["postgres"].url("ingest"))
    with engine.connect() as connection:
        stored = connection.exec_driver_sql("select document_id, name from documents").all()
    engine.dispose()
    assert [tuple(row) for row in stored] == [(document.document_id, "topics.md")]
    ingest_data = stack.processes["ingest"].env["CHUNKLAB_DATA_DIR"]
    assert not list(Path(ingest_data).glob("*.sqlite3"))


def test_a_small_experiment_finds_each_reference_in_its_top_chunk(lab, backing, topics):
    text = FIXTURE.read_text(encoding="utf-8")
    document, _ = topics
    lines = [
        json.dumps(
            {
                "question": question,
                "document": "topics",
                "references": [
                    {
                        "content": excerpt,
                        "start_index": text.index(excerpt),
                        "end_index": text.index(excerpt) + len(excerpt),
                    }
                ],
            }
        )
        for question, excerpt in QUESTIONS.items()
    ]
    question_set = lab.import_question_set(
        "\n".join(lines).encode(),
        name="topics-2.jsonl",
        document_ids={"topics": document.document_id},
        excerpt_check=evaluator_pb2.EXCERPT_CHECK_STRICT,
    )
    assert question_set.question_count == 2
    config = evaluator_pb2.ExperimentConfig(
        name="compose slice",
        question_set_id=question_set.question_set_id,
        retrieval_only=True,
        strategies=[fixed_grid(CHUNK_SIZE, 0)],
        retrieval=common_pb2.RetrievalOptions(top_k=1),
    )
    experiment = experiment_outcome(lab.run_experiment(config)).experiment
    assert experiment.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED
    ((questions_done, recall, error),) = [(r.questions_done, r.mean_metrics.recall, r.error) for r in experiment.runs]
    assert (questions_done, recall, error) == (2, 1.0, "")
    engine = sa.create_engine(backing["postgres"].url("evaluator"))
    with engine.connect() as connection:
        stored = connection.exec_driver_sql("select experiment_id from experiments").scalars().all()
    engine.dispose()
    assert stored == [experiment.experiment_id]


def test_a_bulk_load_goes_through_redis_and_both_chunker_replicas_take_jobs(stack, lab, backing):
    ids = []
    for number in range(6):
        body = f"Note {number}. " + " ".join(f"The harbour log of day {number} records tide {n}." for n in range(30))
        ids.append(lab.upload_document(body.encode(), name=f"note-{number}.md").document.document_id)
    submitted = lab.submit_bulk_load(ids, [common_pb2.StrategySpec(name="fixed_size")])
    assert submitted.broker == f"Redis at 127.0.0.1:{backing['redis'].port}/0"
    *_, done = lab.follow_bulk_load(submitted.bulk_load_id, timeout=300)
    assert (done.jobs_total, done.jobs_finished, done.jobs_failed) == (6, 6, 0)
    assert sorted(r.document_id for r in done.results) == sorted(ids)
    pids = {int(r.worker.split(":")[1]) for r in done.results}
    assert pids == {stack.processes[name].popen.pid for name in stack.names("chunker")}
    for job in done.results:
        (completed,) = job.result.strategies_completed
        indexed = lab.indexed_set(job.document_id, "fixed_size")
        assert indexed is not None and indexed.points == completed.chunk_count > 0
