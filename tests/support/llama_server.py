"""The real local LLM for the tests: llama.cpp's OpenAI-compatible server serving
SmolLM2-135M-Instruct (chunklab_app.local_llm, ADR 0135), one per test session.

It starts when a test first asks for `real_llm`, is ready once GET /v1/models
answers (never after a fixed time), and is ended by its own pid at the end of
the session."""

from __future__ import annotations

import pytest

from chunklab.llm import ChatEndpoint
from chunklab_app.local_llm import LocalLLM
from chunklab_app.stack import free_port

# The tests' prompts are small documents: half the model's window is plenty and starts faster.
TEST_CONTEXT_TOKENS = 4096


@pytest.fixture(scope="session")
def real_llm(tmp_path_factory) -> LocalLLM:
    server = LocalLLM(
        free_port("127.0.0.1"),
        tmp_path_factory.mktemp("llm") / "llm.log",
        context_tokens=TEST_CONTEXT_TOKENS,
    )
    server.start()
    yield server
    server.stop()


def endpoint(server: LocalLLM, structured_output: str = "auto", timeout_s: float = 120.0) -> ChatEndpoint:
    """A ChatEndpoint on the real server (no retries by the openai client: the callers' own count)."""
    return ChatEndpoint(server.base_url, "", server.model, timeout_s, 0, structured_output)
