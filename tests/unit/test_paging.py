"""Page sizes and tokens, shared by every List RPC."""

from __future__ import annotations

import pytest

from chunklab.errors import InvalidArgument
from chunklab.rpc.paging import MAX_PAGE_SIZE, check_page_size, decode_offset, decode_token, encode_token


def test_a_token_reads_back_what_it_was_given():
    assert decode_offset(encode_token(150)) == 150
    assert decode_token(encode_token("doc-7f")) == "doc-7f"
    assert decode_offset("") == 0 and decode_token("") == ""


@pytest.mark.parametrize("token", ["garbage", "b2Zmc2V0OjE1MA==", encode_token("not-a-number"), "%%%"])
def test_a_token_this_service_did_not_give_out_is_refused(token):
    with pytest.raises(InvalidArgument, match="page_token"):
        decode_offset(token)


def test_page_size_has_a_default_and_a_cap():
    assert check_page_size(0) == 50 and check_page_size(7) == 7 and check_page_size(MAX_PAGE_SIZE) == MAX_PAGE_SIZE
    for bad in (-1, MAX_PAGE_SIZE + 1):
        with pytest.raises(InvalidArgument, match="page_size"):
            check_page_size(bad)
