"""Calls to the ingest service: uploading, listing, reading and deleting documents."""

from __future__ import annotations

from chunklab.client.core import UPLOAD_PIECE_BYTES, Calls, Source, client_stream, read_source
from chunklab.v1 import documents_pb2, ingest_pb2


class DocumentCalls(Calls):
    def upload_document(
        self,
        source: Source,
        collection: str = "",
        name: str = "",
        language: str = "",
        piece_bytes: int = UPLOAD_PIECE_BYTES,
    ) -> ingest_pb2.CreateDocumentResponse:
        """Streams a file (a path, or bytes named by `name`) to CreateDocument: the
        header with the size, then pieces of at most 1 MiB. The same bytes
        uploaded again give the stored document (`already_existed`).

        `name` (default: the file's) gives the format by its extension; an empty
        collection means "default" and an empty language means detect it. The long
        deadline: reading a PDF takes about 30 ms a page here, so a 1,000-page manual
        within its size limit needs more than the short one."""
        data, file_name, size = read_source(source, name, "uploaded file")
        header = ingest_pb2.UploadHeader(
            name=name.strip() or file_name,
            collection=collection.strip(),
            language=language.strip().lower(),
            size_bytes=size,
        )
        return self._call(
            "ingest",
            "CreateDocument",
            client_stream(ingest_pb2.CreateDocumentRequest, header, data, piece_bytes),
            long=True,
        )

    def list_documents(self, collection: str = "", language: str = "") -> list[documents_pb2.Document]:
        """Every document (of the collection and language, if given), all pages followed."""
        request = ingest_pb2.ListDocumentsRequest(collection=collection, language=language)
        return self._every_page("ingest", "ListDocuments", request, "documents")

    def get_document(
        self, document_id: str, view: documents_pb2.DocumentView = documents_pb2.DOCUMENT_VIEW_BASIC
    ) -> documents_pb2.Document:
        request = ingest_pb2.GetDocumentRequest(document_id=document_id, view=view)
        return self._call("ingest", "GetDocument", request)

    def get_document_text(self, document_id: str) -> documents_pb2.Document:
        """The document with its canonical text (the FULL view), for the boundary viewer."""
        return self.get_document(document_id, documents_pb2.DOCUMENT_VIEW_FULL)

    def delete_document(self, document_id: str) -> int:
        """Deletes a document and its chunks; returns how many chunks left the index."""
        request = ingest_pb2.DeleteDocumentRequest(document_id=document_id)
        return self._call("ingest", "DeleteDocument", request).chunks_deleted
