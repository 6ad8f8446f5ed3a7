"""Pure presentation of service replies: tables, messages and progress text.

No Gradio here, so each function is testable with hand-built messages. Each
view reads its messages into plain data and renders a template
(frontend/templates/), which escapes everything from outside (file names,
collections, reasons quoting them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from chunklab import knobs
from chunklab.text import pages
from chunklab.v1 import chunker_pb2, documents_pb2, ingest_pb2
from chunklab.views import numbers
from chunklab.views.render import render

DOCUMENT_COLUMNS = ["name", "collection", "language", "format", "size", "characters", "pages", "ingested", "id"]
# How the UI names a document's format; the enum's own name where a format is missing here.
FORMAT_NAMES = {
    documents_pb2.DOCUMENT_FORMAT_MARKDOWN: "Markdown",
    documents_pb2.DOCUMENT_FORMAT_TEXT: "text",
    documents_pb2.DOCUMENT_FORMAT_DOCX: "DOCX",
    documents_pb2.DOCUMENT_FORMAT_PDF: "PDF",
    documents_pb2.DOCUMENT_FORMAT_HTML: "HTML",
}


def when(timestamp) -> str:
    if not timestamp.seconds and not timestamp.nanos:
        return ""
    return datetime.fromtimestamp(timestamp.seconds, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def size_label(size_bytes: int) -> str:
    """Bytes as a person reads them: 812 B, 12.3 KiB, 45.6 MiB."""
    return numbers.size(size_bytes)


def format_name(fmt: int) -> str:
    """DOCUMENT_FORMAT_PDF -> "PDF", as the Documents page names formats."""
    if fmt in FORMAT_NAMES:
        return FORMAT_NAMES[fmt]
    return documents_pb2.DocumentFormat.Name(fmt).removeprefix("DOCUMENT_FORMAT_").lower()


def page_count(document: documents_pb2.Document) -> str:
    """The page count a paged format's reader records; empty for the others."""
    return document.metadata.get(pages.PAGE_COUNT_KEY, "")


def documents_rows(documents: list[documents_pb2.Document]) -> list[list]:
    """Rows for the documents table, columns as in DOCUMENT_COLUMNS (the id last, for selection)."""
    return [
        [
            d.name,
            d.collection,
            d.language,
            format_name(d.format),
            size_label(d.size_bytes),
            numbers.count(d.character_count),
            page_count(d),
            when(d.ingested_at),
            d.document_id,
        ]
        for d in documents
    ]


def document_choices(documents: list[documents_pb2.Document]) -> list[tuple[str, str]]:
    """(label, document_id) pairs for dropdowns; the label tells same-named files apart."""
    return [(f"{d.name} · {d.collection} · {d.document_id[:8]}", d.document_id) for d in documents]


def message_html(text: str, kind: str = "info") -> str:
    """A status line; kind is info, ok, warning or error (styling only)."""
    return render("frontend", "message.html.j2", text=text, kind=kind)


def set_knobs(indexed) -> str:
    """An index set's knob values as they read in a form."""
    return ", ".join(f"{k}={knobs.label(v)}" for k, v in sorted(indexed.spec.knobs.items())) or "defaults"


def indexed_sets_html(sets: list, embedding_model: str) -> str:
    """Every index set of the selected document (IndexedSet messages, ListIndexedSets'
    order): per strategy its configurations side by side, the active one (what a
    query without a configuration searches) marked, pinned ones too."""
    rows = [
        {
            "strategy": s.strategy,
            "knobs": set_knobs(s),
            "config_id": s.config_id,
            "points": s.points,
            "indexed": when(s.indexed_at),
            "active": s.active,
            "pinned": s.pinned,
            "used": when(s.last_used_at),
        }
        for s in sets
    ]
    return render(
        "frontend",
        "indexed_sets.html.j2",
        sets=rows,
        embedding_model=embedding_model,
        text=f"Not indexed with {embedding_model} yet: process it below.",
        kind="info",
    )


def set_choices(sets: list) -> list[tuple[str, str]]:
    """The index-set dropdown: "strategy · knobs · config id (active)", valued "strategy/config_id"."""
    return [
        (
            f"{s.strategy} · {set_knobs(s)} · {s.config_id}"
            + (" (active)" if s.active else "")
            + (" (pinned)" if s.pinned else ""),
            f"{s.strategy}/{s.config_id}",
        )
        for s in sets
    ]


def upload_message(response: ingest_pb2.CreateDocumentResponse) -> str:
    d = response.document
    page_note = f", {page_count(d)} pages" if page_count(d) else ""
    where = (
        f"collection {d.collection!r}, {format_name(d.format)}, {numbers.count(d.character_count)} characters{page_note}, "
        f"id {d.document_id}"
    )
    if response.already_existed:
        return message_html(f"{d.name} was already uploaded ({where}); nothing changed.", "info")
    return message_html(f"Uploaded {d.name} ({where}).", "ok")


@dataclass
class ProcessTracker:
    """Follows a ProcessDocument stream: the latest progress per strategy and the final result."""

    strategies: list[str]
    latest: dict[str, chunker_pb2.StrategyProgress] = field(default_factory=dict)
    result: chunker_pb2.ProcessDocumentResult | None = None

    def add(self, event: chunker_pb2.ProcessDocumentEvent) -> None:
        if event.HasField("progress"):
            self.latest[event.progress.strategy] = event.progress
        elif event.HasField("result"):
            self.result = event.result

    def fraction(self) -> float:
        """Overall progress: finished strategies count whole, running ones by fraction_done."""
        if not self.strategies:
            return 0.0
        done = 0.0
        for name in self.strategies:
            progress = self.latest.get(name)
            if progress is None:
                continue
            finished = progress.phase in (chunker_pb2.STRATEGY_PHASE_COMPLETED, chunker_pb2.STRATEGY_PHASE_FAILED)
            done += 1.0 if finished else min(max(progress.fraction_done, 0.0), 1.0)
        return done / len(self.strategies)

    def description(self) -> str:
        """A short line for the progress bar: what the most recent event said."""
        if self.result is not None:
            return "done"
        if not self.latest:
            return "waiting for the chunker"
        last = list(self.latest.values())[-1]
        return f"{last.strategy}: {last.message or _phase(last.phase)}"

    def html(self) -> str:
        if self.result is not None:
            return result_html(self.result)
        lines = []
        for name in self.strategies:
            progress = self.latest.get(name)
            if progress is None:
                lines.append({"strategy": name, "text": "waiting"})
                continue
            text = f"{_phase(progress.phase)} {numbers.percent(progress.fraction_done, 0)}"
            if progress.message:
                text += f" — {progress.message}"
            lines.append({"strategy": name, "text": text})
        return render("frontend", "process.html.j2", result=None, lines=lines)


def _phase(phase: int) -> str:
    return chunker_pb2.StrategyPhase.Name(phase).removeprefix("STRATEGY_PHASE_").lower()


def result_html(result: chunker_pb2.ProcessDocumentResult) -> str:
    """strategies_completed and strategies_failed (with the reasons), as the spec names them."""
    view = {
        "completed": [
            {
                "strategy": o.strategy,
                "chunk_count": o.chunk_count,
                "seconds": o.seconds,
                "embeddings_cached": o.embeddings_cached,
            }
            for o in result.strategies_completed
        ],
        "failed": [{"strategy": f.strategy, "reason": f.reason} for f in result.strategies_failed],
        "embedding_model": result.embedding_model,
    }
    return render("frontend", "process.html.j2", result=view, lines=[])


def _document_outcome(result, names: dict[str, str]) -> dict:
    """One finished document of a bulk load: what each strategy did, or why it failed."""
    if result.error:
        text, outcome = result.error, "failed"
    else:
        parts = [f"{o.strategy} {numbers.count(o.chunk_count)} chunks" for o in result.result.strategies_completed]
        parts += [f"{f.strategy} failed: {f.reason}" for f in result.result.strategies_failed]
        text, outcome = "; ".join(parts), "failed" if result.result.strategies_failed else "ok"
    return {
        "document_id": result.document_id,
        "name": names.get(result.document_id, result.document_id),
        "text": text,
        "outcome": outcome,
        "deliveries": result.deliveries,
    }


def broker_label(broker: str) -> str:
    """The broker as a person names it: "embedded queue" without its file (an operator's
    detail, on the Health page), "Redis at host:port/db" as it is."""
    return re.sub(r" \(.*\)$", "", broker)


def bulk_load_html(load: chunker_pb2.BulkLoad, names: dict[str, str]) -> str:
    """A bulk load's progress and, per finished document, what each strategy did."""
    done, total = len(load.results), load.jobs_total
    return render(
        "frontend",
        "bulk_load.html.j2",
        state="done" if done >= total else "running",
        done=done,
        total=total,
        short_id=load.bulk_load_id[:8],
        broker=broker_label(load.broker),
        items=[_document_outcome(r, names) for r in load.results],
    )


def _load_state(load: chunker_pb2.BulkLoad) -> str:
    if load.jobs_finished >= load.jobs_total:
        return "done"
    return "cancelled" if load.cancelled else "running"


def bulk_loads_html(loads) -> str:
    """Recent bulk loads, newest first: how far each is, how many failed, whether it was cancelled."""
    rows = [
        {
            "bulk_load_id": load.bulk_load_id,
            "state": _load_state(load),
            "submitted": when(load.submitted_at),
            "finished": load.jobs_finished,
            "total": load.jobs_total,
            "failed": load.jobs_failed,
            "cancelled": load.cancelled,
        }
        for load in loads
    ]
    first = loads[0] if loads else None
    return render(
        "frontend",
        "bulk_loads.html.j2",
        loads=rows,
        broker=broker_label(first.broker) if first else "",
        queued=first.jobs_queued if first else 0,
    )


def health_html(rows) -> str:
    """The health page's table: service, address, status (and why, when unreachable)."""
    view = [{"service": r.service, "address": r.address, "status": r.status, "detail": r.detail} for r in rows]
    return render("frontend", "health.html.j2", rows=view)


def index_stats_html(stats) -> str:
    """The retriever's index: backend, points per model/strategy/collection, and cold storage."""
    rows = [
        {
            "embedding_model": r.embedding_model,
            "strategy": r.strategy,
            "collection": r.collection,
            "points": r.points,
            "documents": r.documents,
            "size": size_label(r.bytes),
        }
        for r in stats.rows
    ]
    return render(
        "frontend",
        "index_stats.html.j2",
        backend=stats.backend or "?",
        total_points=stats.total_points,
        disk=size_label(stats.disk_bytes),
        archived_documents=stats.archived_documents,
        archive=size_label(stats.archive_bytes),
        searches=[_search_kind(stats.backend, i) for i in stats.indexes],
        rows=rows,
    )


def _search_kind(backend: str, index) -> str:
    """How one vector index answers a search, in a sentence."""
    name = f"{index.embedding_model} ({index.dimension} dimensions, {numbers.count(index.points)} points)"
    if backend == "qdrant":
        return f"{name}: searched by the Qdrant server, which builds its own HNSW graphs"
    if index.graph_current:
        return f"{name}: HNSW graph over every point (built {when(index.graph_built_at)})"
    if index.HasField("graph_built_at"):
        return (
            f"{name}: HNSW graph built {when(index.graph_built_at)}; points written since are searched "
            "exactly until the next build"
        )
    return f"{name}: exact search (an HNSW graph is built once the index is big enough and idle)"


def catalog_html(catalog) -> str:
    """What the chunker offers: strategies, embedding models and the LLM for contextual strategies."""
    llm = catalog.llm or (
        "none configured (contextual strategies cannot run; answers are extractive unless a request names a model)"
    )
    return render(
        "frontend",
        "catalog.html.j2",
        strategies=len(catalog.strategies),
        embedding_models=list(catalog.embedding_models),
        llm=llm,
    )
