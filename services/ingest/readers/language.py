"""Language detection (py3langid: a langid.py model that ships in the package)."""

from __future__ import annotations

import functools
import threading

SAMPLE_CHARS = 20_000
_lock = threading.Lock()


@functools.cache
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def detect(text: str) -> str:
    """ISO 639-1 code of the text's language, or "und" when there is too little to tell."""
    sample = text[:SAMPLE_CHARS]
    if sum(ch.isalpha() for ch in sample) < 3:
        return "und"
    with _lock:
        code, probability = _identifier().classify(sample)
    return code if probability >= 0.5 else "und"
