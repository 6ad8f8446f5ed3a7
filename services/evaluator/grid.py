"""From an experiment's strategy grids to its runs (grid cells).

Each strategy's knob grid expands to the cartesian product of its values;
knobs left out take the strategy's defaults. Values are checked against the
chunker's ListStrategies (types, bounds, choices) before anything runs, so
a typo fails the experiment up front rather than half-way.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from chunklab import ids
from chunklab.errors import InvalidArgument
from chunklab.v1 import chunker_pb2, common_pb2, evaluator_pb2

MAX_RUNS = 200


@dataclass
class Cell:
    run_key: str
    spec: common_pb2.StrategySpec  # every knob, defaults filled in
    info: chunker_pb2.StrategyInfo
    window: int | None  # query-time window for the retriever, if any
    config_id: str  # as the chunker computes it (query-time knobs left out)


def python_value(value: common_pb2.KnobValue) -> Any:
    kind = value.WhichOneof("kind")
    return getattr(value, kind) if kind else None


def _coerce(strategy: str, knob: chunker_pb2.KnobSpec, value: common_pb2.KnobValue) -> common_pb2.KnobValue:
    """The value as the chunker will read it; InvalidArgument when it cannot be."""
    raw = python_value(value)
    where = f"{strategy}.{knob.name}"
    if knob.type == chunker_pb2.KNOB_TYPE_INT:
        if isinstance(raw, float) and raw.is_integer():
            raw = int(raw)
        if not isinstance(raw, int) or isinstance(raw, bool):
            raise InvalidArgument(f"{where} takes a whole number, got {raw!r}")
        out = common_pb2.KnobValue(int_value=raw)
    elif knob.type == chunker_pb2.KNOB_TYPE_DOUBLE:
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            raise InvalidArgument(f"{where} takes a number, got {raw!r}")
        raw = float(raw)
        out = common_pb2.KnobValue(double_value=raw)
    elif knob.type == chunker_pb2.KNOB_TYPE_BOOL:
        if not isinstance(raw, bool):
            raise InvalidArgument(f"{where} takes true or false, got {raw!r}")
        out = common_pb2.KnobValue(bool_value=raw)
    else:
        if not isinstance(raw, str):
            raise InvalidArgument(f"{where} takes text, got {raw!r}")
        if knob.choices and raw not in knob.choices:
            raise InvalidArgument(f"{where} must be one of {', '.join(knob.choices)}, got {raw!r}")
        out = common_pb2.KnobValue(string_value=raw)
    if knob.HasField("min_value") and raw < knob.min_value:
        raise InvalidArgument(f"{where} must be at least {knob.min_value:g}, got {raw}")
    if knob.HasField("max_value") and raw > knob.max_value:
        raise InvalidArgument(f"{where} must be at most {knob.max_value:g}, got {raw}")
    return out


def _label(value: common_pb2.KnobValue) -> str:
    raw = python_value(value)
    return ("true" if raw else "false") if isinstance(raw, bool) else f"{raw:g}" if isinstance(raw, float) else str(raw)


def expand(
    grids: list[evaluator_pb2.StrategyGrid], infos: list[chunker_pb2.StrategyInfo], window: int | None
) -> list[Cell]:
    """Every cell of every strategy's grid, in the order given."""
    if not grids:
        raise InvalidArgument("name at least one strategy to run")
    by_name = {info.name: info for info in infos}
    cells: list[Cell] = []
    for grid in grids:
        info = by_name.get(grid.strategy)
        if info is None:
            raise InvalidArgument(f"unknown strategy {grid.strategy!r}; available: {', '.join(by_name)}")
        knobs = {k.name: k for k in info.knobs}
        axes: list[tuple[str, list[common_pb2.KnobValue]]] = []
        for axis in grid.grid:
            if axis.knob not in knobs:
                raise InvalidArgument(
                    f"{info.name} has no knob {axis.knob!r}; its knobs are {', '.join(knobs) or 'none'}"
                )
            if any(axis.knob == name for name, _ in axes):
                raise InvalidArgument(f"{info.name}.{axis.knob} appears twice in the grid; list its values once")
            if not axis.values:
                raise InvalidArgument(f"{info.name}.{axis.knob} has no values to try")
            axes.append((axis.knob, [_coerce(info.name, knobs[axis.knob], v) for v in axis.values]))
        for combination in itertools.product(*(values for _, values in axes)):
            chosen = dict(zip((name for name, _ in axes), combination))
            spec = common_pb2.StrategySpec(name=info.name)
            for name, knob in knobs.items():
                spec.knobs[name].CopyFrom(chosen.get(name, knob.default_value))
            label = ",".join(f"{name}={_label(value)}" for name, value in chosen.items())
            run_key = f"{info.name}[{label}]" if label else info.name
            cell_window = window
            for name, knob in knobs.items():
                if knob.query_time and name == "window" and name in chosen:
                    cell_window = int(python_value(chosen[name]))
            chunking = {n: python_value(spec.knobs[n]) for n, k in knobs.items() if not k.query_time}
            cells.append(Cell(run_key, spec, info, cell_window, ids.config_id(info.name, chunking)))
    keys = [c.run_key for c in cells]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise InvalidArgument(f"the grid names the same run twice: {', '.join(repeated)}")
    if len(cells) > MAX_RUNS:
        raise InvalidArgument(f"the grids make {len(cells)} runs; at most {MAX_RUNS} per experiment")
    return cells
