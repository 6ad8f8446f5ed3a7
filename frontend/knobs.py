"""Strategy forms built from ChunkerService.ListStrategies, and their values turned back into StrategySpecs.

The chunker describes each knob (type, default, bounds, choices); the UI only
mirrors that description, so a new strategy or knob shows up without a UI
change. Range checks stay with the chunker, which says what was wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chunklab.v1 import chunker_pb2, common_pb2

# The spec's baseline strategy: ticked and chosen by default where it exists.
BASELINE = "fixed_size"

_TYPES = {
    chunker_pb2.KNOB_TYPE_INT: "int",
    chunker_pb2.KNOB_TYPE_DOUBLE: "double",
    chunker_pb2.KNOB_TYPE_STRING: "string",
    chunker_pb2.KNOB_TYPE_BOOL: "bool",
    chunker_pb2.KNOB_TYPE_CHOICE: "choice",
}


@dataclass(frozen=True)
class KnobField:
    """What the UI needs to draw one knob input (plain data, safe to keep in gr.State)."""

    strategy: str
    name: str
    type: str  # int, double, string, bool or choice
    default: Any
    description: str = ""
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()

    @property
    def elem_id(self) -> str:
        return f"knob-{self.strategy}-{self.name}"


@dataclass(frozen=True)
class StrategyForm:
    name: str
    description: str
    requires_llm: bool
    fields: tuple[KnobField, ...]

    @property
    def elem_id(self) -> str:
        return f"strategy-{self.name}"


def _default(value: common_pb2.KnobValue) -> Any:
    kind = value.WhichOneof("kind")
    return getattr(value, kind) if kind else None


def knob_field(strategy: str, spec: chunker_pb2.KnobSpec) -> KnobField:
    return KnobField(
        strategy=strategy,
        name=spec.name,
        type=_TYPES.get(spec.type, "string"),
        default=_default(spec.default_value),
        description=spec.description,
        minimum=spec.min_value if spec.HasField("min_value") else None,
        maximum=spec.max_value if spec.HasField("max_value") else None,
        choices=tuple(spec.choices),
    )


def strategy_forms(infos: list[chunker_pb2.StrategyInfo], include_query_time: bool = False) -> list[StrategyForm]:
    """One form per strategy with its chunking-time knobs.

    Query-time knobs (e.g. a sentence window) belong to the query, not to
    processing, so they are left out here, except for experiment grids,
    which may vary them too (include_query_time).
    """
    return [
        StrategyForm(
            name=info.name,
            description=info.description,
            requires_llm=info.requires_llm,
            fields=tuple(knob_field(info.name, k) for k in info.knobs if include_query_time or not k.query_time),
        )
        for info in infos
    ]


def knob_value(field: KnobField, raw: Any) -> common_pb2.KnobValue | None:
    """The typed value of one input; None when left empty (the strategy's default applies)."""
    if raw is None or (isinstance(raw, str) and not raw.strip() and field.type != "string"):
        return None
    where = f"{field.strategy}.{field.name}"
    if field.type == "int":
        number = float(raw)
        if not number.is_integer():
            raise ValueError(f"{where} takes a whole number, got {raw}")
        return common_pb2.KnobValue(int_value=int(number))
    if field.type == "double":
        return common_pb2.KnobValue(double_value=float(raw))
    if field.type == "bool":
        return common_pb2.KnobValue(bool_value=bool(raw))
    return common_pb2.KnobValue(string_value=str(raw))


def strategy_spec(form: StrategyForm, values: list[Any]) -> common_pb2.StrategySpec:
    """The spec for one run: values in the order of form.fields; empty inputs are left out."""
    spec = common_pb2.StrategySpec(name=form.name)
    for field, raw in zip(form.fields, values, strict=True):
        value = knob_value(field, raw)
        if value is not None:
            spec.knobs[field.name].CopyFrom(value)
    return spec
