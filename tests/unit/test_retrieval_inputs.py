"""The UI's retrieval inputs come from chunklab.retrieval.SETTINGS (ADR 0078), as the
command line's flags do: every setting is a box on the Query page and on the experiment
form, or drawn elsewhere by name; what a box holds reaches the RetrievalOptions each page
sends; and the bounded ones take the retriever's served limits."""

from __future__ import annotations

import gradio as gr
import pytest

from chunklab import retrieval
from chunklab.client import ClientError
from chunklab.settings import Settings
from chunklab.v1 import common_pb2, evaluator_pb2
from frontend.forms import retrieval as forms
from frontend.pages import experiments, query
from frontend.pages.experiments.experiment_form import RunSettings
from frontend.pages.query import answer_html
from frontend.pages.query.query_form import form_options


class Down:
    """A gateway whose every call fails as an unreachable service does (the pages still build)."""

    settings = Settings()

    def __getattr__(self, name):
        def call(*_args, **_kwargs):
            raise ClientError("the service is out of reach")

        return call


# A value for each kind of box, other than the box's own start, and what it is sent as.
TYPED = {bool: (True, True), int: (3, 3), float: (0.25, 0.25), str: ("x", "x")}


def typed(setting: retrieval.Setting):
    if setting.kind is int and setting.optional:
        return "2", 2
    if setting.kind is bool:
        return not forms.VALUES.get(setting.path, False), not forms.VALUES.get(setting.path, False)
    return TYPED[setting.kind]


def elem_ids(page: gr.Blocks) -> set[str]:
    return {b.elem_id for b in page.blocks.values() if getattr(b, "elem_id", None)}


def test_every_setting_is_a_box_of_the_row_or_drawn_elsewhere_by_name():
    row = {s.path for s in forms.ROW}
    for setting in retrieval.SETTINGS:
        assert (setting.path in row) != (setting.names_a_set or setting.path.startswith(forms.ELSEWHERE)), setting.path
    assert [s.path for s in forms.ROW][:4] == ["top_k", "neighbor_prev", "neighbor_next", "window"]
    assert forms.ROW[-1].kind is bool  # the check boxes last


@pytest.mark.parametrize("page, prefix", [(query, "query"), (experiments, "exp")])
def test_both_pages_draw_every_box_of_the_row_with_the_ids_the_browser_tests_know(page, prefix):
    ids = elem_ids(page.build(Down()))
    assert {forms.elem_id(prefix, s) for s in forms.ROW} <= ids
    assert {
        f"{prefix}-{name}" for name in ("top-k", "neighbor-prev", "neighbor-next", "window", "recency", "hybrid")
    } <= ids


@pytest.mark.parametrize("setting", forms.ROW, ids=lambda s: s.path)
def test_what_a_box_holds_reaches_the_options_of_both_pages(setting):
    start = {s.path: ("" if s.kind is int and s.optional else forms.VALUES.get(s.path, 0)) for s in forms.ROW}
    shown, sent = typed(setting)
    boxes = [shown if s is setting else start[s.path] for s in forms.ROW]

    # The Query page: QueryForm.options' values (documents, the row, collections, languages, model).
    options = answer_html.retrieval_options("fixed_size", **form_options([], *boxes, [], [], ""))
    assert setting.get(options) == sent

    # The experiment form: RunSettings.config from the submitted values.
    row = forms.RetrievalInputs({s.path: object() for s in forms.ROW})
    others = {name: object() for name in ("question_set", "name", "embedding_model", "retrieval_only", "documents")}
    settings = RunSettings(
        **others,
        retrieval=row,
        answer=(object(),) * 3,
        judge=(object(),) * 3,
        validation=(object(), object()),
        rerank=(object(),) * 4,
    )
    values = {
        others["question_set"]: "qs",
        others["name"]: "",
        others["embedding_model"]: "",
        others["retrieval_only"]: False,
        others["documents"]: [],
        **{c: "" for c in (*settings.answer, *settings.judge)},
        settings.validation[0]: next(iter(forms.experiment_config.VALIDATIONS)),
        settings.validation[1]: 0,
        **dict(zip(settings.rerank, ("off", 0, "", ""))),
        **dict(zip(row.inputs, boxes)),
    }
    config = settings.config(values, [evaluator_pb2.StrategyGrid(strategy="fixed_size")])
    assert setting.get(config.retrieval) == sent


class Limits:
    def retrieval_limits(self):
        return common_pb2.RetrievalLimits(max_top_k=7, max_neighbors=3, max_window=4, max_recency_lambda=2.5)


def test_the_bounded_boxes_say_the_limits_the_retriever_serves():
    # Said under each box, not set as Gradio's minimum and maximum: those refuse a value in a
    # toast that names no field, before the form's own check (row_values) can name it.
    updates = dict(zip((s.path for s in forms.BOUNDED), forms.retrieval_limit_updates(Limits()), strict=True))
    assert updates["top_k"]["info"] == "hits, 1 to 7; empty = the default, 5"
    assert "0 to 3" in updates["neighbor_next"]["info"] and "0 to 2.5" in updates["recency_lambda"]["info"]
    assert "0 to 4" in updates["window"]["info"]
    assert not any("minimum" in update or "maximum" in update for update in updates.values())
    assert {s.limit for s in forms.BOUNDED} <= {f.name for f in common_pb2.RetrievalLimits.DESCRIPTOR.fields}
