"""Question sets: reading JSONL and CSV files, finding the uploaded documents
their references name, and the content hash that experiments record.

A reference is a document plus a character range, or an excerpt string that
is located in the document's canonical text (services.evaluator.questions.references).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath

from chunklab.errors import FailedPrecondition, InvalidArgument, ServiceError
from chunklab.rpc.limits import quoted
from chunklab.v1 import documents_pb2, evaluator_pb2

# Column / key names accepted for each field (the first is the canonical one).
QUESTION_KEYS = ("question", "text", "query")
ANSWER_KEYS = ("expected_answer", "answer", "reference_answer")
DOCUMENT_KEYS = ("document_id", "document", "corpus_id", "document_name")
START_KEYS = ("start_char", "start_index", "start")
END_KEYS = ("end_char", "end_index", "end")
# A file's own question ids (kept in the question's metadata); the set numbers its questions itself.
ID_KEYS = ("question_id", "id")


@dataclass
class RawReference:
    document: str  # a document id, a corpus id or a document name
    start: int | None
    end: int | None
    content: str


@dataclass
class RawQuestion:
    where: str  # "line 12" in a file, "question 3" in a request
    text: str
    expected_answer: str = ""
    references: list[RawReference] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)
    line: int = 0  # the file's line; 0 for a request
    question_id: str = ""  # the id the request or file gave it, if any


def _first(record: dict, keys: Sequence[str]):
    for key in keys:
        if key in record and record[key] not in (None, ""):
            return record[key]
    return None


def _int_or_none(value, line: int, what: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise InvalidArgument(f"line {line}: {what} must be a whole number, got {quoted(value)}")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise InvalidArgument(f"line {line}: {what} must be a whole number, got {quoted(value)}") from None
    if number != float(value):
        raise InvalidArgument(f"line {line}: {what} must be a whole number, got {quoted(value)}")
    return number


def _references(value, default_document: str, line: int) -> list[RawReference]:
    if value in (None, ""):
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise InvalidArgument(
                f"line {line}: references is not a JSON list (not valid JSON at character {exc.pos + 1})"
            ) from None
    if not isinstance(value, list):
        raise InvalidArgument(f"line {line}: references must be a list of objects")
    refs = []
    for number, item in enumerate(value, start=1):
        if not isinstance(item, dict):
            raise InvalidArgument(f"line {line}: reference {number} is not an object")
        document = _first(item, DOCUMENT_KEYS) or default_document
        if not document:
            raise InvalidArgument(
                f"line {line}: reference {number} names no document (give document_id or a corpus_id column)"
            )
        content = item.get("content") or ""
        if not isinstance(content, str):
            raise InvalidArgument(f"line {line}: reference {number}: content must be text")
        refs.append(
            RawReference(
                document=str(document),
                start=_int_or_none(_first(item, START_KEYS), line, f"reference {number}'s start"),
                end=_int_or_none(_first(item, END_KEYS), line, f"reference {number}'s end"),
                content=content,
            )
        )
    return refs


def _question(record: dict, line: int) -> RawQuestion:
    text = _first(record, QUESTION_KEYS)
    if not isinstance(text, str) or not text.strip():
        raise InvalidArgument(f"line {line}: no question text (a 'question' field or column)")
    answer = _first(record, ANSWER_KEYS) or ""
    if not isinstance(answer, str):
        raise InvalidArgument(f"line {line}: expected_answer must be text")
    default_document = str(_first(record, DOCUMENT_KEYS) or "")
    used = {*QUESTION_KEYS, *ANSWER_KEYS, *DOCUMENT_KEYS, "references", "metadata"}
    metadata = {k: str(v) for k, v in record.items() if k not in used and k and v not in (None, "")}
    extra = record.get("metadata")
    if isinstance(extra, dict):
        metadata.update({str(k): str(v) for k, v in extra.items()})
    if default_document:
        metadata.setdefault("corpus_id", default_document)
    return RawQuestion(
        where=f"line {line}",
        text=text.strip(),
        expected_answer=answer.strip(),
        references=_references(record.get("references"), default_document, line),
        metadata=metadata,
        line=line,
        question_id=str(_first(record, ID_KEYS) or "").strip(),
    )


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InvalidArgument(f"line {line}: the file is not UTF-8 text (byte {exc.start})") from None


def read_jsonl(data: bytes) -> list[RawQuestion]:
    questions = []
    for line, raw in enumerate(_decode(data).splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InvalidArgument(f"line {line}: not a JSON object (not valid JSON at column {exc.colno})") from None
        if not isinstance(record, dict):
            raise InvalidArgument(f"line {line}: a JSON {type(record).__name__}, expected an object")
        questions.append(_question(record, line))
    return questions


# What the csv module's refusals mean, in our words (its own text is not shown: ADR 0079).
_CSV_PROBLEMS = (
    ("field larger than field limit", f"a field is over {csv.field_size_limit():,} characters"),
    ("line contains nul", "the line holds a NUL byte: save the file as CSV text again"),
    ("new-line character seen in unquoted field", "a line break inside a field that is not quoted"),
    ("unexpected end of data", "a quote is not closed before the end of the file"),
)


def _csv_problem(exc: csv.Error) -> str:
    for known, meaning in _CSV_PROBLEMS:
        if known in str(exc).lower():
            return meaning
    return "the quoting of a field is broken: save the file as CSV again"


def read_csv(data: bytes) -> list[RawQuestion]:
    text = _decode(data)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise InvalidArgument("the CSV file is empty") from None
    except csv.Error as exc:
        raise InvalidArgument(f"line 1: unreadable CSV header ({_csv_problem(exc)})") from None
    header = [h.strip() for h in header]
    if not any(h in QUESTION_KEYS for h in header):
        raise InvalidArgument(f"line 1: the CSV header needs a 'question' column; it has {', '.join(header)}")
    questions = []
    while True:
        line = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise InvalidArgument(f"line {line}: unreadable CSV ({_csv_problem(exc)})") from None
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise InvalidArgument(f"line {line}: {len(row)} fields, the header has {len(header)}")
        questions.append(_question(dict(zip(header, row)), line))
    return questions


def read_file(data: bytes, fmt: int, name: str) -> list[RawQuestion]:
    """Reads a JSONL or CSV file; an unspecified format follows the file name's extension,
    else the content (a JSON object first, or a CSV header with a question column)."""
    if fmt == evaluator_pb2.QUESTION_SET_FORMAT_UNSPECIFIED:
        suffix = PurePath(name).suffix.lower()
        if suffix in (".jsonl", ".ndjson", ".json"):
            fmt = evaluator_pb2.QUESTION_SET_FORMAT_JSONL
        elif suffix in (".csv", ".tsv"):
            fmt = evaluator_pb2.QUESTION_SET_FORMAT_CSV
        elif data.lstrip().startswith(b"{"):
            fmt = evaluator_pb2.QUESTION_SET_FORMAT_JSONL
        elif any(key.encode() in data.split(b"\n", 1)[0].lower() for key in QUESTION_KEYS) and b"," in data[:4096]:
            fmt = evaluator_pb2.QUESTION_SET_FORMAT_CSV
        else:
            raise InvalidArgument(
                f"say whether {name or 'the file'} is JSONL or CSV (the format field, or a .jsonl/.csv name)"
            )
    questions = read_jsonl(data) if fmt == evaluator_pb2.QUESTION_SET_FORMAT_JSONL else read_csv(data)
    if not questions:
        raise InvalidArgument(f"{name or 'the file'} holds no questions")
    return questions


class DocumentResolver:
    """Turns the document names used in a file into uploaded documents.

    Order: the import's explicit mapping, an uploaded document's id, then the
    name of an uploaded document with or without its extension
    (chatlogs -> chatlogs.md). Canonical texts are fetched once each.
    """

    def __init__(
        self,
        mapping: dict[str, str],
        get_document: Callable[[str, bool], documents_pb2.Document],
        list_documents: Callable[[], list[documents_pb2.Document]],
    ) -> None:
        self._mapping = dict(mapping)
        self._get = get_document
        self._list = list_documents
        self._listed: list[documents_pb2.Document] | None = None
        self._ids: dict[str, str] = {}
        self._texts: dict[str, documents_pb2.Document] = {}

    def _documents(self) -> list[documents_pb2.Document]:
        if self._listed is None:
            self._listed = self._list()
        return self._listed

    def document_id(self, key: str, where: str) -> str:
        if key in self._ids:
            return self._ids[key]
        if key in self._mapping:
            found = self._mapping[key]
        else:
            by_id = [d for d in self._documents() if d.document_id == key]
            by_name = [d for d in self._documents() if d.name == key or PurePath(d.name).stem == key]
            candidates = by_id or by_name
            if not candidates:
                raise FailedPrecondition(
                    f"{where}: no uploaded document is called {quoted(key)}; upload it first, or map "
                    f"{quoted(key)} to an uploaded document's id ({key}=document_id)"
                )
            if len(candidates) > 1:
                names = ", ".join(f"{d.name} ({d.document_id}, collection {d.collection})" for d in candidates)
                raise FailedPrecondition(
                    f"{where}: {quoted(key)} matches several documents: {names}; map it to one of them ({key}=document_id)"
                )
            found = candidates[0].document_id
        self._ids[key] = found
        return found

    def text(self, document_id: str, where: str) -> str:
        if document_id not in self._texts:
            try:
                self._texts[document_id] = self._get(document_id, True)
            except ServiceError as exc:  # NotFound and friends: say which line asked
                raise type(exc)(f"{where}: document {document_id}: {exc.message}") from None
        return self._texts[document_id].text

    def content_hashes(self) -> dict[str, str]:
        return {doc_id: doc.content_hash for doc_id, doc in self._texts.items()}


def content_hash(questions: Sequence[evaluator_pb2.Question]) -> str:
    """sha256 of the questions in canonical form (text, expected answer, references, metadata)."""
    canonical = [
        {
            "text": q.text,
            "expected_answer": q.expected_answer,
            "references": [[r.document_id, r.start_char, r.end_char] for r in q.references],
            "metadata": dict(sorted(q.metadata.items())),
        }
        for q in questions
    ]
    data = json.dumps(canonical, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(data.encode()).hexdigest()


def from_messages(questions: Sequence[evaluator_pb2.Question]) -> list[RawQuestion]:
    """Questions given in a CreateQuestionSet request, numbered from 1 like lines."""
    raw = []
    for number, q in enumerate(questions, start=1):
        if not q.text.strip():
            raise InvalidArgument(f"question {number} has no text")
        refs = []
        for r in q.references:
            has_range = not (r.start_char == 0 and r.end_char == 0)
            refs.append(
                RawReference(
                    document=r.document_id,
                    start=r.start_char if has_range else None,
                    end=r.end_char if has_range else None,
                    content=r.content,
                )
            )
        raw.append(
            RawQuestion(
                f"question {number}",
                q.text.strip(),
                q.expected_answer.strip(),
                refs,
                dict(q.metadata),
                question_id=q.question_id.strip(),
            )
        )
    return raw


def refuse_duplicate_ids(questions: Sequence[RawQuestion]) -> None:
    """Refuses two questions given the same id (ADR 0125): one of them would be lost to
    whoever reads results by that id, so the request names the id and both places."""
    first: dict[str, str] = {}
    for question in questions:
        if not question.question_id:
            continue
        if question.question_id in first:
            raise InvalidArgument(
                f"{question.where} has the question id {quoted(question.question_id)}, as "
                f"{first[question.question_id]} does: give each question its own id, or none"
            )
        first[question.question_id] = question.where
