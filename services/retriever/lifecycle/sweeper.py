"""The TTL sweeper and cold storage (SPEC section 4, seeds adr-freshness-window).

A sweep finds the documents whose chunks are outside their collection's
freshness window as of a time, writes each whole document (every strategy,
every embedding model: payloads and vectors) to one archive file, and only
then marks its records archived and deletes its points: tombstoned, nothing
lost, nothing half-written (a note in the write journal covers the steps, so
a killed sweep is undone or finished at the next start, `settle`).
A dry run lists what would go and changes nothing. A restore writes the
archived points back as they were and removes the archive.
"""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime

from chunklab.errors import AlreadyExists, InvalidArgument, NotFound, ServiceError
from chunklab.rpc.paging import check_page_size, decode_token, encode_token
from chunklab.timeutil import to_proto
from chunklab.v1 import retriever_pb2
from services.retriever.index import conditions as c
from services.retriever.index.payloads import TIME_FIELD, payload_to_chunk
from services.retriever.index.vector_index import index_name
from services.retriever.lifecycle.archive import ColdStorage, point_record, record_point
from services.retriever.lifecycle.periodic import Periodic
from services.retriever.lifecycle.sets import IndexSets
from services.retriever.service import RetrieverService

log = logging.getLogger("chunklab.retriever.sweeper")


def _swept(header: dict) -> retriever_pb2.SweptDocument:
    return retriever_pb2.SweptDocument(
        document_id=header["document_id"],
        document_name=header.get("document_name", ""),
        collection=header.get("collection", ""),
        published_at=to_proto(datetime.fromtimestamp(header.get("published_ts", 0.0), tz=UTC)),
        chunks=header.get("chunks", 0),
    )


class Sweeper:
    def __init__(self, service: RetrieverService, storage: ColdStorage, sets: IndexSets | None = None) -> None:
        self.service = service
        self.storage = storage
        self._sets = sets or IndexSets(service)  # for their retention, applied after each sweep
        self._lock = threading.Lock()  # one sweep or restore at a time
        self._periodic = Periodic("periodic sweep", self._sweep_and_vacuum, log)

    # -- sweep -----------------------------------------------------------------

    def _expired_documents(self, as_of_ts: float) -> dict[str, dict]:
        expired = self.service.policy().expired(as_of_ts)
        found: dict[str, dict] = {}
        if expired is None:
            return found
        for _, _, index in self.service.registry.all():
            for point in index.scroll(expired):
                p = point.payload
                entry = found.get(p["document_id"])
                if entry is None:
                    chunk = payload_to_chunk(p)
                    entry = found[p["document_id"]] = {
                        "document_id": p["document_id"],
                        "document_name": chunk.document_name,
                        "collection": p["collection"],
                        "published_ts": p[TIME_FIELD],
                        "chunks": 0,
                    }
                entry["chunks"] += 1
        return found

    def sweep(self, as_of: datetime, dry_run: bool) -> retriever_pb2.SweepResponse:
        with self._lock:
            documents = self._expired_documents(as_of.timestamp())
            response = retriever_pb2.SweepResponse(dry_run=dry_run)
            for document_id in sorted(documents):
                header = documents[document_id]
                if not dry_run:
                    try:
                        header["chunks"] = self._archive(header, as_of)
                    except ServiceError as exc:
                        if not response.documents:
                            raise
                        raise type(exc)(
                            f"{exc.message} (the {len(response.documents)} document(s) before it "
                            "were archived and removed from the index)"
                        ) from None
                response.documents.append(_swept(header))
                response.chunks_archived += header["chunks"]
            if documents and not dry_run:
                log.info("swept %d documents (%d chunks) as of %s", len(documents), response.chunks_archived, as_of)
            return response

    def _archive(self, header: dict, as_of: datetime) -> int:
        """Reads, writes and deletes a document's points under its lock: what is
        deleted is exactly what the archive holds. The archive is durable and
        the records say archived before a point is deleted; a failure before
        that takes the archive back."""
        document_id = header["document_id"]
        with self.service.document_lock(document_id):
            records = []
            indexes = self.service.registry.all()
            for name, _, index in indexes:
                records += [point_record(name, p) for p in index.scroll(c.match("document_id", document_id), True)]
            header = {
                **header,
                "chunks": len(records),
                "archived_at": as_of.timestamp(),
                "sets": self.service.store.sets_of(document_id),
            }
            journal = self.service.journal
            note = journal.begin("archive", document_id=document_id)
            try:
                self.storage.write(header, records)
            except Exception:
                journal.end(note)
                raise
            try:
                self.service.store.set_archived(document_id, True)
            except Exception:
                self.storage.delete(document_id)  # should this fail too, the note stays for the next start
                journal.end(note)
                raise
            for _, _, index in indexes:
                index.delete_document(document_id)
            journal.end(note)
        return len(records)

    def settle(self) -> int:
        """Settles the sweeps of documents a previous process did not finish (at
        start-up): an archive whose records say archived is finished (the
        points go), any other is taken back (the points stay). Returns how many."""
        notes = self.service.journal.pending("archive")
        for note in notes:
            document_id = note.fields["document_id"]
            with self.service.document_lock(document_id):
                for stray in self.storage.temporaries(document_id):
                    stray.unlink(missing_ok=True)
                sets = self.service.store.sets_of(document_id)
                if self.storage.exists(document_id) and (not sets or any(s["archived"] for s in sets)):
                    for _, _, index in self.service.registry.all():
                        index.delete_document(document_id)
                else:
                    self.storage.delete(document_id)
                self.service.journal.end(note)
            log.warning("settled the sweep of document %s that a stopped process left unfinished", document_id)
        return len(notes)

    # -- archive ---------------------------------------------------------------

    def list_archived(self, page_size: int, page_token: str) -> retriever_pb2.ListArchivedDocumentsResponse:
        size = check_page_size(page_size)
        after = decode_token(page_token)
        headers = [h for h in self.storage.headers() if h["document_id"] > after]
        page = headers[:size]
        token = ""
        if len(headers) > size:
            token = encode_token(page[-1]["document_id"])
        return retriever_pb2.ListArchivedDocumentsResponse(documents=[_swept(h) for h in page], next_page_token=token)

    def archive_stats(self) -> tuple[int, int]:
        files = list(self.storage.folder.glob("*.jsonl.gz"))
        return len(files), sum(f.stat().st_size for f in files)

    def restore(self, document_id: str) -> retriever_pb2.RestoreDocumentResponse:
        if not document_id:
            raise InvalidArgument("document_id is empty")
        with self._lock:
            archived = self.storage.read(document_id)
            if archived is None:
                raise NotFound(f"document {document_id} is not in the archive")
            header, records = archived
            with self.service.document_lock(document_id):
                return self._restore(document_id, header, records)

    def _restore(self, document_id: str, header: dict, records: list) -> retriever_pb2.RestoreDocumentResponse:
        """Writes the archived points back, unless the document was indexed again meanwhile."""
        registry = self.service.registry
        for _, _, index in registry.all():
            if index.count(c.match("document_id", document_id)):
                raise AlreadyExists(
                    f"document {document_id} has chunks in the index again (re-processed?); "
                    "delete them before restoring the archived ones"
                )
        known = {index_name(s["embedding_model"], s["dimension"]): s for s in header.get("sets", [])}
        by_index: dict[str, list] = {}
        for record in records:
            by_index.setdefault(record["index"], []).append(record_point(record))
        for name, points in by_index.items():
            index = registry.by_name(name)
            if index is None:  # the index went away since the sweep: make it again
                if name not in known:
                    raise NotFound(f"the archive of {document_id} names an index {name} that no longer exists")
                index = registry.get(known[name]["embedding_model"], known[name]["dimension"], create=True)
            index.upsert(points)
        for values in header.get("sets", []):
            self.service.store.record_set(**{**values, "archived": False})
        self.storage.delete(document_id)
        policy = self.service.policy()
        visible = policy.visible(self.service.clock().timestamp())
        outside = bool(records) and not c.evaluate(visible, records[0]["payload"])
        return retriever_pb2.RestoreDocumentResponse(chunks_restored=len(records), outside_freshness_window=outside)

    def forget(self, document_id: str) -> int:
        """Deletes a document's archive (the document itself was deleted)."""
        with self._lock:
            archived = self.storage.read(document_id)
            if archived is None:
                return 0
            self.storage.delete(document_id)
            return len(archived[1])

    # -- the periodic task -----------------------------------------------------

    def start(self, interval_s: float) -> None:
        """Sweeps every interval_s seconds (0: never), applies the index sets'
        retention and vacuums the indexes."""
        self._periodic.start(interval_s)

    def _sweep_and_vacuum(self) -> None:
        now = self.service.clock()
        self.sweep(now, dry_run=False)
        self._sets.apply_retention(now)
        self.service.registry_maintain()

    def stop(self) -> None:
        self._periodic.stop()
