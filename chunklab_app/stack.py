"""Starts the whole stack: the four services and the UI, each its own process.

`make up` runs `python -m chunklab_app.stack`: services on loopback, the UI's URL
printed, then the sample (chunklab_app.sample_loader) loaded in the background with its
progress in the output; Ctrl-C stops it all.
Tests use `Stack` with port 0 so that every server picks a free port, and
`Stack.client()` to call it.
"""

from __future__ import annotations

import argparse
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from chunklab.client import ChunkLab
from chunklab.rpc import channels, tracing
from chunklab.settings import Settings, load_settings, settings_from
from chunklab.text import tokens
from chunklab_app import local_llm, sample_loader

REPO = Path(__file__).resolve().parent.parent
# Start order: each service's peers are up before it is.
SERVICES = ("retriever", "ingest", "chunker", "evaluator")
# The line the UI prints when it serves (its URL is the line's last word).
UI_READY = "ui listening on"


@dataclass
class Stack:
    data_dir: Path
    host: str = "127.0.0.1"
    ports: dict[str, int] = field(default_factory=dict)  # service -> port, 0 = any free
    ui: bool = False
    ui_port: int = 0
    extra_env: dict[str, str] = field(default_factory=dict)
    addresses: dict[str, str] = field(default_factory=dict)
    ui_url: str = ""
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    # The source tree the processes run from (a benchmark may start an older checkout beside this one).
    source: Path = REPO

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.extra_env)
        env["CHUNKLAB_DATA_DIR"] = str(self.data_dir)
        env["TIKTOKEN_CACHE_DIR"] = str(tokens.ensure_offline_cache(self.data_dir / "tiktoken"))
        env["PYTHONUNBUFFERED"] = "1"
        env["HF_HUB_OFFLINE"] = "1"
        for name, address in self.addresses.items():
            env[f"CHUNKLAB_{name.upper()}_ADDRESS"] = address
        return env

    def settings(self) -> Settings:
        """The settings the stack's processes read: its clients dial with the
        same token and TLS as the services serve with."""
        return settings_from(self.env())

    def _start_side_by_side(self, timeout: float, attempts: int = 3) -> None:
        """The four services and the UI at once, on free ports chosen here (the UI only needs
        the services' addresses to start; it dials them when a page asks). A port can be taken
        between the choice and the bind (another process's port 0); the service then exits
        with "cannot listen", and the stack is started again on other ports."""
        for attempt in range(attempts):
            for name in SERVICES:
                self.addresses[name] = f"{self.host}:{free_port(self.host)}"
            env = self.env()
            security = self.settings()
            ready = {name: self._launch(name, f"services.{name}", env) for name in SERVICES}
            if self.ui:
                ready["ui"] = self._launch("ui", "frontend", self._ui_env(self.ui_port))
            try:
                for name in SERVICES:
                    self._await(name, ready[name], "listening on", timeout)
                    wait_serving(self.addresses[name], timeout, security)
                if self.ui:
                    self.ui_url = self._await("ui", ready["ui"], UI_READY, timeout)
                return
            except RuntimeError as exc:
                if attempt == attempts - 1 or "cannot listen" not in str(exc):
                    raise

    def _spawn(self, name: str, module: str, env: dict[str, str], ready_marker: str, timeout: float) -> str:
        """Starts one process and waits for its ready line; returns the line's last word (its address)."""
        return self._await(name, self._launch(name, module, env), ready_marker, timeout)

    def _launch(self, name: str, module: str, env: dict[str, str]) -> queue.Queue[str]:
        """Starts one process; its output lines arrive on the queue returned."""
        logs = self.data_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / f"{name}.log", "ab") as log_file:  # the child keeps its own handle
            process = subprocess.Popen(
                [sys.executable, "-m", module],
                cwd=self.source,
                env=env,
                stdout=subprocess.PIPE,
                stderr=log_file,
                text=True,
            )
        self.processes[name] = process
        lines: queue.Queue[str] = queue.Queue()

        def pump() -> None:
            for line in process.stdout:
                lines.put(line)

        threading.Thread(target=pump, daemon=True).start()
        return lines

    def _await(self, name: str, lines: queue.Queue[str], ready_marker: str, timeout: float) -> str:
        process = self.processes[name]
        logs = self.data_dir / "logs"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                if process.poll() is not None:
                    break
                continue
            if ready_marker in line:
                return line.rsplit(" ", 1)[-1].strip()
        self.stop()
        tail = (logs / f"{name}.log").read_text(errors="replace")[-3000:]
        raise RuntimeError(f"chunklab {name} did not start within {timeout:.0f}s; its log ends:\n{tail}")

    def start(self, timeout: float = 120.0) -> Stack:
        """Starts the services and the UI. Where every service may take any free port (tests),
        the ports are chosen first and the four start side by side with the UI, which halves a
        stack's start on two cores; given ports (`make up`) start in SERVICES order, each one's
        peers up before it, and the UI after them."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if not any(self.ports.get(name, 0) for name in SERVICES):
            self._start_side_by_side(timeout)
        else:
            for name in SERVICES:
                self.addresses[name] = f"{self.host}:{self.ports.get(name, 0)}"
            security = self.settings()
            for name in SERVICES:
                self.addresses[name] = self._spawn(name, f"services.{name}", self.env(), "listening on", timeout)
                wait_serving(self.addresses[name], timeout, security)
        if self.ui and not self.ui_url:
            self.ui_url = self._spawn("ui", "frontend", self._ui_env(self.ui_port), UI_READY, timeout)
        return self

    def _ui_env(self, port: int) -> dict[str, str]:
        env = self.env()
        env["CHUNKLAB_UI_HOST"] = self.host
        env["CHUNKLAB_UI_PORT"] = str(port)
        return env

    def stop(self) -> None:
        for process in reversed(list(self.processes.values())):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
        self.processes.clear()

    def kill(self, name: str) -> None:
        """Ends one service at once with SIGKILL (nothing flushed, nothing closed), as a crash would."""
        process = self.processes[name]
        process.kill()
        process.wait(timeout=30)

    def restart(self, name: str, timeout: float = 120.0) -> str:
        """Starts one service, or the UI ("ui"), again, on its address and data folder (its
        peers keep dialling that address, a browser keeps its page's origin); returns the
        address (the UI's URL)."""
        if name == "ui":
            self.ui_url = self._spawn("ui", "frontend", self._ui_env(urlsplit(self.ui_url).port), UI_READY, timeout)
            return self.ui_url
        self.addresses[name] = self._spawn(name, f"services.{name}", self.env(), "listening on", timeout)
        wait_serving(self.addresses[name], timeout, self.settings())
        return self.addresses[name]

    def client(self, settings: Settings | None = None) -> ChunkLab:
        """A client of this stack's services (other settings: `settings`, else the stack's own)."""
        return ChunkLab.at(self.addresses, settings if settings is not None else self.settings())

    def __enter__(self) -> Stack:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def free_port(host: str) -> int:
    """A port nothing listens on now (the kernel's choice for port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def wait_serving(address: str, timeout: float, settings: Settings | None = None) -> None:
    """Waits until the server's standard health service says SERVING (over
    TLS when the settings say so; health needs no token)."""
    stub = health_pb2_grpc.HealthStub(channels.channel(address, settings))
    deadline = time.monotonic() + timeout
    while True:
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=2)
            if reply.status == health_pb2.HealthCheckResponse.SERVING:
                return
        except grpc.RpcError:
            pass  # not up yet: asked again until the deadline, whose error names the address
        if time.monotonic() > deadline:
            raise RuntimeError(f"{address} is not SERVING after {timeout:.0f}s")
        time.sleep(0.1)


def load_sample_in_background(client: ChunkLab, strategies: list[str] | None, stopping: threading.Event) -> None:
    """Loads the sample while the UI is already up (ADR 0063: processing every strategy
    takes minutes on 2 cores the first time), each step a line of the output."""
    started = time.monotonic()

    def log(line: str) -> None:
        print(f"  sample     {line}", flush=True)

    try:
        loaded = sample_loader.load_sample(client, strategies, log)
    except Exception as exc:  # the stack runs on without its sample
        if not stopping.is_set():
            log(f"could not be loaded ({exc}); ChunkLab works without it, see {REPO / 'samples'}")
        return
    state = "finished" if loaded.finished else "not all finished (see the Experiments page)"
    log(
        f"ready in {time.monotonic() - started:.0f}s: question set {sample_loader.QUESTION_SET_NAME}, "
        f"{len(loaded.experiment_ids)} experiments {state}"
    )


def _interrupt(_signum: int, _frame) -> None:
    raise KeyboardInterrupt


def main() -> None:
    parser = argparse.ArgumentParser(description="Start ChunkLab: four services and the UI on loopback.")
    parser.add_argument("--no-sample", action="store_true", help="do not load the sample")
    parser.add_argument(
        "--sample-strategies",
        help="comma-separated strategies to process the sample with (default: every strategy that needs no LLM)",
    )
    args = parser.parse_args()
    settings = load_settings()
    tracing.start("stack", settings)  # the sample's loading, one trace per document
    ports = {name: int(getattr(settings, f"{name}_address").rpartition(":")[2]) for name in SERVICES}
    stack = Stack(
        data_dir=settings.data_dir.resolve(),
        host="127.0.0.1",
        ports=ports,
        ui=True,
        ui_port=settings.ui_port,
    )
    if args.no_sample:
        stack.extra_env["CHUNKLAB_SAMPLE"] = "0"
    llm = None
    # Ctrl-C and SIGTERM both stop everything, even where the shell started us
    # with SIGINT ignored (a background job).
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    print("starting ChunkLab (first start loads the embedding model; allow a minute) ...", flush=True)
    started = time.monotonic()
    stopping = threading.Event()
    try:
        if settings.llm_local:
            llm = start_local_llm(settings, stack)
        stack.start()
        for name in SERVICES:
            print(f"  {name:<10} grpc://{stack.addresses[name]}", flush=True)
        print(f"\nChunkLab is ready in {time.monotonic() - started:.0f}s: open {stack.ui_url}", flush=True)
        print(f"logs in {stack.data_dir / 'logs'}; Ctrl-C stops everything.", flush=True)
        if not args.no_sample:
            strategies = [n.strip() for n in (args.sample_strategies or "").split(",") if n.strip()] or None
            print("  sample     loading in the background: the pages show it when it is ready", flush=True)
            threading.Thread(
                target=load_sample_in_background, args=(stack.client(settings), strategies, stopping), daemon=True
            ).start()
        while all(p.poll() is None for p in stack.processes.values()):
            time.sleep(0.5)
        dead = [n for n, p in stack.processes.items() if p.poll() is not None]
        print(f"ChunkLab stopped: {', '.join(dead)} exited; see {stack.data_dir / 'logs'}", flush=True)
    except KeyboardInterrupt:
        stopping.set()
        print("\nstopping ChunkLab ...", flush=True)
    finally:
        stopping.set()
        stack.stop()
        if llm is not None:
            llm.stop()


def start_local_llm(settings: Settings, stack: Stack) -> local_llm.LocalLLM:
    """CHUNKLAB_LLM_LOCAL=1: the local llama.cpp server first, and every process's LLM settings
    pointed at it (the UI's Health page and answers then name its model)."""
    print(f"starting the local LLM ({local_llm.MODEL_NAME}, llama.cpp) ...", flush=True)
    server = local_llm.LocalLLM(settings.llm_local_port, stack.data_dir / "logs" / "llm.log")
    try:
        server.start()
    except local_llm.LocalLLMError as exc:
        sys.exit(f"CHUNKLAB_LLM_LOCAL=1, but {exc}")
    stack.extra_env.update(
        CHUNKLAB_LLM_BASE_URL=server.base_url, CHUNKLAB_LLM_MODEL=server.model, CHUNKLAB_LLM_API_KEY=""
    )
    print(f"  llm        {server.model} at {server.base_url}", flush=True)
    return server


if __name__ == "__main__":
    main()
