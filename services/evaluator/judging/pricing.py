"""Estimated cost of LLM calls from a small price table.

Prices are US dollars per million tokens (input, output), as published by
the vendors for their standard tier; they drift, so costs are estimates.
A model not in the table costs 0 and is reported as "unknown price".
"""

from __future__ import annotations

# model name -> (input $/M tokens, output $/M tokens)
PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-3.5-turbo": (0.50, 1.50),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
    "text-embedding-3-small": (0.02, 0.0),
    "text-embedding-3-large": (0.13, 0.0),
}


def known(model: str) -> bool:
    return _lookup(model) is not None


def _lookup(model: str) -> tuple[float, float] | None:
    name = model.strip().lower()
    if name.startswith("openai:"):
        name = name[len("openai:") :]
    if name in PRICES:
        return PRICES[name]
    # Dated snapshots ("gpt-4o-mini-2024-07-18") cost what their family costs.
    family = max((p for p in PRICES if name.startswith(p + "-")), key=len, default=None)
    return PRICES[family] if family else None


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int = 0) -> float:
    price = _lookup(model)
    if price is None:
        return 0.0
    return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1e6


def price_note(model: str) -> str:
    """'' for a priced model, else the note reports carry."""
    return "" if known(model) else f"unknown price for model {model!r}: its calls are counted as $0"
