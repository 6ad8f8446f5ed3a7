import datetime

from chunklab.v1 import documents_pb2 as _documents_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class UploadHeader(_message.Message):
    __slots__ = ("name", "format", "collection", "language", "published_at", "size_bytes")
    NAME_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_AT_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    name: str
    format: _documents_pb2.DocumentFormat
    collection: str
    language: str
    published_at: _timestamp_pb2.Timestamp
    size_bytes: int
    def __init__(self, name: _Optional[str] = ..., format: _Optional[_Union[_documents_pb2.DocumentFormat, str]] = ..., collection: _Optional[str] = ..., language: _Optional[str] = ..., published_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., size_bytes: _Optional[int] = ...) -> None: ...

class CreateDocumentRequest(_message.Message):
    __slots__ = ("header", "data")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    header: UploadHeader
    data: bytes
    def __init__(self, header: _Optional[_Union[UploadHeader, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class CreateDocumentResponse(_message.Message):
    __slots__ = ("document", "already_existed")
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    ALREADY_EXISTED_FIELD_NUMBER: _ClassVar[int]
    document: _documents_pb2.Document
    already_existed: bool
    def __init__(self, document: _Optional[_Union[_documents_pb2.Document, _Mapping]] = ..., already_existed: _Optional[bool] = ...) -> None: ...

class GetDocumentRequest(_message.Message):
    __slots__ = ("document_id", "view")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    view: _documents_pb2.DocumentView
    def __init__(self, document_id: _Optional[str] = ..., view: _Optional[_Union[_documents_pb2.DocumentView, str]] = ...) -> None: ...

class ListDocumentsRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "collection", "language")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    collection: str
    language: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., collection: _Optional[str] = ..., language: _Optional[str] = ...) -> None: ...

class ListDocumentsResponse(_message.Message):
    __slots__ = ("documents", "next_page_token", "total_size")
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TOTAL_SIZE_FIELD_NUMBER: _ClassVar[int]
    documents: _containers.RepeatedCompositeFieldContainer[_documents_pb2.Document]
    next_page_token: str
    total_size: int
    def __init__(self, documents: _Optional[_Iterable[_Union[_documents_pb2.Document, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., total_size: _Optional[int] = ...) -> None: ...

class DeleteDocumentRequest(_message.Message):
    __slots__ = ("document_id",)
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    def __init__(self, document_id: _Optional[str] = ...) -> None: ...

class DeleteDocumentResponse(_message.Message):
    __slots__ = ("chunks_deleted",)
    CHUNKS_DELETED_FIELD_NUMBER: _ClassVar[int]
    chunks_deleted: int
    def __init__(self, chunks_deleted: _Optional[int] = ...) -> None: ...
