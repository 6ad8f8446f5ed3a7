"""Pure presentation of service replies: tables, messages and progress text.

No Gradio here, so each function is testable with hand-built messages. Text
that came from a user (file names, collections, reasons quoting them) is
escaped before it lands in HTML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from html import escape

from chunklab.knobs import label as knob_label
from chunklab.v1 import chunker_pb2, documents_pb2, ingest_pb2

DOCUMENT_COLUMNS = ["name", "collection", "language", "format", "size", "characters", "ingested", "document_id"]


def _when(timestamp) -> str:
    if not timestamp.seconds and not timestamp.nanos:
        return ""
    return datetime.fromtimestamp(timestamp.seconds, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _size(size_bytes: int) -> str:
    if size_bytes < 1024:
        return f"{size_bytes} B"
    if size_bytes < 1024 * 1024:
        return f"{size_bytes / 1024:.1f} KiB"
    return f"{size_bytes / 1024 / 1024:.1f} MiB"


def _format(fmt: int) -> str:
    return documents_pb2.DocumentFormat.Name(fmt).removeprefix("DOCUMENT_FORMAT_").lower()


def documents_rows(documents: list[documents_pb2.Document]) -> list[list]:
    """Rows for the documents table, columns as in DOCUMENT_COLUMNS (the id last, for selection)."""
    return [
        [d.name, d.collection, d.language, _format(d.format), _size(d.size_bytes),
         d.character_count, _when(d.ingested_at), d.document_id]
        for d in documents
    ]


def document_choices(documents: list[documents_pb2.Document]) -> list[tuple[str, str]]:
    """(label, document_id) pairs for dropdowns; the label tells same-named files apart."""
    return [(f"{d.name} · {d.collection} · {d.document_id[:8]}", d.document_id) for d in documents]


def message_html(text: str, kind: str = "info") -> str:
    """A status line; kind is info, ok or error (styling only)."""
    return f'<div class="cl-message cl-message-{escape(kind)}">{escape(text)}</div>'


def indexed_sets_html(sets: list, embedding_model: str) -> str:
    """How the selected document is indexed, one row per strategy (IndexedSet messages);
    what the Query page and experiments will find for it."""
    if not sets:
        return message_html(f"Not indexed with {embedding_model} yet: process it below.")
    rows = "".join(
        f'<tr data-strategy="{escape(s.strategy)}"><td>{escape(s.strategy)}</td>'
        f"<td>{escape(', '.join(f'{k}={knob_label(v)}' for k, v in sorted(s.spec.knobs.items())) or 'defaults')}</td>"
        f"<td><code>{escape(s.config_id)}</code></td><td>{s.points}</td><td>{escape(_when(s.indexed_at))}</td></tr>"
        for s in sets
    )
    return (
        f'<div class="cl-indexed"><b>Indexed with {escape(embedding_model)}</b><table><thead><tr><th>strategy</th>'
        f"<th>knobs</th><th>config id</th><th>points</th><th>indexed</th></tr></thead><tbody>{rows}</tbody></table></div>"
    )


def upload_message(response: ingest_pb2.CreateDocumentResponse) -> str:
    d = response.document
    where = f"collection {d.collection!r}, {d.character_count} characters, id {d.document_id}"
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
                lines.append(f"<li>{escape(name)}: waiting</li>")
                continue
            text = f"{_phase(progress.phase)} {progress.fraction_done:.0%}"
            if progress.message:
                text += f" — {progress.message}"
            lines.append(f"<li>{escape(name)}: {escape(text)}</li>")
        return f'<div class="cl-process"><b>Processing…</b><ul>{"".join(lines)}</ul></div>'


def _phase(phase: int) -> str:
    return chunker_pb2.StrategyPhase.Name(phase).removeprefix("STRATEGY_PHASE_").lower()


def result_html(result: chunker_pb2.ProcessDocumentResult) -> str:
    """strategies_completed and strategies_failed (with the reasons), as the spec names them."""
    parts = ['<div class="cl-process">']
    if result.strategies_completed:
        items = "".join(
            f'<li data-strategy="{escape(o.strategy, quote=True)}">{escape(o.strategy)}: {o.chunk_count} chunks'
            f" in {o.seconds:.1f} s ({o.embeddings_cached} embeddings from cache)</li>"
            for o in result.strategies_completed
        )
        parts.append(f'<div class="cl-completed"><b>strategies_completed</b><ul>{items}</ul></div>')
    if result.strategies_failed:
        items = "".join(
            f'<li data-strategy="{escape(f.strategy, quote=True)}">{escape(f.strategy)}: {escape(f.reason)}</li>'
            for f in result.strategies_failed
        )
        parts.append(f'<div class="cl-failed"><b>strategies_failed</b><ul>{items}</ul></div>')
    if not result.strategies_completed and not result.strategies_failed:
        parts.append("<p>The chunker ran no strategy.</p>")
    parts.append(f"<p>embedding model {escape(result.embedding_model)}</p></div>")
    return "".join(parts)


def bulk_load_html(load: chunker_pb2.BulkLoad, names: dict[str, str]) -> str:
    """A bulk load's progress and, per finished document, what each strategy did."""
    done, total = len(load.results), load.jobs_total
    items = []
    for result in load.results:
        name = escape(names.get(result.document_id, result.document_id))
        if result.error:
            text, kind = escape(result.error), "failed"
        else:
            parts = [f"{escape(o.strategy)} {o.chunk_count} chunks" for o in result.result.strategies_completed]
            parts += [f"{escape(f.strategy)} failed: {escape(f.reason)}" for f in result.result.strategies_failed]
            text, kind = "; ".join(parts), "failed" if result.result.strategies_failed else "ok"
        again = f" (delivered {result.deliveries} times)" if result.deliveries > 1 else ""
        items.append(f'<li data-document="{escape(result.document_id, quote=True)}" data-outcome="{kind}">'
                     f"{name}: {text}{again}</li>")
    state = "done" if done >= total else "running"
    return (
        f'<div class="cl-process cl-bulk" data-state="{state}" data-done="{done}" data-total="{total}">'
        f"<b>Bulk load {escape(load.bulk_load_id[:8])}</b>: {done} of {total} documents done "
        f"(through {escape(load.broker)})<ul>{''.join(items)}</ul></div>"
    )


def bulk_loads_html(loads) -> str:
    """Recent bulk loads, newest first: how far each is, how many failed, whether it was cancelled."""
    if not loads:
        return "<p>No bulk load yet. \"Process every document (bulk load)\" above, or <code>chunklab load</code>, " \
               "starts one.</p>"
    rows = []
    for load in loads:
        if load.jobs_finished >= load.jobs_total:
            state = "done"
        else:
            state = "cancelled" if load.cancelled else "running"
        rows.append(
            f'<tr data-bulk-load="{escape(load.bulk_load_id, quote=True)}" data-state="{state}">'
            f"<td><code>{escape(load.bulk_load_id[:8])}</code></td><td>{_when(load.submitted_at)}</td>"
            f"<td>{load.jobs_finished} / {load.jobs_total}</td><td>{load.jobs_failed}</td>"
            f"<td>{state}{' (cancelled)' if load.cancelled and state == 'done' else ''}</td></tr>"
        )
    return (
        f'<p>Through {escape(loads[0].broker)}; {loads[0].jobs_queued} jobs waiting or running.</p>'
        '<table class="cl-bulk-loads"><thead><tr><th>load</th><th>submitted</th><th>documents done</th>'
        f"<th>failed</th><th>state</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def health_html(rows) -> str:
    """The health page's table: service, address, status (and why, when unreachable)."""
    body = "".join(
        f'<tr data-service="{escape(r.service, quote=True)}" data-status="{escape(r.status, quote=True)}">'
        f"<td>{escape(r.service)}</td><td><code>{escape(r.address)}</code></td>"
        f'<td class="cl-status-{escape(r.status.lower(), quote=True)}">{escape(r.status)}</td>'
        f"<td>{escape(r.detail)}</td></tr>"
        for r in rows
    )
    return (
        '<table class="cl-health"><thead><tr><th>service</th><th>address</th><th>status</th><th>detail</th>'
        f"</tr></thead><tbody>{body}</tbody></table>"
    )


def index_stats_html(stats) -> str:
    """The retriever's index: backend, points per model/strategy/collection, and cold storage."""
    rows = "".join(
        f"<tr><td>{escape(r.embedding_model)}</td><td>{escape(r.strategy)}</td><td>{escape(r.collection)}</td>"
        f"<td>{r.points}</td><td>{r.documents}</td><td>{_size(r.bytes)}</td></tr>"
        for r in stats.rows
    )
    head = (
        f"<p>Index backend <b>{escape(stats.backend or '?')}</b>: {stats.total_points} points"
        f" ({_size(stats.disk_bytes)} on disk); {stats.archived_documents} documents in cold storage"
        f" ({_size(stats.archive_bytes)}).</p>"
    )
    searches = "".join(f"<li>{escape(_search_kind(stats.backend, i))}</li>" for i in stats.indexes)
    if searches:
        head += f'<ul class="cl-index-search">{searches}</ul>'
    table = (
        '<table class="cl-table cl-index-stats"><thead><tr><th>embedding model</th><th>strategy</th>'
        f"<th>collection</th><th>points</th><th>documents</th><th>size</th></tr></thead><tbody>{rows}</tbody></table>"
        if rows
        else ""
    )
    return f'<div class="cl-index">{head}{table}</div>'


def _search_kind(backend: str, index) -> str:
    """How one vector index answers a search, in a sentence."""
    name = f"{index.embedding_model} ({index.dimension} dimensions, {index.points} points)"
    if backend == "qdrant":
        return f"{name}: searched by the Qdrant server, which builds its own HNSW graphs"
    if index.graph_current:
        return f"{name}: HNSW graph over every point (built {_when(index.graph_built_at)})"
    if index.HasField("graph_built_at"):
        return (f"{name}: HNSW graph built {_when(index.graph_built_at)}; points written since are searched "
                "exactly until the next build")
    return f"{name}: exact search (an HNSW graph is built once the index is big enough and idle)"


def catalog_html(catalog) -> str:
    """What the chunker offers: strategies, embedding models and the LLM for contextual strategies."""
    llm = catalog.llm or (
        "none configured (contextual strategies cannot run; answers are extractive unless a request names a model)"
    )
    return (
        f'<p class="cl-catalog">{len(catalog.strategies)} strategies · embedding models '
        f"{escape(', '.join(catalog.embedding_models))} · LLM {escape(llm)}</p>"
    )
