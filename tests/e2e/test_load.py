"""The load run of bench/load.py in short (issue 14, item 7): four clients
searching for five seconds while two upload and process documents, on a whole
stack of its own. No call fails and every document uploaded is processed and
in the index; how fast it went is not asserted (machines are noisy) but printed."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from chunklab_app.stack import Stack
from tests.support.repo import REPO, chroma_general

pytestmark = pytest.mark.e2e


def load_bench():
    """bench/load.py as a module (bench/ is a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("bench_load", REPO / "bench" / "load.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_a_short_load_run_fails_no_call_and_processes_every_upload(tmp_path):
    data = chroma_general()
    load = load_bench()
    with Stack(data_dir=tmp_path) as stack:
        seeded = load.seed(stack.client(), data)
        report = load.run_load(stack, clients=4, uploaders=2, seconds=5, alone_seconds=2, data=data)
    print("\n" + load.table(report))
    assert sorted(seeded) == ["chatlogs.md", "state_of_the_union.md", "wikitexts.md"]
    assert all(chunks > 0 for chunks in seeded.values())
    assert report.errors() == {}
    # Every Retrieve answered with chunks, and every query was embedded (none from the cache).
    assert report.alone.count > 0 and report.under_load.count > 0
    assert report.alone.empty == report.under_load.empty == 0
    assert report.alone.cached == report.under_load.cached == 0
    uploads = report.uploads
    # Each uploader finished at least one document; each upload was new bytes, and new chunk texts.
    assert len(uploads.uploaded) >= 2 and len(set(uploads.uploaded)) == len(uploads.uploaded)
    assert uploads.already_existed == 0 and uploads.embeddings_cached == 0
    assert uploads.failures == []
    # Processed, and in the retriever's index with as many points as chunks processed.
    assert set(uploads.processed) == set(uploads.uploaded)
    assert uploads.indexed == uploads.processed
    assert all(chunks > 0 for chunks in uploads.processed.values())
    assert (
        sorted(report.memory_before) == sorted(report.memory_after) == ["chunker", "evaluator", "ingest", "retriever"]
    )
    assert all(0 < m["RssAnon"] <= m["VmRSS"] <= m["VmHWM"] for m in report.memory_after.values())
