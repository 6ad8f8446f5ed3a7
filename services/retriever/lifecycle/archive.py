"""Cold storage for swept documents: one gzip'd JSON-lines file per document
under <data_dir>/retriever/archive/.

The first line is a header (document, collection, publication time, chunk
count, and the retriever's records of how each strategy was indexed); each
further line is one point exactly as the index held it: id, payload, the
dense vector and the BM25 weights as little-endian float32 in base64, so a
restore writes back the same bytes. A file is written to a temporary name,
fsync'd and renamed into place before any point is deleted: a sweep that
stops half-way leaves the points in the index, never half an archive. A
write that fails (a full disk, a folder it may not write) removes what it
wrote and says so in an error a person can act on.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from pathlib import Path

import numpy as np

from services.retriever.index.payloads import IndexPoint, Sparse
from services.retriever.index.vector_index import StoredPoint
from services.retriever.lifecycle.journal import durable_file, fsync_folder


def _f32(values) -> str:
    return base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode("ascii")


def _from_f32(text: str) -> list[float]:
    return np.frombuffer(base64.b64decode(text), dtype="<f4").tolist()


def point_record(index: str, point: StoredPoint) -> dict:
    return {
        "index": index,
        "id": point.point_id,
        "payload": point.payload,
        "dense": _f32(point.dense) if point.dense is not None else None,
        "sparse": (
            {"indices": list(point.sparse.indices), "values": _f32(point.sparse.values)}
            if point.sparse is not None
            else None
        ),
    }


def record_point(record: dict) -> IndexPoint:
    sparse = record.get("sparse")
    return IndexPoint(
        point_id=record["id"],
        payload=record["payload"],
        dense=_from_f32(record["dense"]) if record.get("dense") is not None else None,
        sparse=Sparse(tuple(sparse["indices"]), tuple(_from_f32(sparse["values"]))) if sparse else None,
    )


class ColdStorage:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def path_for(self, document_id: str) -> Path:
        # Any document id makes a safe file name.
        return self.folder / f"{hashlib.sha256(document_id.encode()).hexdigest()[:32]}.jsonl.gz"

    def exists(self, document_id: str) -> bool:
        return self.path_for(document_id).exists()

    def temporaries(self, document_id: str) -> list[Path]:
        """Archives of the document being written, or left half-written by a killed process."""
        path = self.path_for(document_id)
        return list(self.folder.glob(f".{path.name}.*.tmp"))

    def write(self, header: dict, records: list[dict]) -> Path:
        """Writes a document's archive durably, whole or not at all."""
        path = self.path_for(header["document_id"])
        with durable_file(
            path,
            f"the archive of document {header['document_id']}",
            "none of its chunks was deleted from the index",
            "sweep again",
        ) as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
                out.write((json.dumps({"header": header}) + "\n").encode())
                for record in records:
                    out.write((json.dumps(record, separators=(",", ":")) + "\n").encode())
        return path

    def read(self, document_id: str) -> tuple[dict, list[dict]] | None:
        path = self.path_for(document_id)
        if not path.exists():
            return None
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            header = json.loads(next(lines))["header"]
            return header, [json.loads(line) for line in lines if line.strip()]

    def headers(self) -> list[dict]:
        found = []
        for path in self.folder.glob("*.jsonl.gz"):
            with gzip.open(path, "rt", encoding="utf-8") as lines:
                found.append(json.loads(next(lines))["header"])
        return sorted(found, key=lambda h: h["document_id"])

    def delete(self, document_id: str) -> bool:
        path = self.path_for(document_id)
        if not path.exists():
            return False
        path.unlink()
        fsync_folder(self.folder)
        return True
