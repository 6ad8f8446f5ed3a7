"""What the commands share in reading their flags: the usage error, and one syntax
for knob values in every command (ADR 0075):

    --knob strategy.knob=value           one value (load, export snippet)
    --grid strategy.knob=value1,value2   values to try (experiment)

`strategy.` may be left out when the command names exactly one strategy
(`--strategy fixed_size --knob chunk_size=256`); a strategy the command does not
name is refused.
"""

from __future__ import annotations

from collections.abc import Sequence

from chunklab import knobs
from chunklab.v1 import chunker_pb2, common_pb2, evaluator_pb2


class UsageError(Exception):
    """A command line that cannot work; the message says why."""


def knob_setting(item: str, strategies: Sequence[str], option: str = "--knob") -> tuple[str, str, str]:
    """(strategy, knob, values) of one `[strategy.]knob=values` flag, the strategy one of the
    command's `strategies` (its only one when the flag names none); values as typed."""
    form = "strategy.knob=value" if option == "--knob" else "strategy.knob=value1,value2"
    target, sep, values = item.partition("=")
    strategy, dot, knob = target.strip().rpartition(".")
    if not sep or not knob or not values.strip() or (dot and not strategy):
        raise UsageError(f"{option} {item!r}: write {form}")
    if not dot:
        if len(strategies) != 1:
            raise UsageError(
                f"{option} {item!r}: write {form}: the command names "
                f"{len(strategies)} strategies ({', '.join(strategies)})"
            )
        strategy = strategies[0]
    elif strategy not in strategies:
        raise UsageError(f"{option} {item!r}: the command names --strategy {', '.join(strategies)}, not {strategy}")
    return strategy, knob, values


def strategy_grids(
    names: list[str], grids: list[str], infos: list[chunker_pb2.StrategyInfo], option: str = "--grid"
) -> list[evaluator_pb2.StrategyGrid]:
    """--strategy names (or "all") and --grid strategy.knob=v1,v2 into StrategyGrids, every
    value and every cell checked as the evaluator will check it."""
    by_name = {info.name: info for info in infos}
    if names == ["all"]:
        names = list(by_name)
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise UsageError(f"unknown strategy {', '.join(unknown)}; the chunker offers {', '.join(by_name)}")
    declared = {name: knobs.from_info(by_name[name]) for name in names}
    axes: dict[str, list[tuple[str, list]]] = {name: [] for name in names}
    for item in grids:
        strategy, knob_name, values = knob_setting(item, names, option)
        try:
            knob = knobs.find(strategy, declared[strategy], knob_name)
            axes[strategy].append((knob_name, knob.parse_values(strategy, values)))
        except knobs.KnobError as exc:
            raise UsageError(f"{option} {item!r}: {exc.message}") from None
    out = []
    for strategy, strategy_axes in axes.items():
        try:
            out.append(knobs.strategy_grid(strategy, declared[strategy], strategy_axes))
        except knobs.KnobError as exc:
            raise UsageError(f"{option}: {exc.message}") from None
    return out


def strategy_specs(
    names: list[str], settings: list[str], infos: list[chunker_pb2.StrategyInfo]
) -> list[common_pb2.StrategySpec]:
    """--strategy names (or "all") and --knob strategy.knob=value into StrategySpecs (one configuration each)."""
    for setting in settings:
        if "," in setting.partition("=")[2]:
            raise UsageError(f"--knob {setting!r}: give one value (a --knob sets one configuration)")
    specs = []
    for grid in strategy_grids(names, settings, infos, option="--knob"):
        spec = common_pb2.StrategySpec(name=grid.strategy)
        for knob in grid.grid:
            spec.knobs[knob.knob].CopyFrom(knob.values[0])
        specs.append(spec)
    return specs
