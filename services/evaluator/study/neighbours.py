"""The configurations one step from a point of a study's space (ADR 0132): each parameter moved
one step up and one step down, the others kept, every value within the space's declared range.
The search tries them around the best configuration so far (the static recommendation first)
before the sampler roams, so that a better configuration next to the starting point is not left
to chance.

A step: a token-sized knob is multiplied or divided by TOKEN_STEP (its range is searched on a log
scale); another integer knob moves by 1; a real knob (a threshold) by a tenth of its range; the
overlap share by OVERLAP_STEP; a choice, a flag or hybrid retrieval takes each other value; top_k
and neighbours take the next value of the space's list on each side.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from services.evaluator.study import space as spaces

TOKEN_STEP = 1.25
REAL_STEP = 0.1  # of the knob's range
OVERLAP_STEP = 0.1


def neighbours(space: spaces.Space, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Every point one step from params (Optuna parameters, as starting_points gives them), each
    a full parameter set within the space; none equal to params, none twice."""
    strategy = params.get("strategy")
    if strategy not in space.infos:
        return []
    found: list[dict[str, Any]] = []
    for name, value in _moves(space, strategy, params):
        moved = dict(params)
        moved[name] = value
        if moved != params and moved not in found:
            found.append(moved)
    return found


def _moves(space: spaces.Space, strategy: str, params: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    for param, knob in space.knob_params(strategy):
        if param not in params:
            continue
        value = params[param]
        if knob.kind == "int":
            low, high, log = spaces.int_range(knob, space.token_cap)
            if log:
                steps = (round(value * TOKEN_STEP), round(value / TOKEN_STEP))
            else:
                steps = (value + 1, value - 1)
            yield from ((param, int(v)) for v in steps if low <= v <= high and v != value)
        elif knob.kind == "double":
            low = knob.min_value if knob.min_value is not None else 0.0
            high = knob.max_value if knob.max_value is not None else 1.0
            step = REAL_STEP * (high - low)
            yield from ((param, round(v, 6)) for v in (value + step, value - step) if low <= v <= high)
        elif knob.kind in ("choice", "bool"):
            choices = list(knob.choices) if knob.kind == "choice" else [False, True]
            yield from ((param, c) for c in choices if c != value)
    share = f"{strategy}.{spaces.OVERLAP_SHARE}"
    if share in params:
        value = params[share]
        yield from ((share, round(v, 6)) for v in (value + OVERLAP_STEP, value - OVERLAP_STEP) if 0.0 <= v <= 0.5)
    yield from _beside("top_k", params, space.top_k)
    yield from ((("hybrid", h)) for h in space.hybrid if "hybrid" in params and h != params["hybrid"])
    yield from _beside("neighbors", params, space.neighbors)
    if space.rerank and "rerank" in params:
        yield "rerank", not params["rerank"]


def _beside(name: str, params: dict[str, Any], values: tuple) -> Iterator[tuple[str, Any]]:
    """The values next to params[name] in the space's sorted list (one each side)."""
    if name not in params:
        return
    ordered = sorted(values)
    current = params[name]
    above = [v for v in ordered if v > current]
    below = [v for v in ordered if v < current]
    if above:
        yield name, above[0]
    if below:
        yield name, below[-1]
