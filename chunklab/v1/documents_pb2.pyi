import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DocumentFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DOCUMENT_FORMAT_UNSPECIFIED: _ClassVar[DocumentFormat]
    DOCUMENT_FORMAT_MARKDOWN: _ClassVar[DocumentFormat]
    DOCUMENT_FORMAT_TEXT: _ClassVar[DocumentFormat]
    DOCUMENT_FORMAT_DOCX: _ClassVar[DocumentFormat]
    DOCUMENT_FORMAT_PDF: _ClassVar[DocumentFormat]
    DOCUMENT_FORMAT_HTML: _ClassVar[DocumentFormat]

class NodeKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NODE_KIND_UNSPECIFIED: _ClassVar[NodeKind]
    NODE_KIND_DOCUMENT: _ClassVar[NodeKind]
    NODE_KIND_SECTION: _ClassVar[NodeKind]
    NODE_KIND_HEADING: _ClassVar[NodeKind]
    NODE_KIND_PARAGRAPH: _ClassVar[NodeKind]
    NODE_KIND_LIST: _ClassVar[NodeKind]
    NODE_KIND_LIST_ITEM: _ClassVar[NodeKind]
    NODE_KIND_TABLE: _ClassVar[NodeKind]
    NODE_KIND_CODE: _ClassVar[NodeKind]

class DocumentView(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DOCUMENT_VIEW_UNSPECIFIED: _ClassVar[DocumentView]
    DOCUMENT_VIEW_BASIC: _ClassVar[DocumentView]
    DOCUMENT_VIEW_FULL: _ClassVar[DocumentView]
DOCUMENT_FORMAT_UNSPECIFIED: DocumentFormat
DOCUMENT_FORMAT_MARKDOWN: DocumentFormat
DOCUMENT_FORMAT_TEXT: DocumentFormat
DOCUMENT_FORMAT_DOCX: DocumentFormat
DOCUMENT_FORMAT_PDF: DocumentFormat
DOCUMENT_FORMAT_HTML: DocumentFormat
NODE_KIND_UNSPECIFIED: NodeKind
NODE_KIND_DOCUMENT: NodeKind
NODE_KIND_SECTION: NodeKind
NODE_KIND_HEADING: NodeKind
NODE_KIND_PARAGRAPH: NodeKind
NODE_KIND_LIST: NodeKind
NODE_KIND_LIST_ITEM: NodeKind
NODE_KIND_TABLE: NodeKind
NODE_KIND_CODE: NodeKind
DOCUMENT_VIEW_UNSPECIFIED: DocumentView
DOCUMENT_VIEW_BASIC: DocumentView
DOCUMENT_VIEW_FULL: DocumentView

class TreeNode(_message.Message):
    __slots__ = ("kind", "level", "title", "heading_path", "start_char", "end_char", "children", "first_page", "last_page")
    KIND_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    HEADING_PATH_FIELD_NUMBER: _ClassVar[int]
    START_CHAR_FIELD_NUMBER: _ClassVar[int]
    END_CHAR_FIELD_NUMBER: _ClassVar[int]
    CHILDREN_FIELD_NUMBER: _ClassVar[int]
    FIRST_PAGE_FIELD_NUMBER: _ClassVar[int]
    LAST_PAGE_FIELD_NUMBER: _ClassVar[int]
    kind: NodeKind
    level: int
    title: str
    heading_path: _containers.RepeatedScalarFieldContainer[str]
    start_char: int
    end_char: int
    children: _containers.RepeatedCompositeFieldContainer[TreeNode]
    first_page: int
    last_page: int
    def __init__(self, kind: _Optional[_Union[NodeKind, str]] = ..., level: _Optional[int] = ..., title: _Optional[str] = ..., heading_path: _Optional[_Iterable[str]] = ..., start_char: _Optional[int] = ..., end_char: _Optional[int] = ..., children: _Optional[_Iterable[_Union[TreeNode, _Mapping]]] = ..., first_page: _Optional[int] = ..., last_page: _Optional[int] = ...) -> None: ...

class DocumentTree(_message.Message):
    __slots__ = ("root", "page_starts")
    ROOT_FIELD_NUMBER: _ClassVar[int]
    PAGE_STARTS_FIELD_NUMBER: _ClassVar[int]
    root: TreeNode
    page_starts: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, root: _Optional[_Union[TreeNode, _Mapping]] = ..., page_starts: _Optional[_Iterable[int]] = ...) -> None: ...

class Document(_message.Message):
    __slots__ = ("document_id", "name", "format", "collection", "language", "published_at", "ingested_at", "size_bytes", "content_hash", "character_count", "metadata", "text", "tree", "parse_report")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_AT_FIELD_NUMBER: _ClassVar[int]
    INGESTED_AT_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    CHARACTER_COUNT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TREE_FIELD_NUMBER: _ClassVar[int]
    PARSE_REPORT_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    name: str
    format: DocumentFormat
    collection: str
    language: str
    published_at: _timestamp_pb2.Timestamp
    ingested_at: _timestamp_pb2.Timestamp
    size_bytes: int
    content_hash: str
    character_count: int
    metadata: _containers.ScalarMap[str, str]
    text: str
    tree: DocumentTree
    parse_report: ParseReport
    def __init__(self, document_id: _Optional[str] = ..., name: _Optional[str] = ..., format: _Optional[_Union[DocumentFormat, str]] = ..., collection: _Optional[str] = ..., language: _Optional[str] = ..., published_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ingested_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., size_bytes: _Optional[int] = ..., content_hash: _Optional[str] = ..., character_count: _Optional[int] = ..., metadata: _Optional[_Mapping[str, str]] = ..., text: _Optional[str] = ..., tree: _Optional[_Union[DocumentTree, _Mapping]] = ..., parse_report: _Optional[_Union[ParseReport, _Mapping]] = ...) -> None: ...

class ParseReport(_message.Message):
    __slots__ = ("pages", "headings", "paragraphs", "tables", "list_items", "code_blocks", "warnings", "reader")
    PAGES_FIELD_NUMBER: _ClassVar[int]
    HEADINGS_FIELD_NUMBER: _ClassVar[int]
    PARAGRAPHS_FIELD_NUMBER: _ClassVar[int]
    TABLES_FIELD_NUMBER: _ClassVar[int]
    LIST_ITEMS_FIELD_NUMBER: _ClassVar[int]
    CODE_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    READER_FIELD_NUMBER: _ClassVar[int]
    pages: int
    headings: int
    paragraphs: int
    tables: int
    list_items: int
    code_blocks: int
    warnings: _containers.RepeatedScalarFieldContainer[str]
    reader: str
    def __init__(self, pages: _Optional[int] = ..., headings: _Optional[int] = ..., paragraphs: _Optional[int] = ..., tables: _Optional[int] = ..., list_items: _Optional[int] = ..., code_blocks: _Optional[int] = ..., warnings: _Optional[_Iterable[str]] = ..., reader: _Optional[str] = ...) -> None: ...
