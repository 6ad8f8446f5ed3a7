"""What a strategy form says beside its fields (ADR 0089): a value the chunker would refuse,
named by its knob with what it needs and what was entered, and a value that is allowed but
below its sensible minimum (chunklab.knobs.SENSIBLE_MIN). The notes stay under the form until
the value is fixed; the limits and the words are chunklab.knobs' own, so the form, the CLI and
the chunker refuse the same values. No Gradio here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from chunklab import knobs
from chunklab.knobs import KnobError, KnobWarning
from chunklab.v1 import common_pb2
from chunklab.views.render import render
from frontend.forms.knobs import StrategyForm

# Said in the process status when a refusal keeps a run from starting.
FIX_THE_FIELDS = "Not processed: fix the values marked under the strategies above."


@dataclass(frozen=True)
class Note:
    knob: str  # "" when the note is about the form as a whole
    sentence: str
    level: str  # error or warning


@dataclass
class CheckedForm:
    """One ticked strategy's values checked: its spec when they can be used, and its notes."""

    strategy: str
    spec: common_pb2.StrategySpec | None = None
    notes: list[Note] = field(default_factory=list)
    warnings: list[KnobWarning] = field(default_factory=list)

    @property
    def refused(self) -> bool:
        return any(note.level == "error" for note in self.notes)


def check_form(form: StrategyForm, values: Sequence[Any]) -> CheckedForm:
    """Every field of the form checked on its own (so each bad field is named, not only the
    first), then the rules between knobs, then the sensible minimums."""
    checked = CheckedForm(form.name)
    given = {}
    for knob_field, raw in zip(form.fields, values, strict=True):
        try:
            value = knob_field.value(raw)
        except KnobError as exc:
            checked.notes.append(Note(knob_field.name, exc.for_the_field(), "error"))
            continue
        if value is not None:
            given[knob_field.name] = value
    if checked.notes:
        return checked
    try:
        resolved = knobs.resolve(form.name, form.knobs, given)
    except KnobError as exc:
        checked.notes.append(Note(exc.knob, exc.for_the_field(), "error"))
        return checked
    checked.spec = knobs.to_spec(form.name, given)
    checked.warnings = knobs.warnings(form.name, form.knobs, resolved)
    checked.notes.extend(Note(w.knob, w.for_the_field(), "warning") for w in checked.warnings)
    return checked


def notes_html(checked: CheckedForm | None) -> str:
    """The notes under one strategy's fields; empty when there are none (or it is not ticked)."""
    if checked is None or not checked.notes:
        return ""
    return render("frontend", "field_notes.html.j2", strategy=checked.strategy, notes=checked.notes)


def kept_current_sentence(warned: Sequence[KnobWarning]) -> str:
    """What the status adds when sets were indexed beside the active ones because of warnings."""
    values = ", ".join(f"{w.strategy} {w.knob}={knobs.label(w.value)}" for w in warned)
    return (
        f"Indexed beside the active sets, which stay as they were: {values} is below its sensible minimum. "
        "To search it, choose it under “Index set” and press “Make active”, or tick "
        "“Make the new sets active anyway” and process again."
    )


def bulk_refused_sentence(warned: Sequence[KnobWarning]) -> str:
    values = ", ".join(f"{w.strategy} {w.knob}={knobs.label(w.value)}" for w in warned)
    return (
        f"Not loaded: a bulk load makes every set it indexes the active one, and {values} is below its "
        "sensible minimum. Raise it, or tick “Make the new sets active anyway”."
    )
