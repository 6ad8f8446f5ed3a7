"""ChunkLab's Python client: the one door to the four services.

The UI, the command line, `make up`'s seeding, the tests and the benchmarks
all upload, import, page, process and follow streams through `ChunkLab`:

    from chunklab.client import ChunkLab
    lab = ChunkLab(Settings())                   # or ChunkLab.at(stack.addresses)
    document = lab.upload_document("notes.md").document
    result = lab.process(document.document_id, [to_spec("fixed_size", {"chunk_size": 256})])
    saved = lab.write_report(experiment_id, "reports/")   # any size: written as it streams

Every call carries a deadline from the settings; List calls follow every
page; a failed call raises `ClientError`, whose message a person can read.
Building a client does no I/O: channels open on first use.
"""

from __future__ import annotations

from chunklab.client.chunking import ChunkingCalls
from chunklab.client.core import SERVICES, UPLOAD_PIECE_BYTES
from chunklab.client.documents import DocumentCalls
from chunklab.client.errors import ClientError
from chunklab.client.evaluation import EvaluationCalls, ExperimentOutcome, experiment_outcome
from chunklab.client.health import HealthCalls, ServiceHealth
from chunklab.client.questions import GenerationOutcome, QuestionCalls, export_records, generation_outcome
from chunklab.client.reports import ReportDownload, SavedReport, report_path
from chunklab.client.retrieval import RetrievalCalls

__all__ = [
    "SERVICES",
    "UPLOAD_PIECE_BYTES",
    "ChunkLab",
    "ClientError",
    "ExperimentOutcome",
    "GenerationOutcome",
    "ReportDownload",
    "SavedReport",
    "ServiceHealth",
    "experiment_outcome",
    "export_records",
    "generation_outcome",
    "report_path",
]


class ChunkLab(DocumentCalls, ChunkingCalls, RetrievalCalls, EvaluationCalls, QuestionCalls, HealthCalls):
    """A client of one ChunkLab stack: `ChunkLab(settings)` for the addresses
    and deadlines of a Settings object, `ChunkLab.at(addresses)` for a running
    stack's. The calls are grouped by service in this package's modules."""
