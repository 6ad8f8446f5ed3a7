"""The command line takes every retrieval option the contract has, from the one table
(chunklab.retrieval.SETTINGS), refuses a value out of bounds with the retriever's own
words before anything is sent, and tells each document an experiment processes by name."""

from __future__ import annotations

import io

import pytest

from chunklab import retrieval
from chunklab.errors import InvalidArgument
from chunklab.v1 import common_pb2, evaluator_pb2
from chunklab_app.cli import retrieval_cli
from chunklab_app.cli.main import parser
from chunklab_app.cli.terminal import Progress, follow

EXPERIMENT = ["experiment", "--question-set", "qs-1", "--strategy", "fixed_size"]


def leaf_fields(message, prefix: str = "") -> set[str]:
    """Every settable field of a message, by path: a nested message's fields, not the message."""
    paths = set()
    for field in message.fields:
        if field.message_type is not None and not field.is_repeated:
            paths |= leaf_fields(field.message_type, f"{prefix}{field.name}.")
        else:
            paths.add(prefix + field.name)
    return paths


def test_every_field_of_the_contract_has_one_setting():
    """A field added to RetrievalOptions (or its filter) without its row in SETTINGS fails here."""
    paths = [setting.path for setting in retrieval.SETTINGS]
    assert sorted(paths) == sorted(leaf_fields(common_pb2.RetrievalOptions.DESCRIPTOR))
    assert len(paths) == len(set(paths))
    kinds = {setting.path: setting.kind for setting in retrieval.SETTINGS}
    assert (kinds["top_k"], kinds["recency_lambda"], kinds["hybrid"], kinds["filter.languages"]) == (
        int,
        float,
        bool,
        list,
    )
    assert [s.path for s in retrieval.SETTINGS if s.optional] == ["window", "fusion_k"]


def test_an_experiment_sends_every_option_given_on_the_command_line():
    args = parser().parse_args(
        [
            *EXPERIMENT,
            "--top-k",
            "7",
            "--neighbor-prev",
            "1",
            "--neighbor-next",
            "2",
            "--window",
            "3",
            "--filter-document-ids",
            "d1,d2",
            "--filter-document-ids",
            "d3",
            "--filter-collections",
            "news",
            "--filter-languages",
            "en, pt-BR",
            "--embedding-model",
            "all-MiniLM-L6-v2",
            "--hybrid",
            "--fusion-k",
            "3",
            "--recency-lambda",
            "0.05",
            "--rerank-kind",
            "http",
            "--rerank-depth",
            "20",
            "--rerank-model",
            "rerank-v3.5",
            "--rerank-base-url",
            "https://rerank.example/v1/rerank",
        ]
    )
    options = retrieval_cli.options(args, experiment=True)
    assert options == common_pb2.RetrievalOptions(
        top_k=7,
        neighbor_prev=1,
        neighbor_next=2,
        window=3,
        embedding_model="all-MiniLM-L6-v2",
        hybrid=True,
        fusion_k=3,
        recency_lambda=0.05,
        filter=common_pb2.RetrievalFilter(
            document_ids=["d1", "d2", "d3"], collections=["news"], languages=["en", "pt-BR"]
        ),
        rerank=common_pb2.RerankOptions(
            kind=common_pb2.RERANKER_KIND_HTTP,
            depth=20,
            model="rerank-v3.5",
            base_url="https://rerank.example/v1/rerank",
        ),
    )
    # Every setting an experiment takes was given above (a new row needs its flag here too).
    assert [s.path for s in retrieval.SETTINGS if not s.names_a_set and not s.get(options)] == []


def test_an_experiment_takes_no_configuration_id(capsys):
    """Its grids name the strategies and configurations; --strategy is the grid's own, repeatable."""
    with pytest.raises(SystemExit):
        parser().parse_args([*EXPERIMENT, "--config-id", "3f2a9c0d1e4b5a67"])
    assert "unrecognized arguments: --config-id 3f2a9c0d1e4b5a67" in capsys.readouterr().err
    assert parser().parse_args([*EXPERIMENT, "--strategy", "recursive"]).strategy == ["fixed_size", "recursive"]


def test_options_left_out_stay_unset():
    """No --window searches each set with the window it was indexed with; no --top-k is the default."""
    options = retrieval_cli.options(parser().parse_args(EXPERIMENT), experiment=True)
    assert options == common_pb2.RetrievalOptions() and not options.HasField("window")
    assert retrieval.top_k(options) == retrieval.LIMITS.default_top_k


def test_a_query_names_its_strategy_and_configuration():
    args = parser().parse_args(
        [
            "query",
            "who approved it?",
            "--strategy",
            "fixed_size",
            "--config-id",
            "3f2a9c0d1e4b5a67",
            "--neighbor-next",
            "1",
            "--hybrid",
        ]
    )
    assert retrieval_cli.options(args, experiment=False) == common_pb2.RetrievalOptions(
        strategy="fixed_size", config_id="3f2a9c0d1e4b5a67", neighbor_next=1, hybrid=True
    )
    with pytest.raises(InvalidArgument, match="name a strategy to search, e.g. fixed_size"):
        retrieval_cli.options(parser().parse_args(["query", "who?"]), experiment=False)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--top-k", "500"], "argument --top-k: top_k must be between 1 and 100, got 500"),
        (["--neighbor-prev", "-1"], "argument --neighbor-prev: neighbor_prev must be between 0 and 10, got -1"),
        (["--window", "21"], "argument --window: window must be between 0 and 20 sentences, got 21"),
        (
            ["--recency-lambda", "101"],
            "argument --recency-lambda: recency_lambda must be between 0 and 100 per day, got 101.0",
        ),
        (["--recency-lambda", "soon"], "argument --recency-lambda: recency_lambda takes a number, got 'soon'"),
        (["--top-k", "2.5"], "argument --top-k: top_k takes a whole number, got '2.5'"),
        # 0 stands for the default only in the contract, where unset and 0 are one: typed, it is refused.
        (
            ["--top-k", "0"],
            "argument --top-k: top_k must be between 1 and 100, got 0; leave it out for the default, 5",
        ),
        (
            ["--filter-languages", "en,english!"],
            "argument --filter-languages: filter.languages value 'english!' is malformed (e.g. en or pt-BR)",
        ),
        (
            ["--filter-collections", "news,,hr"],
            "argument --filter-collections: filter.collections holds an empty value; leave the list empty for all",
        ),
    ],
)
def test_a_value_out_of_bounds_is_refused_in_the_retrievers_words(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_:
        parser().parse_args([*EXPERIMENT, *argv])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"chunklab experiment: error: {message}"


def test_the_retriever_checks_with_the_same_rows():
    """check_options reads its bounds from SETTINGS: the CLI and the retriever cannot disagree."""
    with pytest.raises(InvalidArgument, match=r"^top_k must be between 1 and 100, got 101$"):
        retrieval.check_options(common_pb2.RetrievalOptions(strategy="fixed_size", top_k=101))
    with pytest.raises(InvalidArgument, match="name no strategy or config_id"):
        retrieval.check_options(common_pb2.RetrievalOptions(strategy="fixed_size"), needs_strategy=False)
    retrieval.check_options(common_pb2.RetrievalOptions(strategy="fixed_size", top_k=0, window=0))


class Log(io.StringIO):
    """stderr as a log file sees it: not a terminal, so plain lines."""

    def isatty(self) -> bool:
        return False


def progress(message: str, done: int = 0, **processing) -> evaluator_pb2.ExperimentEvent:
    return evaluator_pb2.ExperimentEvent(
        progress=evaluator_pb2.ExperimentProgress(
            experiment_id="e-1", questions_done=done, questions_total=4, message=message, **processing
        )
    )


def test_each_document_processed_is_a_line_naming_it():
    """The evaluator's processing steps, then the chunker's progress inside one document
    (no new line), then the questions."""
    run_key = "fixed_size[chunk_size=256,chunk_overlap=0]"
    step = dict(run_key=run_key, documents_total=2)
    events = [
        progress("queued"),
        progress("started"),
        progress(f"processing notes.md with {run_key} (1/2)", document_name="notes.md", documents_done=0, **step),
        progress(
            f"processing notes.md with {run_key} (1/2): embedding 10/40",
            document_name="notes.md",
            documents_done=0,
            **step,
        ),
        progress(
            f"processing minutes.docx with {run_key} (2/2)", document_name="minutes.docx", documents_done=1, **step
        ),
        progress(f"{run_key}: who approved it?", done=4, run_key=run_key),
        evaluator_pb2.ExperimentEvent(experiment=evaluator_pb2.Experiment(experiment_id="e-1")),
    ]
    log = Log()
    outcome = follow(events, Progress(stream=log))
    assert outcome.experiment.experiment_id == "e-1"
    lines = [line.split("] ", 1)[1] for line in log.getvalue().splitlines()]
    assert lines == [
        "0/4 queued",
        f"0/4 processing notes.md with {run_key} (1/2)",
        f"0/4 processing minutes.docx with {run_key} (2/2)",
        f"4/4 {run_key}: who approved it?",
    ]


def test_the_experiment_command_sends_the_validation_it_is_given():
    from chunklab_app.cli import main as cli

    args = cli.parser().parse_args(
        [
            "experiment",
            "--question-set",
            "qs",
            "--strategy",
            "fixed_size",
            "--validation",
            "k-fold",
            "--folds",
            "4",
            "--validation-seed",
            "9",
            "--validation-metric",
            "recall",
        ]
    )
    validation = cli.validation_of(args)
    assert (validation.mode, validation.folds, validation.seed, validation.metric) == (
        evaluator_pb2.VALIDATION_MODE_K_FOLD,
        4,
        9,
        "recall",
    )
    default = cli.validation_of(cli.parser().parse_args(["experiment", "--question-set", "qs", "--strategy", "x"]))
    assert (default.mode, default.selection_share) == (evaluator_pb2.VALIDATION_MODE_HOLDOUT, 0.0)
