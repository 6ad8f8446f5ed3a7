"""The Freshness page's HTML: windows per collection, what a sweep takes (or
would take), and the documents in cold storage. No Gradio here."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp

from chunklab.settings import PRESET_FRESHNESS_WINDOWS
from chunklab.v1 import retriever_pb2
from chunklab.views.metric_format import plural
from chunklab.views.render import render


def _day(timestamp: Timestamp) -> str:
    if not timestamp.seconds:
        return ""
    return datetime.fromtimestamp(timestamp.seconds, tz=UTC).strftime("%Y-%m-%d")


def window_text(days: int) -> str:
    return "unlimited" if days == 0 else plural(days, "day")


def windows_html(windows: Sequence[retriever_pb2.FreshnessWindow]) -> str:
    """Each collection's window, those that ChunkLab comes with (and nobody changed) marked as presets."""
    rows = [
        {
            "collection": w.collection,
            "days": w.max_age_days,
            "window": window_text(w.max_age_days),
            "preset": PRESET_FRESHNESS_WINDOWS.get(w.collection) == w.max_age_days,
        }
        for w in sorted(windows, key=lambda w: w.collection)
    ]
    return render("frontend", "windows.html.j2", windows=rows)


def parse_as_of(text: str | None) -> Timestamp | None:
    """ "YYYY-MM-DD" (or with a time, ISO 8601) into a Timestamp; empty means now (None)."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"'as of' must be a date such as 2030-01-31 (or empty for now), got {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    stamp = Timestamp()
    stamp.FromDatetime(moment.astimezone(UTC))
    return stamp


def _swept(documents: Sequence[retriever_pb2.SweptDocument]) -> list[dict]:
    return [
        {
            "document_id": d.document_id,
            "name": d.document_name or d.document_id,
            "collection": d.collection,
            "published": _day(d.published_at),
            "chunks": d.chunks,
        }
        for d in documents
    ]


def documents_table(documents: Sequence[retriever_pb2.SweptDocument], empty: str) -> str:
    return render("frontend", "swept_documents.html.j2", documents=_swept(documents), empty=empty)


def sweep_html(response: retriever_pb2.SweepResponse) -> str:
    """What a sweep took, or with a dry run what it would take."""
    count = len(response.documents)
    if response.dry_run:
        head = (
            f"Dry run: {plural(count, 'document')} ({plural(sum(d.chunks for d in response.documents), 'chunk')}) "
            "outside the collection's window would be archived. Nothing has changed yet."
            if count
            else (
                "Dry run: nothing is outside its freshness window; a sweep would archive nothing, "
                "so Sweep now stays off."
            )
        )
    else:
        head = (
            f"Swept: {plural(count, 'document')} archived to cold storage, "
            f"{plural(response.chunks_archived, 'chunk')} left the index."
            if count
            else "Swept: nothing was outside its freshness window; nothing changed."
        )
    return render(
        "frontend",
        "sweep.html.j2",
        kind="dry-run" if response.dry_run else "swept",
        head=head,
        documents=_swept(response.documents),
    )


def archived_choices(documents: Sequence[retriever_pb2.SweptDocument]) -> list[tuple[str, str]]:
    return [
        (f"{d.document_name or d.document_id} · {d.collection} · {d.document_id[:8]}", d.document_id) for d in documents
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
