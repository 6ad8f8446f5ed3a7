"""Knobs: what a strategy declares it can be set to, and the one codec for their values.

A strategy declares each knob once (name, type, default, description,
bounds, choices, whether it applies at query time) in its own file. The
chunker serves the declarations as KnobSpecs (ListStrategies); the evaluator,
the UI and the CLI read them back with `Knob.from_proto`. Every side then
types, checks and labels values with the same functions below, so a value is
refused with the same words before it is sent as when it arrives, and the
config id that the chunker writes into chunk ids is the one an experiment
predicts.

Rules between two knobs (`RULES`) are declared here by knob name: a knob
name means the same thing in every strategy (chunk_overlap is always tokens
shared with the previous chunk of chunk_size tokens), so wherever a strategy
has both knobs, the rule holds.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chunklab.errors import InvalidArgument
from chunklab.rpc.limits import quoted
from chunklab.v1 import chunker_pb2, common_pb2, evaluator_pb2

INT = chunker_pb2.KNOB_TYPE_INT
DOUBLE = chunker_pb2.KNOB_TYPE_DOUBLE
STRING = chunker_pb2.KNOB_TYPE_STRING
BOOL = chunker_pb2.KNOB_TYPE_BOOL
CHOICE = chunker_pb2.KNOB_TYPE_CHOICE

# The word for each type, as the UI draws inputs by it.
KINDS = {INT: "int", DOUBLE: "double", STRING: "string", BOOL: "bool", CHOICE: "choice"}
# How true and false may be typed (a command line, a grid field).
_TRUE, _FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off")


class KnobError(InvalidArgument, ValueError):
    """A knob value that cannot be used: INVALID_ARGUMENT from a service, a
    ValueError for a form or a command line. The message names the knob as
    strategy.knob and says what it takes; a form reads the parts (`strategy`,
    `knob`, `need`, `given`) to say it beside the field (`for_the_field`)."""

    def __init__(self, message: str, *, strategy: str = "", knob: str = "", need: str = "", given: str | None = None):
        super().__init__(message)
        self.strategy, self.knob, self.need, self.given = strategy, knob, need, given

    @classmethod
    def refusing(cls, strategy: str, knob: str, need: str, given: str | None = None) -> KnobError:
        """ "strategy.knob need, got given": what the knob needs, and what it was given (already labelled)."""
        given_part = f", got {given}" if given is not None else ""
        return cls(f"{strategy}.{knob} {need}{given_part}", strategy=strategy, knob=knob, need=need, given=given)

    def for_the_field(self) -> str:
        """The sentence a form shows beside the knob's field, which already sits under its
        strategy: "chunk_size must be at least 8 tokens; you entered 1.5." """
        if not self.knob:
            return self.message.rstrip(".") + "."
        given_part = f"; you entered {self.given}" if self.given is not None else ""
        return f"{self.knob} {self.need}{given_part}."


# What a knob's numbers count, by knob name: a name means the same in every strategy
# (see RULES), so chunk_size counts tokens wherever it is declared. Names ending in
# _tokens count tokens too.
UNITS = {
    "chunk_size": "tokens",
    "chunk_overlap": "tokens",
    "min_sentences": "sentences",
    "sentences_per_unit": "sentences",
    "window": "units",
    "context_pieces": "pieces",
}

# The smallest value of a size knob that usually retrieves well (ADR 0089), by knob name
# as UNITS. Below it a value is allowed (its hard minimum is the strategy's) but a chunk
# holds less than a sentence of ordinary prose (about 25 words) and loses the context an
# answer needs: a form warns, and a set processed with it does not become the active one
# without the user's consent. Children are matched and their parents sent, so they may be smaller.
SENSIBLE_MIN = {
    "chunk_size": 32,
    "max_tokens": 32,
    "parent_max_tokens": 64,
    "child_max_tokens": 16,
    "piece_tokens": 16,
}


def unit_of(name: str) -> str:
    """What the knob called name counts ("tokens", "sentences"), or "" when it counts nothing."""
    return UNITS.get(name) or ("tokens" if name.endswith("_tokens") else "")


@dataclass(frozen=True)
class KnobWarning:
    """A knob value that is allowed but below its sensible minimum."""

    strategy: str
    knob: str
    value: Any
    sensible_min: float

    def for_the_field(self) -> str:
        """The sentence a form shows beside the field."""
        unit = unit_of(self.knob)
        return (
            f"{self.knob} {label(self.value)} is below {self.sensible_min:g}{' ' + unit if unit else ''}, "
            "the smallest that usually retrieves well: a chunk this small holds less than a sentence "
            "and loses the context an answer needs."
        )

    def __str__(self) -> str:
        return f"{self.strategy}.{self.for_the_field()}"


@dataclass(frozen=True)
class Knob:
    """One knob's declaration; min_value and max_value are inclusive."""

    name: str
    type: int  # chunker_pb2.KnobType
    default: Any
    description: str
    min_value: float | None = None
    max_value: float | None = None
    choices: tuple[str, ...] = ()
    query_time: bool = False

    @property
    def kind(self) -> str:
        """int, double, string, bool or choice."""
        return KINDS.get(self.type, "string")

    @property
    def unit(self) -> str:
        """What its numbers count ("tokens"), or ""."""
        return unit_of(self.name)

    @property
    def sensible_min(self) -> float | None:
        """The smallest value that usually retrieves well (SENSIBLE_MIN), when it is above the hard minimum."""
        sensible = SENSIBLE_MIN.get(self.name)
        if sensible is None or self.type not in (INT, DOUBLE):
            return None
        if self.min_value is not None and sensible <= self.min_value:
            return None
        return sensible

    def warning(self, strategy: str, value: Any) -> KnobWarning | None:
        """A KnobWarning when a usable value is below the knob's sensible minimum."""
        sensible = self.sensible_min
        if sensible is None or not isinstance(value, (int, float)) or isinstance(value, bool) or value >= sensible:
            return None
        return KnobWarning(strategy, self.name, value, sensible)

    def range_text(self) -> str:
        """Its bounds as a form says them: "8 to 8192 tokens; below 64 is warned about"."""
        low, high = (f"{v:g}" if v is not None else None for v in (self.min_value, self.max_value))
        if self.type not in (INT, DOUBLE) or not (low or high):
            return ""
        text = f"{low} to {high}" if low and high else f"at least {low}" if low else f"at most {high}"
        text += f" {self.unit}" if self.unit else ""
        if self.sensible_min is not None:
            text += f"; below {self.sensible_min:g} is warned about"
        return text

    def to_proto(self) -> chunker_pb2.KnobSpec:
        spec = chunker_pb2.KnobSpec(
            name=self.name,
            description=self.description,
            type=self.type,
            default_value=knob_value(self.default),
            choices=list(self.choices),
            query_time=self.query_time,
        )
        if self.min_value is not None:
            spec.min_value = self.min_value
        if self.max_value is not None:
            spec.max_value = self.max_value
        return spec

    @classmethod
    def from_proto(cls, spec: chunker_pb2.KnobSpec) -> Knob:
        return cls(
            name=spec.name,
            type=spec.type,
            default=python_value(spec.default_value),
            description=spec.description,
            min_value=spec.min_value if spec.HasField("min_value") else None,
            max_value=spec.max_value if spec.HasField("max_value") else None,
            choices=tuple(spec.choices),
            query_time=spec.query_time,
        )

    def coerce(self, strategy: str, value: common_pb2.KnobValue | Any) -> Any:
        """The typed value (int, float, bool or str) of a KnobValue or a Python
        value, its type, choices and bounds checked; KnobError when it cannot be
        used. A whole float is taken for an int knob (JSON and gr.Number send
        256.0); a bool is never a number."""
        raw = python_value(value) if isinstance(value, common_pb2.KnobValue) else value

        def refused(need: str, given: str | None) -> KnobError:
            return KnobError.refusing(strategy, self.name, need, given)

        if raw is None:
            raise self._missing(strategy)
        if self.type == INT:
            if isinstance(raw, float) and raw.is_integer():
                raw = int(raw)
            if not isinstance(raw, int) or isinstance(raw, bool):
                raise refused("takes a whole number", quoted(raw))
        elif self.type == DOUBLE:
            if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
                raise refused("takes a number", quoted(raw))
            raw = float(raw)
        elif self.type == BOOL:
            if not isinstance(raw, bool):
                raise refused("takes true or false", quoted(raw))
        elif self.choices and raw not in self.choices:
            raise refused(f"must be one of {', '.join(self.choices)}", quoted(raw))
        elif not isinstance(raw, str):
            raise refused("takes text", quoted(raw))
        if self.type not in (INT, DOUBLE):
            return raw
        unit = f" {self.unit}" if self.unit else ""
        if self.min_value is not None and raw < self.min_value:
            raise refused(f"must be at least {self.min_value:g}{unit}", label(raw))
        if self.max_value is not None and raw > self.max_value:
            raise refused(f"must be at most {self.max_value:g}{unit}", label(raw))
        return raw

    def _missing(self, strategy: str) -> KnobError:
        return KnobError(
            f"{strategy}.{self.name} has no value; give one, or leave the knob out for its default {label(self.default)}",
            strategy=strategy,
            knob=self.name,
            need=f"has no value; give one, or leave it empty for its default {label(self.default)}",
        )

    def summary(self) -> str:
        """One line for a listing (`chunklab strategies`): name=default and what it takes."""
        takes = {INT: "whole number", DOUBLE: "number", BOOL: "true or false"}.get(self.type, "text")
        if self.choices:
            takes = "one of " + ", ".join(self.choices)
        low, high = (f"{v:g}" if v is not None else None for v in (self.min_value, self.max_value))
        if self.type in (INT, DOUBLE) and (low or high):
            takes += f" {low}–{high}" if low and high else f" from {low}" if low else f" up to {high}"
        if self.sensible_min is not None:
            takes += f", usually at least {self.sensible_min:g}"
        when = ", at query time" if self.query_time else ""
        return f"{self.name}={label(self.default)} ({takes}{when})"

    def parse(self, strategy: str, text: str) -> Any:
        """The typed value of typed text ("256", "0.5", "true", "article"), checked as coerce does."""
        if self.type == STRING:
            return self.coerce(strategy, text)
        raw: Any = text.strip()
        if self.type == BOOL:
            lowered = raw.lower()
            raw = True if lowered in _TRUE else False if lowered in _FALSE else raw
        else:
            for number in (int, float):
                try:
                    raw = number(raw)
                    break
                except ValueError:
                    pass  # not this kind of number: the text is tried as the next kind, else kept; coerce judges it
        return self.coerce(strategy, raw)

    def parse_values(self, strategy: str, text: str | None) -> list[Any]:
        """Comma-separated values to try ("250, 500"), each without its surrounding spaces; [] when there is none."""
        return [self.parse(strategy, piece.strip()) for piece in (text or "").split(",") if piece.strip()]


def python_value(value: common_pb2.KnobValue) -> Any:
    """The int, float, str or bool a KnobValue holds; None when it holds none."""
    kind = value.WhichOneof("kind")
    return getattr(value, kind) if kind else None


def knob_value(value: Any) -> common_pb2.KnobValue:
    """python_value's inverse: the KnobValue of the value's own kind (None: an empty one)."""
    if value is None:
        return common_pb2.KnobValue()
    if isinstance(value, bool):
        return common_pb2.KnobValue(bool_value=value)
    if isinstance(value, int):
        return common_pb2.KnobValue(int_value=value)
    if isinstance(value, float):
        return common_pb2.KnobValue(double_value=value)
    return common_pb2.KnobValue(string_value=str(value))


def label(value: common_pb2.KnobValue | Any) -> str:
    """How a value is written in run keys and tables: true/false, 0.5, 256, article ("" for none)."""
    raw = python_value(value) if isinstance(value, common_pb2.KnobValue) else value
    if raw is None:
        return ""
    if isinstance(raw, bool):
        return "true" if raw else "false"
    return f"{raw:g}" if isinstance(raw, float) else str(raw)


def to_spec(strategy: str, values: Mapping[str, Any]) -> common_pb2.StrategySpec:
    """A StrategySpec from Python values (or KnobValues, kept as they are)."""
    return common_pb2.StrategySpec(
        name=strategy,
        knobs={
            name: value if isinstance(value, common_pb2.KnobValue) else knob_value(value)
            for name, value in values.items()
        },
    )


def spec_to_dict(spec: common_pb2.StrategySpec) -> dict:
    """{"name": ..., "knobs": {name: value}} with the knobs that hold a value, for JSON storage."""
    knobs = {name: python_value(value) for name, value in spec.knobs.items()}
    return {"name": spec.name, "knobs": {name: value for name, value in knobs.items() if value is not None}}


def dict_to_spec(spec: Mapping) -> common_pb2.StrategySpec:
    """spec_to_dict's inverse (booleans, whole numbers, numbers and text keep their kinds)."""
    return to_spec(spec.get("name", ""), spec.get("knobs", {}))


def from_info(info: chunker_pb2.StrategyInfo) -> tuple[Knob, ...]:
    """A strategy's knob declarations as ListStrategies serves them."""
    return tuple(Knob.from_proto(spec) for spec in info.knobs)


def find(strategy: str, knobs: Sequence[Knob], name: str) -> Knob:
    """The knob called name; KnobError naming the strategy's knobs when there is none."""
    for knob in knobs:
        if knob.name == name:
            return knob
    raise KnobError(
        f"{strategy} has no knob {quoted(name)}; its knobs are {', '.join(k.name for k in knobs) or 'none'}",
        strategy=strategy,
    )


@dataclass(frozen=True)
class Rule:
    """Wherever a strategy has both knobs, `knob` must be smaller than `limit`
    (strict) or at most `limit`."""

    knob: str
    limit: str
    strict: bool

    def check(self, strategy: str, values: Mapping[str, Any]) -> None:
        value, limit = values.get(self.knob), values.get(self.limit)
        if value is None or limit is None:
            return
        if value >= limit if self.strict else value > limit:
            relation = "smaller than" if self.strict else "at most"
            raise KnobError.refusing(
                strategy, self.knob, f"must be {relation} {self.limit} ({label(limit)})", label(value)
            )


RULES = (
    Rule("chunk_overlap", "chunk_size", strict=True),
    Rule("min_tokens", "max_tokens", strict=True),
    Rule("child_max_tokens", "parent_max_tokens", strict=False),
    Rule("piece_tokens", "max_tokens", strict=False),
)


def resolve(strategy: str, knobs: Sequence[Knob], given: Mapping[str, Any]) -> dict[str, Any]:
    """Every knob's typed value: the given ones (KnobValues or Python values)
    coerced, the others at their defaults, the RULES checked; KnobError for an
    unknown knob or a value that cannot be used."""
    for name in sorted(given):
        find(strategy, knobs, name)
    values = {k.name: k.coerce(strategy, given[k.name]) if k.name in given else k.default for k in knobs}
    for rule in RULES:
        rule.check(strategy, values)
    return values


def warnings(strategy: str, knobs: Sequence[Knob], values: Mapping[str, Any]) -> list[KnobWarning]:
    """The warnings of resolved values (resolve's result): each knob below its sensible minimum."""
    found = (knob.warning(strategy, values.get(knob.name)) for knob in knobs)
    return [warning for warning in found if warning is not None]


def spec_warnings(infos: Sequence[chunker_pb2.StrategyInfo], specs: Sequence[common_pb2.StrategySpec]) -> list:
    """The KnobWarnings of checked specs (a command line's), their strategies' declarations from ListStrategies."""
    declared = {info.name: from_info(info) for info in infos}
    found = []
    for spec in specs:
        strategy_knobs = declared.get(spec.name, ())
        found += warnings(spec.name, strategy_knobs, resolve(spec.name, strategy_knobs, dict(spec.knobs)))
    return found


def config_id(strategy: str, knobs: Sequence[Knob], values: Mapping[str, Any]) -> str:
    """The id of one chunking configuration: a short hash of the strategy and
    its knob values, query-time knobs left out (they change what a query
    returns, not the chunks) and missing ones at their defaults. The same
    values in any order give the same id; chunk ids carry it."""
    chunking = {k.name: values.get(k.name, k.default) for k in knobs if not k.query_time}
    canonical = json.dumps({"strategy": strategy, "knobs": chunking}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def run_key(strategy: str, chosen: Mapping[str, Any]) -> str:
    """An experiment run's name: the strategy and the values its grid chose, e.g. fixed_size[chunk_size=256]."""
    labels = ",".join(f"{name}={label(value)}" for name, value in chosen.items())
    return f"{strategy}[{labels}]" if labels else strategy


@dataclass(frozen=True)
class Combination:
    """One cell of a strategy's knob grid."""

    run_key: str
    chosen: dict[str, Any]  # the values the grid set, in the grid's order
    values: dict[str, Any]  # every knob, defaults filled in


def combinations(strategy: str, knobs: Sequence[Knob], axes: Sequence[tuple[str, Sequence[Any]]]) -> list[Combination]:
    """The cartesian product of a grid's axes ((knob name, values to try)),
    each cell checked as one run would be; KnobError for an unknown or
    repeated knob, an axis without values, or a cell whose values break a rule."""
    typed: list[tuple[str, list[Any]]] = []
    for name, values in axes:
        knob = find(strategy, knobs, name)
        if any(name == seen for seen, _ in typed):
            raise KnobError(f"{strategy}.{name} appears twice in the grid; list its values once")
        if not values:
            raise KnobError(f"{strategy}.{name} has no values to try")
        typed.append((name, [knob.coerce(strategy, value) for value in values]))
    cells = []
    for combination in itertools.product(*(values for _, values in typed)):
        chosen = dict(zip((name for name, _ in typed), combination))
        key = run_key(strategy, chosen)
        try:
            values = resolve(strategy, knobs, chosen)
        except KnobError as exc:
            raise KnobError(
                f"{key}: {exc.message}", strategy=exc.strategy, knob=exc.knob, need=exc.need, given=exc.given
            ) from None
        cells.append(Combination(key, chosen, values))
    return cells


def strategy_grid(
    strategy: str, knobs: Sequence[Knob], axes: Sequence[tuple[str, Sequence[Any]]]
) -> evaluator_pb2.StrategyGrid:
    """The StrategyGrid of a grid's axes, once every cell is checked as the evaluator will check it."""
    combinations(strategy, knobs, axes)
    return evaluator_pb2.StrategyGrid(
        strategy=strategy,
        grid=[evaluator_pb2.KnobGrid(knob=name, values=[knob_value(v) for v in values]) for name, values in axes],
    )
