"""The one knob codec (chunklab/knobs.py): what a user types or sends is typed,
checked and named the same way by the chunker, the evaluator, the UI and the CLI."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace

import pytest

from chunklab import knobs
from chunklab.errors import InvalidArgument
from chunklab.knobs import BOOL, CHOICE, DOUBLE, INT, Knob, KnobError
from chunklab.v1 import chunker_pb2, common_pb2, evaluator_pb2
from chunklab_app.cli import export_cli
from chunklab_app.cli.flags import UsageError, strategy_grids, strategy_specs
from frontend.forms import experiment_config
from frontend.forms import knobs as forms
from services.chunker.strategies import REGISTRY
from services.chunker.strategies.base import Registry, Strategy
from services.evaluator.experiments import grid

SIZE = Knob("chunk_size", INT, 512, "Tokens per chunk.", 8, 2048)
OVERLAP = Knob("chunk_overlap", INT, 64, "Tokens shared with the previous chunk.", 0, 2047)
FIXED = (SIZE, OVERLAP)
LEVEL = Knob("parent_level", CHOICE, "article", "What a parent is.", choices=("article", "section", "paragraph"))
THRESHOLD = Knob("threshold", DOUBLE, 0.5, "Cut below this similarity.", 0.0, 1.0)
HYBRID = Knob("hybrid", BOOL, False, "BM25 too.")
WINDOW = Knob("window", INT, 2, "Units each side of a hit.", 0, 20, query_time=True)


def info(name: str, declared: tuple[Knob, ...]) -> chunker_pb2.StrategyInfo:
    return chunker_pb2.StrategyInfo(name=name, knobs=[k.to_proto() for k in declared])


def message(call) -> str:
    with pytest.raises(ValueError) as raised:
        call()
    return str(raised.value)


# -- one value --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "refusal"),
    [
        (4096, "fixed_size.chunk_size must be at most 2048 tokens, got 4096"),
        (4, "fixed_size.chunk_size must be at least 8 tokens, got 4"),
        (256.5, "fixed_size.chunk_size takes a whole number, got 256.5"),
        (True, "fixed_size.chunk_size takes a whole number, got True"),
        ("256", "fixed_size.chunk_size takes a whole number, got '256'"),
        (common_pb2.KnobValue(bool_value=True), "fixed_size.chunk_size takes a whole number, got True"),
        (
            common_pb2.KnobValue(),
            "fixed_size.chunk_size has no value; give one, or leave the knob out for its default 512",
        ),
    ],
)
def test_a_whole_number_knob_refuses_what_it_cannot_take_in_one_wording(value, refusal):
    assert message(lambda: SIZE.coerce("fixed_size", value)) == refusal


def test_a_whole_float_is_taken_for_a_whole_number_knob():
    assert SIZE.coerce("fixed_size", 256.0) == 256 and type(SIZE.coerce("fixed_size", 256.0)) is int
    assert SIZE.coerce("fixed_size", common_pb2.KnobValue(double_value=256.0)) == 256
    assert SIZE.coerce("fixed_size", common_pb2.KnobValue(int_value=2048)) == 2048  # bounds are inclusive


def test_numbers_choices_and_booleans():
    assert type(THRESHOLD.coerce("semantic", 1)) is float
    assert message(lambda: THRESHOLD.coerce("semantic", 1.5)) == "semantic.threshold must be at most 1, got 1.5"
    assert message(lambda: THRESHOLD.coerce("semantic", False)) == "semantic.threshold takes a number, got False"
    assert message(lambda: THRESHOLD.coerce("semantic", float("nan"))) == "semantic.threshold takes a number, got nan"
    assert LEVEL.coerce("parent_child", "section") == "section"
    assert message(lambda: LEVEL.coerce("parent_child", "chapter")) == (
        "parent_child.parent_level must be one of article, section, paragraph, got 'chapter'"
    )
    assert message(lambda: HYBRID.coerce("x", 1)) == "x.hybrid takes true or false, got 1"


def test_a_knob_lists_as_its_default_and_what_it_takes():
    """`chunklab strategies` prints these lines, so a reader sees defaults and ranges without the UI."""
    assert [k.summary() for k in (SIZE, OVERLAP, LEVEL, THRESHOLD, HYBRID, WINDOW)] == [
        "chunk_size=512 (whole number 8–2048, usually at least 32)",
        "chunk_overlap=64 (whole number 0–2047)",
        "parent_level=article (one of article, section, paragraph)",
        "threshold=0.5 (number 0–1)",
        "hybrid=false (true or false)",
        "window=2 (whole number 0–20, at query time)",
    ]
    assert Knob("top", INT, 5, "Hits.", 1).summary() == "top=5 (whole number from 1)"


def test_chunklab_strategies_lists_every_knob_with_its_default_and_range(capsys):
    from chunklab_app.cli.main import cmd_strategies

    class Catalog:
        def list_strategies(self):
            return list(REGISTRY.infos())

    assert cmd_strategies(None, Catalog()) == 0
    printed = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(printed) if line.startswith("fixed_size "))
    assert printed[at + 1 : at + 3] == [
        "    chunk_size=512 (whole number 8–8192, usually at least 32): Tokens per chunk (a hard maximum).",
        "    chunk_overlap=64 (whole number 0–8191): Tokens shared with the previous chunk.",
    ]


def test_a_refusal_is_invalid_argument_on_a_server_and_a_value_error_in_a_form():
    with pytest.raises(InvalidArgument):
        SIZE.coerce("fixed_size", 4096)
    assert issubclass(KnobError, ValueError)


# -- typed text (a UI field, a command line) ------------------------------------------


def test_text_is_typed_by_the_knob_and_checked_like_a_value():
    assert SIZE.parse("fixed_size", " 256 ") == 256
    assert SIZE.parse("fixed_size", "256.0") == 256
    assert THRESHOLD.parse("semantic", "0.25") == 0.25
    assert [HYBRID.parse("x", t) for t in ("true", "Yes", "1", "on", "false", "NO", "0", "off")] == [True] * 4 + [
        False
    ] * 4
    assert LEVEL.parse("parent_child", "paragraph") == "paragraph"
    assert message(lambda: SIZE.parse("fixed_size", "many")) == "fixed_size.chunk_size takes a whole number, got 'many'"
    assert message(lambda: SIZE.parse("fixed_size", "2.5")) == "fixed_size.chunk_size takes a whole number, got 2.5"
    assert (
        message(lambda: SIZE.parse("fixed_size", "4096"))
        == "fixed_size.chunk_size must be at most 2048 tokens, got 4096"
    )
    assert message(lambda: HYBRID.parse("x", "maybe")) == "x.hybrid takes true or false, got 'maybe'"
    assert SIZE.parse_values("fixed_size", "250, 500,") == [250, 500]
    assert LEVEL.parse_values("parent_child", "article, section") == ["article", "section"]
    assert SIZE.parse_values("fixed_size", "  ") == [] and SIZE.parse_values("fixed_size", None) == []


def test_the_cli_form_strategy_knob_equals_values():
    infos = [info("fixed_size", FIXED)]
    (fixed,) = strategy_grids(["fixed_size"], ["fixed_size.chunk_size=256, 512.0", "fixed_size.chunk_overlap=0"], infos)
    assert [(g.knob, [v.int_value for v in g.values]) for g in fixed.grid] == [
        ("chunk_size", [256, 512]),
        ("chunk_overlap", [0]),
    ]
    assert all(v.WhichOneof("kind") == "int_value" for g in fixed.grid for v in g.values)
    (spec,) = strategy_specs(["fixed_size"], ["fixed_size.chunk_size=256"], infos)
    assert dict(spec.knobs) == {"chunk_size": common_pb2.KnobValue(int_value=256)}
    with pytest.raises(UsageError) as raised:
        strategy_specs(["fixed_size"], ["fixed_size.chunk_size=4096"], infos)
    assert (
        str(raised.value)
        == "--knob 'fixed_size.chunk_size=4096': fixed_size.chunk_size must be at most 2048 tokens, got 4096"
    )
    with pytest.raises(UsageError) as raised:
        strategy_grids(["fixed_size"], ["fixed_size.size=1"], infos)
    assert (
        str(raised.value)
        == "--grid 'fixed_size.size=1': fixed_size has no knob 'size'; its knobs are chunk_size, chunk_overlap"
    )


def test_load_and_export_snippet_read_the_same_knob_flags():
    """One --knob syntax (ADR 0075): strategy.knob=value in every command; knob=value too when the
    command names one strategy. `load` (strategy_specs) and `export snippet` give the same configuration."""
    real = [i for i in REGISTRY.infos() if i.name in ("fixed_size", "recursive")]
    lab = SimpleNamespace(list_strategies=lambda: real)
    expected = {"chunk_size": common_pb2.KnobValue(int_value=24), "chunk_overlap": common_pb2.KnobValue(int_value=0)}
    for flags in (
        ["fixed_size.chunk_size=24", "fixed_size.chunk_overlap=0"],
        ["chunk_size=24", "chunk_overlap=0"],
        ["fixed_size.chunk_size=24", "chunk_overlap=0"],
    ):
        (spec,) = strategy_specs(["fixed_size"], flags, real)
        assert dict(spec.knobs) == expected, flags
        code = export_cli.snippet_for_strategy(lab, "fixed_size", flags, ["chunklab"])
        assert "spec = to_spec('fixed_size', {'chunk_overlap': 0, 'chunk_size': 24})" in code, flags
    (grid,) = strategy_grids(["fixed_size"], ["chunk_size=256,512"], real)
    assert [(g.knob, [v.int_value for v in g.values]) for g in grid.grid] == [("chunk_size", [256, 512])]


def test_a_knob_flag_for_another_strategy_or_without_one_among_several_is_refused_alike():
    real = [i for i in REGISTRY.infos() if i.name in ("fixed_size", "recursive")]
    lab = SimpleNamespace(list_strategies=lambda: real)
    other = "--knob 'recursive.chunk_size=24': the command names --strategy fixed_size, not recursive"
    for refused in (
        lambda: strategy_specs(["fixed_size"], ["recursive.chunk_size=24"], real),
        lambda: export_cli.snippet_for_strategy(lab, "fixed_size", ["recursive.chunk_size=24"]),
    ):
        with pytest.raises(UsageError) as raised:
            refused()
        assert str(raised.value) == other
    with pytest.raises(UsageError) as raised:
        strategy_specs(["fixed_size", "recursive"], ["chunk_size=24"], real)
    assert str(raised.value) == (
        "--knob 'chunk_size=24': write strategy.knob=value: the command names 2 strategies (fixed_size, recursive)"
    )
    with pytest.raises(UsageError) as raised:
        export_cli.snippet_for_strategy(lab, "fixed_size", ["chunk_size=24,32"])
    assert str(raised.value) == "--knob 'chunk_size=24,32': give one value (a --knob sets one configuration)"
    for malformed in ("chunk_size", "fixed_size.=24", ".chunk_size=24", "chunk_size="):
        with pytest.raises(UsageError) as raised:
            export_cli.snippet_for_strategy(lab, "fixed_size", [malformed])
        assert str(raised.value) == f"--knob {malformed!r}: write strategy.knob=value"


# -- the rules between knobs: declared once, checked before sending and on arrival ------


def test_chunk_overlap_above_chunk_size_is_refused_by_the_form_the_cli_and_the_chunker_alike():
    refusal = "fixed_size.chunk_overlap must be smaller than chunk_size (512), got 600"
    real = next(i for i in REGISTRY.infos() if i.name == "fixed_size")
    (form,) = forms.strategy_forms([real])
    assert message(lambda: forms.strategy_spec(form, [None, 600])) == refusal
    with pytest.raises(UsageError) as raised:
        strategy_specs(["fixed_size"], ["fixed_size.chunk_overlap=600"], [real])
    assert str(raised.value) == f"--knob: fixed_size[chunk_overlap=600]: {refusal}"
    spec = common_pb2.StrategySpec(name="fixed_size", knobs={"chunk_overlap": common_pb2.KnobValue(int_value=600)})
    with pytest.raises(InvalidArgument) as raised:
        REGISTRY.build(spec)
    assert raised.value.message == refusal
    assert forms.strategy_spec(form, [None, 511]).knobs["chunk_overlap"].int_value == 511


def test_a_grid_cell_that_breaks_a_rule_is_named_by_the_ui_and_the_evaluator_alike():
    refusal = (
        "fixed_size[chunk_size=128,chunk_overlap=200]: "
        "fixed_size.chunk_overlap must be smaller than chunk_size (128), got 200"
    )
    (form,) = forms.strategy_forms([info("fixed_size", FIXED)])
    assert message(lambda: experiment_config.strategy_grid(form, ["512, 128", "200"])) == refusal
    grids = [
        evaluator_pb2.StrategyGrid(
            strategy="fixed_size",
            grid=[
                evaluator_pb2.KnobGrid(knob="chunk_size", values=[knobs.knob_value(512), knobs.knob_value(128)]),
                evaluator_pb2.KnobGrid(knob="chunk_overlap", values=[knobs.knob_value(200)]),
            ],
        )
    ]
    with pytest.raises(InvalidArgument) as raised:
        grid.expand(grids, [info("fixed_size", FIXED)], None)
    assert raised.value.message == refusal


def test_at_most_rules_allow_equal_values():
    child = Knob("child_max_tokens", INT, 256, "", 16, 8192)
    parent = Knob("parent_max_tokens", INT, 1024, "", 16, 32768)
    assert knobs.resolve("parent_child", (child, parent), {"child_max_tokens": 1024})["child_max_tokens"] == 1024
    assert message(lambda: knobs.resolve("parent_child", (child, parent), {"child_max_tokens": 1025})) == (
        "parent_child.child_max_tokens must be at most parent_max_tokens (1024), got 1025"
    )


def test_a_declared_default_that_breaks_its_own_bound_is_refused_at_registration():
    class Broken(Strategy):
        name = "broken"
        description = "A default above its maximum."
        knobs = (Knob("chunk_size", INT, 4096, "", 8, 2048),)

        def chunk(self, source, context):
            return []

    assert message(lambda: Registry().register(Broken)) == "broken.chunk_size must be at most 2048 tokens, got 4096"


# -- values, specs, labels, config ids -------------------------------------------------


def test_resolve_fills_defaults_and_refuses_unknown_knobs():
    assert knobs.resolve("fixed_size", FIXED, {"chunk_size": common_pb2.KnobValue(double_value=256.0)}) == {
        "chunk_size": 256,
        "chunk_overlap": 64,
    }
    assert message(lambda: knobs.resolve("fixed_size", FIXED, {"window": 3})) == (
        "fixed_size has no knob 'window'; its knobs are chunk_size, chunk_overlap"
    )


def test_declarations_survive_the_knob_spec_round_trip():
    for knob in (SIZE, LEVEL, THRESHOLD, HYBRID, WINDOW):
        assert Knob.from_proto(knob.to_proto()) == knob
    spec = WINDOW.to_proto()
    assert (spec.type, spec.default_value.int_value, spec.min_value, spec.max_value, spec.query_time) == (
        chunker_pb2.KNOB_TYPE_INT,
        2,
        0.0,
        20.0,
        True,
    )
    assert not LEVEL.to_proto().HasField("min_value") and LEVEL.kind == "choice"


def test_specs_to_plain_dicts_and_back_keep_every_kind():
    plain = {"name": "demo", "knobs": {"chunk_size": 256, "threshold": 1.0, "hybrid": True, "parent_level": "article"}}
    spec = knobs.dict_to_spec(plain)
    assert {k: v.WhichOneof("kind") for k, v in spec.knobs.items()} == {
        "chunk_size": "int_value",
        "threshold": "double_value",
        "hybrid": "bool_value",
        "parent_level": "string_value",
    }
    assert knobs.spec_to_dict(spec) == plain
    assert knobs.dict_to_spec({}) == common_pb2.StrategySpec()


def test_labels_for_run_keys():
    assert [knobs.label(v) for v in (True, False, 0.5, 1.0, 256, "article")] == [
        "true",
        "false",
        "0.5",
        "1",
        "256",
        "article",
    ]
    assert knobs.label(common_pb2.KnobValue(double_value=0.25)) == "0.25" and knobs.label(common_pb2.KnobValue()) == ""
    assert (
        knobs.run_key("fixed_size", {"chunk_size": 256, "chunk_overlap": 0})
        == "fixed_size[chunk_size=256,chunk_overlap=0]"
    )
    assert knobs.run_key("semantic", {}) == "semantic"


def test_the_config_id_ignores_knob_order_and_query_time_knobs():
    canonical = '{"knobs":{"chunk_overlap":0,"chunk_size":256},"strategy":"fixed_size"}'
    expected = hashlib.sha256(canonical.encode()).hexdigest()[:16]
    assert knobs.config_id("fixed_size", FIXED, {"chunk_size": 256, "chunk_overlap": 0}) == expected
    assert knobs.config_id("fixed_size", FIXED[::-1], {"chunk_overlap": 0, "chunk_size": 256}) == expected
    assert knobs.config_id("fixed_size", FIXED, {"chunk_size": 256, "chunk_overlap": 64}) != expected
    # Missing knobs count at their defaults.
    assert knobs.config_id("fixed_size", FIXED, {"chunk_size": 512}) == knobs.config_id(
        "fixed_size", FIXED, {"chunk_size": 512, "chunk_overlap": 64}
    )
    windowed = (WINDOW, Knob("max_tokens", INT, 256, "", 16, 8192))
    narrow = knobs.config_id("sentence_window", windowed, {"window": 0, "max_tokens": 256})
    assert narrow == knobs.config_id("sentence_window", windowed, {"window": 5, "max_tokens": 256})
    assert narrow == hashlib.sha256(b'{"knobs":{"max_tokens":256},"strategy":"sentence_window"}').hexdigest()[:16]


def test_the_chunker_and_the_evaluator_compute_the_same_config_id():
    real = next(i for i in REGISTRY.infos() if i.name == "sentence_window")
    (cell,) = grid.expand(
        [
            evaluator_pb2.StrategyGrid(
                strategy="sentence_window", grid=[evaluator_pb2.KnobGrid(knob="window", values=[knobs.knob_value(5)])]
            )
        ],
        [real],
        None,
    )
    assert cell.window == 5 and cell.run_key == "sentence_window[window=5]"
    assert cell.config_id == REGISTRY.build(common_pb2.StrategySpec(name="sentence_window")).config_id
