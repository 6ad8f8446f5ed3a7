"""Strategy forms built from ChunkerService.ListStrategies, and their values turned back into StrategySpecs.

The chunker declares each knob (type, default, bounds, choices); the UI reads
the declarations with chunklab.knobs, so a new strategy or knob shows up
without a UI change, and a value is checked (types, bounds, choices, the rules
between knobs) by the same code before it is sent as when it arrives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chunklab import knobs
from chunklab.knobs import Knob
from chunklab.v1 import chunker_pb2, common_pb2
from chunklab_app import recommended

# The spec's baseline strategy: ticked and chosen by default where it exists.
BASELINE = recommended.BASELINE

# Keyword arguments for every gr.render in the app. Gradio 6.31 runs renders
# without a concurrency limit, and two renders of one session running at once
# can draw the same event id (BlocksConfig.set_event_trigger reads and bumps
# its counter without a lock): one page's button then loses its handler ("No
# endpoint matching N"). All pages load together, so their renders are queued
# one at a time under one concurrency id.
RENDER_ONE_AT_A_TIME = {"concurrency_limit": 1, "concurrency_id": "chunklab-render"}


def ticked_first(name: str) -> bool:
    """Whether the experiment and Process forms tick the strategy at first: the ones
    docs/benchmarks.md recommends and the baseline to compare them against
    (chunklab_app.recommended.FIRST_STRATEGIES, which the Query page opens on too)."""
    return name in recommended.FIRST_STRATEGIES


@dataclass(frozen=True)
class KnobField:
    """One knob input of a strategy's form (plain data, safe to keep in gr.State)."""

    strategy: str
    knob: Knob

    @property
    def name(self) -> str:
        return self.knob.name

    @property
    def type(self) -> str:
        """int, double, string, bool or choice: which input to draw."""
        return self.knob.kind

    @property
    def default(self) -> Any:
        return self.knob.default

    @property
    def description(self) -> str:
        return self.knob.description

    @property
    def minimum(self) -> float | None:
        return self.knob.min_value

    @property
    def maximum(self) -> float | None:
        return self.knob.max_value

    @property
    def choices(self) -> tuple[str, ...]:
        return self.knob.choices

    @property
    def elem_id(self) -> str:
        return f"knob-{self.strategy}-{self.name}"

    def value(self, raw: Any) -> Any:
        """The typed value of one input; None when left empty (the strategy's default applies).
        Raises KnobError (a ValueError) saying what the knob takes."""
        if raw is None or (isinstance(raw, str) and not raw.strip() and self.type != "string"):
            return None
        return self.knob.parse(self.strategy, raw) if isinstance(raw, str) else self.knob.coerce(self.strategy, raw)


@dataclass(frozen=True)
class StrategyForm:
    name: str
    description: str
    requires_llm: bool
    fields: tuple[KnobField, ...]  # the knobs drawn, in the order of their inputs
    knobs: tuple[Knob, ...]  # every knob the strategy declares (the rules between knobs need them all)

    @property
    def elem_id(self) -> str:
        return f"strategy-{self.name}"


def strategy_forms(infos: list[chunker_pb2.StrategyInfo], include_query_time: bool = False) -> list[StrategyForm]:
    """One form per strategy with its chunking-time knobs.

    Query-time knobs (e.g. a sentence window) belong to the query, not to
    processing, so they are left out here, except for experiment grids,
    which may vary them too (include_query_time).
    """
    forms = []
    for info in infos:
        declared = knobs.from_info(info)
        fields = tuple(KnobField(info.name, k) for k in declared if include_query_time or not k.query_time)
        forms.append(StrategyForm(info.name, info.description, info.requires_llm, fields, declared))
    return forms


def strategy_spec(form: StrategyForm, values: list[Any]) -> common_pb2.StrategySpec:
    """The spec for one run: values in the order of form.fields; empty inputs are left out.
    Raises KnobError (a ValueError) for a value the chunker would refuse."""
    given = {}
    for field, raw in zip(form.fields, values, strict=True):
        value = field.value(raw)
        if value is not None:
            given[field.name] = value
    knobs.resolve(form.name, form.knobs, given)
    return knobs.to_spec(form.name, given)
