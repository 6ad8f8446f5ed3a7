"""The status of a call that must fail, made raw (grpc.RpcError) or through
the client library (ClientError), for tests that check the service's code
and words."""

from __future__ import annotations

import grpc
import pytest

from chunklab.client import ClientError


def status_of(call) -> tuple[grpc.StatusCode, str]:
    """(status code, the service's own words) of call(), which must fail; a
    stream it returns is read to its end."""
    with pytest.raises((grpc.RpcError, ClientError)) as err:
        result = call()
        if hasattr(result, "__iter__") and not hasattr(result, "ListFields"):
            list(result)
    if isinstance(err.value, ClientError):
        assert err.value.service, f"refused before any call: {err.value.message}"
        return err.value.code, err.value.details
    return err.value.code(), err.value.details()
