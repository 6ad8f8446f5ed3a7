"""The sample documents shipped in samples/ (ADR 0063), where the stack's loader
(chunklab_app.sample_loader) and the pages that open on them (the Documents page's boundary
viewer) both find them: a document is the sample's when its bytes are the shipped file's."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
SPEECH = SAMPLES / "state_of_the_union.md"
FIELD_GUIDE = SAMPLES / "rag-field-guide.md"
DOCUMENTS = (SPEECH, FIELD_GUIDE)
QUESTIONS = SAMPLES / "sample-questions.jsonl"
# The name the loader stores the questions under, and the Query page opens on (ADR 0070).
QUESTION_SET_NAME = "sample-questions"


@functools.cache
def content_hash(path: Path) -> str:
    """sha256 of a shipped file, as ingest records it (Document.content_hash); empty when missing."""
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""


def is_sample(document, path: Path = SPEECH) -> bool:
    """Whether an uploaded document (a Document message) is the shipped file at path."""
    expected = content_hash(path)
    return bool(expected) and document.content_hash == expected


def is_any_sample(document) -> bool:
    return any(is_sample(document, path) for path in DOCUMENTS)
