"""A small town in five sentences: the document the question-generation tests ask
about, and the evaluator's peers that serve it."""

from __future__ import annotations

from chunklab.v1 import documents_pb2

DEADLINE_S = 60.0


TIMEOUT_S = 1.5  # the generator's timeout per call (the fake answers at once unless told to be slow)


RIVER = "The river Alder flows past Harwick on its way to the sea."


FERRY = "The ferry to Olsen Island departs every two hours from the north pier."


LIBRARY = "The town library opens at nine and closes at five on weekdays."


MARKET = "A farmers' market fills the square every Saturday morning."


BRIDGE = "The stone bridge was rebuilt in 1873 after the great flood."


TEXT = "\n\n".join(
    [
        "# Harwick",
        RIVER,
        FERRY + " Tickets are sold on board.",
        LIBRARY,
        MARKET,
        BRIDGE,
        "The harbour master keeps a log of every ship that docks.",
        "Harwick's school has two hundred pupils and twelve teachers.",
        "The lighthouse on Gull Point was automated in 1992.",
        "Fishing boats leave before dawn and return by noon.",
    ]
)


class Peers:
    """The uploaded documents: harwick.md (d-1), whose hash a test changes under a generation,
    and empty.md (d-empty)."""

    def __init__(self) -> None:
        self.hash = "h1"

    def get_document(self, document_id, full=False):
        if document_id == "d-empty":
            return documents_pb2.Document(document_id=document_id, name="empty.md", text="", content_hash="h0")
        if document_id != "d-1":
            from chunklab.errors import NotFound

            raise NotFound(f"no document {document_id}")
        return documents_pb2.Document(document_id="d-1", name="harwick.md", text=TEXT, content_hash=self.hash)

    def list_documents(self):
        return [self.get_document("d-1")]
