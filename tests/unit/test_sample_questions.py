"""The sample `make up` loads (samples/): its question set passes the importer's strict
check against the shipped documents, every excerpt exactly where the set says."""

from __future__ import annotations

from chunklab.v1 import documents_pb2, evaluator_pb2
from chunklab_app.sample_loader import DOCUMENTS, QUESTIONS
from services.evaluator.questions import references
from services.evaluator.questions.question_sets import DocumentResolver, read_file
from services.ingest.readers.decoding import decode_text


def shipped_documents() -> list[documents_pb2.Document]:
    """The sample documents as ingest stores them: Markdown's canonical text is the file's text."""
    return [
        documents_pb2.Document(
            document_id=f"doc-{path.stem}", name=path.name, text=decode_text(path.name, path.read_bytes())[0]
        )
        for path in DOCUMENTS
    ]


def test_every_sample_question_passes_the_strict_check_against_the_shipped_documents():
    documents = shipped_documents()
    by_id = {d.document_id: d for d in documents}
    resolver = DocumentResolver({}, lambda document_id, _with_text: by_id[document_id], lambda: documents)
    raw = read_file(QUESTIONS.read_bytes(), evaluator_pb2.QUESTION_SET_FORMAT_JSONL, QUESTIONS.name)
    checked = references.check(raw, resolver, evaluator_pb2.EXCERPT_CHECK_STRICT)
    references.refuse(checked)  # raises on any problem in strict mode

    report = checked.validation
    assert (report.questions_total, report.questions_valid, report.questions_left_out) == (82, 82, 0)
    assert report.references_exact == report.references_total and not report.problems
    per_document = {}
    for question in checked.questions:
        for ref in question.references:
            assert by_id[ref.document_id].text[ref.start_char : ref.end_char] == ref.content
            per_document[ref.document_id] = per_document.get(ref.document_id, 0) + 1
    assert set(per_document) == {"doc-state_of_the_union", "doc-rag-field-guide"}
