"""The configurations one step from a point of a study's space (ADR 0132): each parameter moved
one step up and one step down, the others kept, every value within the space's declared range.
The search tries them around the best configuration so far (the static recommendation first)
before the sampler roams, so that a better configuration next to the starting point is not left
to chance.

A step: a token-sized knob is multiplied or divided by TOKEN_STEP (its range is searched on a log
scale); another integer knob moves by 1; a real knob (a threshold) by a tenth of its range; the
overlap share by OVERLAP_STEP; a choice, a flag or hybrid retrieval takes each other value; top_k
and neighbours take the next value of the space's list on each side. Hybrid's fusion_k takes each
other value of the space's list, each also with top_k one step down and one step up: a fusion
that ranks better moves the recall-for-IoU trade along top_k, so its gain shows at the top_k
beside the current one (ADR 0139).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from chunklab import retrieval
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
    params = _fusion_with_hybrid(params)  # a trial stored before fusion_k was searched has none
    found: list[dict[str, Any]] = []
    for changes in (*({name: value} for name, value in _moves(space, strategy, params)), *_fusion_moves(space, params)):
        moved = _fusion_with_hybrid({**params, **changes})
        if moved != params and moved not in found:
            found.append(moved)
    return found


def _fusion_with_hybrid(params: dict[str, Any]) -> dict[str, Any]:
    """fusion_k where hybrid is on (the default when a move turned hybrid on), never where it is off."""
    if params.get("hybrid"):
        return {"fusion_k": retrieval.LIMITS.default_fusion_k, **params}
    return {k: v for k, v in params.items() if k != "fusion_k"}


def _fusion_moves(space: spaces.Space, params: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """fusion_k's other values, each alone and with top_k one step each side (hybrid only)."""
    if not params.get("hybrid"):
        return
    for value in space.fusion_k:
        if value == params["fusion_k"]:
            continue
        yield {"fusion_k": value}
        yield from ({"fusion_k": value, "top_k": top_k} for _, top_k in _beside("top_k", params, space.top_k))


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
