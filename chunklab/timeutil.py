"""Timestamps between Python and protobuf."""

from __future__ import annotations

from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp


def utcnow() -> datetime:
    return datetime.now(UTC)


def to_proto(value: datetime | None) -> Timestamp | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    ts = Timestamp()
    ts.FromDatetime(value.astimezone(UTC))
    return ts


def from_proto(ts: Timestamp, default: datetime | None = None) -> datetime | None:
    """The timestamp as an aware UTC datetime; default when the field is unset."""
    if ts is None or (ts.seconds == 0 and ts.nanos == 0):
        return default
    return ts.ToDatetime(tzinfo=UTC)
