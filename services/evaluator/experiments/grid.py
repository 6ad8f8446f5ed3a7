"""From an experiment's strategy grids to its runs (grid cells).

Each strategy's knob grid expands to the cartesian product of its values;
knobs left out take the strategy's defaults. The runs are counted from the
grids' shape alone (`check_size`: the product of each grid's value counts)
and refused over MAX_RUNS before any cell is built, so a grid of a million
cells costs what a grid of one does. Values are then checked against the
chunker's ListStrategies (types, bounds, choices, the rules between knobs) by
chunklab.knobs before anything runs, so a typo fails the experiment up front
rather than half-way.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from chunklab import knobs
from chunklab.errors import InvalidArgument
from chunklab.rpc.limits import excerpt
from chunklab.v1 import chunker_pb2, common_pb2, evaluator_pb2

MAX_RUNS = 200
# Knobs one grid may set (each at most once); no strategy declares nearly as many.
MAX_AXES = 32


@dataclass
class Cell:
    run_key: str
    spec: common_pb2.StrategySpec  # every knob, defaults filled in
    info: chunker_pb2.StrategyInfo
    window: int | None  # query-time window for the retriever, if any
    config_id: str  # as the chunker computes it (query-time knobs left out)


def check_size(grids: Sequence[evaluator_pb2.StrategyGrid]) -> int:
    """The number of runs the grids make, counted without building a cell (a grid
    makes the product of its axes' value counts); InvalidArgument over MAX_RUNS.
    Its cost grows with the number of grids and axes, both capped, never with the
    number of cells."""
    if len(grids) > MAX_RUNS:
        raise InvalidArgument(
            f"the experiment names {len(grids)} strategy grids, each at least one run; "
            f"at most {MAX_RUNS} runs per experiment"
        )
    runs = 0
    for grid in grids:
        if len(grid.grid) > MAX_AXES:
            raise InvalidArgument(
                f"the {excerpt(grid.strategy)!r} grid sets {len(grid.grid)} knobs; "
                f"a grid sets each knob once, at most {MAX_AXES}"
            )
        for axis in grid.grid:
            if not axis.values:
                raise InvalidArgument(f"{excerpt(grid.strategy)}.{excerpt(axis.knob)} has no values to try")
        runs += math.prod(len(axis.values) for axis in grid.grid)
    if runs > MAX_RUNS:
        raise InvalidArgument(f"the grids make {runs:,} runs; at most {MAX_RUNS} per experiment")
    return runs


def strategy_info(name: str, infos: Sequence[chunker_pb2.StrategyInfo]) -> chunker_pb2.StrategyInfo:
    """The chunker's StrategyInfo called name; InvalidArgument naming the available ones."""
    for info in infos:
        if info.name == name:
            return info
    raise InvalidArgument(f"unknown strategy {excerpt(name)!r}; available: {', '.join(i.name for i in infos)}")


def expand(
    grids: list[evaluator_pb2.StrategyGrid], infos: list[chunker_pb2.StrategyInfo], window: int | None
) -> list[Cell]:
    """Every cell of every strategy's grid, in the order given."""
    if not grids:
        raise InvalidArgument("name at least one strategy to run")
    check_size(grids)
    cells: list[Cell] = []
    for grid in grids:
        info = strategy_info(grid.strategy, infos)
        declared = knobs.from_info(info)
        axes = [(axis.knob, list(axis.values)) for axis in grid.grid]
        for cell in knobs.combinations(info.name, declared, axes):
            cell_window = window
            if "window" in cell.chosen and knobs.find(info.name, declared, "window").query_time:
                cell_window = int(cell.chosen["window"])
            cells.append(
                Cell(
                    cell.run_key,
                    knobs.to_spec(info.name, cell.values),
                    info,
                    cell_window,
                    knobs.config_id(info.name, declared, cell.values),
                )
            )
    counts = Counter(c.run_key for c in cells)
    repeated = sorted(key for key, count in counts.items() if count > 1)
    if repeated:
        raise InvalidArgument(f"the grid names the same run twice: {', '.join(repeated)}")
    return cells
