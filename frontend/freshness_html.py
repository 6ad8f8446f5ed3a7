"""The Freshness page's HTML: windows per collection, what a sweep takes (or
would take), and the documents in cold storage. No Gradio here."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from html import escape

from google.protobuf.timestamp_pb2 import Timestamp

from chunklab.v1 import retriever_pb2


def _attr(value: object) -> str:
    return escape(str(value), quote=True)


def _day(timestamp: Timestamp) -> str:
    if not timestamp.seconds:
        return ""
    return datetime.fromtimestamp(timestamp.seconds, tz=timezone.utc).strftime("%Y-%m-%d")


def plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def window_text(days: int) -> str:
    return "unlimited" if days == 0 else plural(days, "day")


def windows_html(windows: Sequence[retriever_pb2.FreshnessWindow]) -> str:
    rows = "".join(
        f'<tr data-collection="{_attr(w.collection)}" data-days="{w.max_age_days}">'
        f"<td>{escape(w.collection)}</td><td>{window_text(w.max_age_days)}</td></tr>"
        for w in sorted(windows, key=lambda w: w.collection)
    )
    return (
        '<table class="cl-table cl-windows"><thead><tr><th>collection</th><th>freshness window</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
        '<p class="cl-muted">"default" covers every collection without a window of its own.</p>'
    )


def parse_as_of(text: str | None) -> Timestamp | None:
    """"YYYY-MM-DD" (or with a time, ISO 8601) into a Timestamp; empty means now (None)."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"'as of' must be a date such as 2030-01-31 (or empty for now), got {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    stamp = Timestamp()
    stamp.FromDatetime(moment.astimezone(timezone.utc))
    return stamp


def documents_table(documents: Sequence[retriever_pb2.SweptDocument], empty: str) -> str:
    if not documents:
        return f'<p class="cl-empty">{escape(empty)}</p>'
    rows = "".join(
        f'<tr data-document-id="{_attr(d.document_id)}"><td>{escape(d.document_name or d.document_id)}</td>'
        f"<td>{escape(d.collection)}</td><td>{_day(d.published_at)}</td><td>{d.chunks}</td>"
        f"<td><code>{escape(d.document_id[:8])}</code></td></tr>"
        for d in documents
    )
    return (
        '<table class="cl-table cl-swept"><thead><tr><th>document</th><th>collection</th><th>published</th>'
        f"<th>chunks</th><th>id</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def sweep_html(response: retriever_pb2.SweepResponse) -> str:
    """What a sweep took, or with a dry run what it would take."""
    count = len(response.documents)
    if response.dry_run:
        head = (
            f"Dry run: {plural(count, 'document')} ({plural(sum(d.chunks for d in response.documents), 'chunk')}) "
            "outside the collection's window would be archived. Nothing has changed yet."
            if count else "Dry run: nothing is outside its freshness window; a sweep would archive nothing."
        )
    else:
        head = (
            f"Swept: {plural(count, 'document')} archived to cold storage, "
            f"{plural(response.chunks_archived, 'chunk')} left the index."
            if count else "Swept: nothing was outside its freshness window; nothing changed."
        )
    kind = "dry-run" if response.dry_run else "swept"
    table = documents_table(response.documents, "") if count else ""
    return f'<div class="cl-sweep" data-kind="{kind}" data-count="{count}"><b>{escape(head)}</b>{table}</div>'


def archived_choices(documents: Sequence[retriever_pb2.SweptDocument]) -> list[tuple[str, str]]:
    return [
        (f"{d.document_name or d.document_id} · {d.collection} · {d.document_id[:8]}", d.document_id)
        for d in documents
    ]


def restore_message(name: str, response: retriever_pb2.RestoreDocumentResponse) -> tuple[str, str]:
    """(text, kind) for the status line after a restore."""
    text = f"Restored {name}: {plural(response.chunks_restored, 'chunk')} back in the index."
    if response.outside_freshness_window:
        return (
            text + " It is still outside its collection's freshness window: queries will not return it and the"
            " next sweep archives it again, unless you widen the window above.",
            "info",
        )
    return text, "ok"
