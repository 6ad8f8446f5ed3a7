"""docker-compose.yml's ChunkLab services started as local processes, each with
the environment compose gives its container, read from the validated compose
model (tests/support/compose_model.py).

A container's environment is its image's (the Dockerfile's ENV, on top of the
python base image's LANG) and then the service's `environment:`. Only what
cannot exist on this machine is mapped, value by value, and `mapped` records
each change:
  - compose host names (`retriever:50053`, `postgres:5432`, `redis:6379`,
    `qdrant:6333`) become 127.0.0.1 and a port: a free one per ChunkLab
    process, the real PostgreSQL's and Redis's, the Qdrant stand-in's
    (tests/support/qdrant_shim.py, ADR 0069);
  - a service's own 0.0.0.0:<port> (where a container binds) becomes
    127.0.0.1 and its free port, so nothing listens beyond loopback here;
  - a container path (a volume's mount point, /data; the image's
    /opt/tiktoken) becomes a folder of the test's: one per named volume, so
    replicas of a service share one, as compose's replicas share theirs;
  - the container's command `python -m <module>` runs with this venv's python,
    from the repository (where the image has the package installed), and
    HOME is a fresh folder (the image's is the chunklab user's, empty).
Each service starts once the services it depends on pass their compose
healthcheck, which is run as the container runs it (deploy/healthcheck.py,
with the venv's python) after an in-process probe saw it ready.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from chunklab.text import tokens
from chunklab_app.stack import wait_serving
from tests.support.compose_model import REPO
from tests.support.redis_server import free_port

LOOPBACK = "127.0.0.1"
# What the python:3.11-slim base image sets that a ChunkLab process reads.
BASE_IMAGE_ENV = {"LANG": "C.UTF-8"}
HEALTHCHECK_IN_IMAGE = "/opt/chunklab/healthcheck.py"


def image_environment(dockerfile: Path = REPO / "Dockerfile") -> dict[str, str]:
    """The environment every container of the image starts with: the base
    image's LANG and the Dockerfile's ENV instructions, in order."""
    env = dict(BASE_IMAGE_ENV)
    for line in re.sub(r"\\\n", " ", dockerfile.read_text()).splitlines():
        if line.startswith("ENV "):
            for pair in shlex.split(line[4:]):
                key, _, value = pair.partition("=")
                env[key] = value
    return env


def chunklab_services(model: dict) -> list[str]:
    """The services built from this repository, in compose's start order
    (each after those it depends on)."""
    ours = sorted(name for name, service in model["services"].items() if "build" in service)
    order: list[str] = []
    while len(order) < len(ours):
        ready = [
            n
            for n in ours
            if n not in order and set(model["services"][n].get("depends_on") or {}) & set(ours) <= set(order)
        ]
        if not ready:
            raise ValueError(f"compose's depends_on has a cycle among {sorted(set(ours) - set(order))}")
        order.append(ready[0])
    return order


def container_ports(service: dict) -> list[int]:
    return [int(p) for p in service.get("expose") or []] + [int(p["target"]) for p in service.get("ports") or []]


@dataclass
class Process:
    """One container's stand-in: its name (chunker-2 for a second replica),
    its compose service, environment, own port and the OS process."""

    name: str
    service: str
    env: dict[str, str]
    port: int
    popen: subprocess.Popen | None = None
    healthcheck: list[str] = field(default_factory=list)


@dataclass
class ComposeProcesses:
    model: dict
    folder: Path
    # compose service -> (host, port) of its stand-in: "postgres", "redis", "qdrant".
    backing: dict[str, tuple[str, int]]
    # At least this many replicas, e.g. {"chunker": 2} as `--scale chunker=2`; compose's own
    # `deploy.replicas` where it asks for more.
    replicas: dict[str, int] = field(default_factory=dict)
    processes: dict[str, Process] = field(default_factory=dict)
    # (process, variable, value in compose, value here) for every value mapped.
    mapped: list[tuple[str, str, str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.order = chunklab_services(self.model)
        for service in self.order:  # compose's `deploy.replicas`, or more as `--scale` asks
            scaled = (self.model["services"][service].get("deploy") or {}).get("replicas") or 1
            self.replicas[service] = max(int(scaled), self.replicas.get(service, 1))
        # process name -> {container port: local port}; a second chunker is "chunker-2".
        self.own_ports: dict[str, dict[int, int]] = {}
        # (compose host, container port) -> the local ports it reaches (every replica's).
        self.ports: dict[tuple[str, int], list[int]] = {}
        for name, (host, port) in self.backing.items():
            assert host == LOOPBACK
            self.ports[(name, container_ports(self.model["services"][name])[0])] = [port]
        for service in self.order:
            for name in self.names(service):
                self.own_ports[name] = {p: free_port() for p in container_ports(self.model["services"][service])}
                for container_port, local in self.own_ports[name].items():
                    self.ports.setdefault((service, container_port), []).append(local)
        self.home = self.folder / "home"
        self.paths = {"/opt/tiktoken": tokens.ensure_offline_cache(self.folder / "opt-tiktoken")}

    def names(self, service: str) -> list[str]:
        """The processes of a service: `chunker`, then `chunker-2` ... for its replicas."""
        return [service if i == 1 else f"{service}-{i}" for i in range(1, self.replicas.get(service, 1) + 1)]

    def _localise(self, name: str, service: str, value: str) -> str:
        own = self.own_ports[name]
        for (host, port), locals_ in self.ports.items():
            # A scaled service's name resolves to every replica in compose; here it becomes
            # the list of them (a peer address may list its replicas, ADR 0065).
            reached = [own[port]] if host == service else locals_
            listed = ",".join(f"{LOOPBACK}:{local}" for local in reached)
            value = re.sub(rf"(?<![\w.-]){re.escape(host)}:{port}(?!\d)", listed, value)
        for port, local in own.items():
            value = re.sub(rf"(?<![\w.-])(0\.0\.0\.0|127\.0\.0\.1):{port}(?!\d)", f"{LOOPBACK}:{local}", value)
            if value == str(port):
                value = str(local)
        if value == "0.0.0.0":
            value = LOOPBACK
        return str(self.paths.get(value, value))

    def environment(self, name: str, service: str) -> dict[str, str]:
        """The process's environment: the container's, mapped where it must be."""
        spec = self.model["services"][service]
        for mount in spec.get("volumes") or []:
            if mount["type"] == "volume":
                folder = self.folder / mount["source"]
                folder.mkdir(parents=True, exist_ok=True)
                self.paths[mount["target"]] = folder
        container = {**image_environment(), **(spec.get("environment") or {})}
        env = {"PATH": os.environ["PATH"], "HOME": str(self.home)}
        for key, value in container.items():
            env[key] = self._localise(name, service, value)
            if env[key] != value:
                self.mapped.append((name, key, value, env[key]))
        return env

    def start(self, timeout: float = 180.0) -> ComposeProcesses:
        self.home.mkdir(parents=True, exist_ok=True)
        (self.folder / "logs").mkdir(exist_ok=True)
        for service in self.order:
            for name in self.names(service):
                self._start(name, service, timeout)
        return self

    def _start(self, name: str, service: str, timeout: float) -> None:
        spec = self.model["services"][service]
        command = spec["command"]
        assert command[:2] == ["python", "-m"], f"{service}: expected `python -m <module>`, got {command}"
        env = self.environment(name, service)
        (port,) = self.own_ports[name].values()
        test = spec["healthcheck"]["test"]
        assert test[:3] == ["CMD", "python", HEALTHCHECK_IN_IMAGE], f"{service}: unexpected healthcheck {test}"
        healthcheck = [
            sys.executable,
            str(REPO / "deploy" / "healthcheck.py"),
            *(self._localise(name, service, arg) for arg in test[3:]),
        ]
        with open(self.folder / "logs" / f"{name}.log", "ab") as log:
            popen = subprocess.Popen(
                [sys.executable, *command[1:]], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT
            )
        process = self.processes[name] = Process(name, service, env, port, popen, healthcheck)
        self._wait_ready(process, timeout)
        done = subprocess.run(healthcheck, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            self.stop()
            raise RuntimeError(f"{name} fails its compose healthcheck {healthcheck}: {done.stdout}{done.stderr}")

    def _wait_ready(self, process: Process, timeout: float) -> None:
        """Until the process answers: gRPC health SERVING, or the UI's page 200."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.popen.poll() is not None:
                break
            try:
                if process.healthcheck[-1].startswith("http://"):
                    with urllib.request.urlopen(process.healthcheck[-1], timeout=2) as reply:
                        if reply.status == 200:
                            return
                else:
                    wait_serving(f"{LOOPBACK}:{process.port}", 2)
                    return
            except (OSError, RuntimeError):
                time.sleep(0.2)
        self.stop()
        tail = self.log(process.name)[-3000:]
        raise RuntimeError(f"{process.name} did not become ready within {timeout:.0f}s; its log ends:\n{tail}")

    def log(self, name: str) -> str:
        return (self.folder / "logs" / f"{name}.log").read_text(errors="replace")

    def stop(self) -> None:
        for process in reversed(list(self.processes.values())):
            if process.popen.poll() is None:
                process.popen.send_signal(signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.popen.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.popen.kill()
                process.popen.wait()
