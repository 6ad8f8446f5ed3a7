"""The evaluator's warm-up (ADR 0143): the machine's calibration for the dry run's estimate is
measured at start, so the first experiment's estimate embeds nothing while its caller waits."""

from __future__ import annotations

import numpy as np

from services.evaluator import server
from services.evaluator.experiments import speeds


class CountingProvider:
    """Every text embedded is counted; vectors say nothing (the answer is not what is checked here)."""

    name, dimension = "warm-up-counting-model", 2

    def __init__(self) -> None:
        self.texts = 0

    def embed_documents(self, texts):
        self.texts += len(texts)
        return np.tile(np.array([1.0, 0.0], dtype=np.float32), (len(texts), 1))

    def embed_query(self, text):
        self.texts += 1
        return np.array([1.0, 0.0], dtype=np.float32)


def test_the_first_estimate_after_the_warm_up_embeds_nothing():
    provider = CountingProvider()
    server.warm_up(provider)
    embedded_at_start = provider.texts
    assert embedded_at_start >= speeds.CALIBRATION_PASSAGES + speeds.CALIBRATION_QUERIES
    assert speeds.calibrate(provider) is speeds.calibrate(provider)
    assert provider.texts == embedded_at_start  # measured once, at start
