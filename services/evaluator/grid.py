"""From an experiment's strategy grids to its runs (grid cells).

Each strategy's knob grid expands to the cartesian product of its values;
knobs left out take the strategy's defaults. Values are checked against the
chunker's ListStrategies (types, bounds, choices, the rules between knobs)
by chunklab.knobs before anything runs, so a typo fails the experiment up
front rather than half-way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from chunklab import knobs
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


def expand(
    grids: list[evaluator_pb2.StrategyGrid], infos: list[chunker_pb2.StrategyInfo], window: int | None
) -> list[Cell]:
    """Every cell of every strategy's grid, in the order given."""
    if not grids:
        raise InvalidArgument("name at least one strategy to run")
    runs = sum(math.prod(len(axis.values) for axis in grid.grid) for grid in grids)
    if runs > MAX_RUNS:
        raise InvalidArgument(f"the grids make {runs} runs; at most {MAX_RUNS} per experiment")
    by_name = {info.name: info for info in infos}
    cells: list[Cell] = []
    for grid in grids:
        info = by_name.get(grid.strategy)
        if info is None:
            raise InvalidArgument(f"unknown strategy {grid.strategy!r}; available: {', '.join(by_name)}")
        declared = knobs.from_info(info)
        axes = [(axis.knob, list(axis.values)) for axis in grid.grid]
        for cell in knobs.combinations(info.name, declared, axes):
            cell_window = window
            if "window" in cell.chosen and knobs.find(info.name, declared, "window").query_time:
                cell_window = int(cell.chosen["window"])
            cells.append(Cell(cell.run_key, knobs.to_spec(info.name, cell.values), info, cell_window,
                              knobs.config_id(info.name, declared, cell.values)))
    keys = [c.run_key for c in cells]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise InvalidArgument(f"the grid names the same run twice: {', '.join(repeated)}")
    return cells
