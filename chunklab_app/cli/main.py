"""The command line: run a whole experiment headless and write its report,
ask one question, or bulk-load documents through the message broker.

    python -m chunklab_app.cli experiment --corpus a.md b.md --questions q.csv \
        --strategy fixed_size --grid fixed_size.chunk_size=250,500 --top-k 5 --hybrid --report report.html
    python -m chunklab_app.cli query "Who approved it?" --strategy fixed_size --neighbor-next 1
    python -m chunklab_app.cli load docs/*.md --strategy fixed_size --knob fixed_size.chunk_size=256
    python -m chunklab_app.cli questions generate notes.md --count 20 --seed 7 --out questions.jsonl
    python -m chunklab_app.cli export chunks --document handbook.md --strategy fixed_size --format langchain -o out/
    python -m chunklab_app.cli export snippet --experiment <id>
    python -m chunklab_app.cli tune --corpus docs/*.md --questions q.jsonl --minutes 10 --max-tokens 800

Every RetrievalOptions field is a flag of `experiment` and `query`
(chunklab_app.cli.retrieval_cli, from chunklab.retrieval.SETTINGS).

It is a client only, through chunklab.client: it talks to a running stack
(addresses from the CHUNKLAB_*_ADDRESS settings), or starts one with --start
and stops it after.
Progress goes to stderr, the summary table to stdout (or JSON with --json).
Exit codes: 0 done, 1 the experiment failed or was interrupted, or some of its
runs did not run every question (or a loaded document or strategy failed, or is not finished), 2 bad usage (or a
file that cannot be read, or a bad setting), 3 a service refused (a missing or wrong
token, too) or could not be reached.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from google.protobuf import json_format
from pydantic import ValidationError

from chunklab import experiment_state, knobs
from chunklab.client import ChunkLab, ClientError
from chunklab.errors import InvalidArgument
from chunklab.rpc import tracing
from chunklab.settings import Settings, invalid_settings
from chunklab.v1 import chunker_pb2, evaluator_pb2
from chunklab.views import numbers
from chunklab.views.metric_format import MetricFormat
from chunklab_app import recommended
from chunklab_app.cli import export_cli, questions_cli, retrieval_cli, tune_cli
from chunklab_app.cli.flags import UsageError, strategy_grids, strategy_specs
from chunklab_app.cli.terminal import Progress, follow, print_table, summary_rows

# Ingest tells a file's format by its name's extension: the CLI sends the name and nothing else.
UPLOADABLE = "Markdown, text, DOCX, PDF or HTML files"
VIEWS = {
    "both": evaluator_pb2.REPORT_VIEW_BOTH,
    "managerial": evaluator_pb2.REPORT_VIEW_MANAGERIAL,
    "technical": evaluator_pb2.REPORT_VIEW_TECHNICAL,
}


# -- building the request ----------------------------------------------------


def endpoint(base_url: str | None, model: str | None, key_env: str | None) -> evaluator_pb2.ModelEndpoint:
    key = os.environ.get(key_env, "") if key_env else ""
    return evaluator_pb2.ModelEndpoint(base_url=base_url or "", model=model or "", api_key=key)


VALIDATION_MODES = {
    "holdout": evaluator_pb2.VALIDATION_MODE_HOLDOUT,
    "k-fold": evaluator_pb2.VALIDATION_MODE_K_FOLD,
    "none": evaluator_pb2.VALIDATION_MODE_NONE,
}


def validation_of(args) -> evaluator_pb2.Validation:
    """The --validation flags as the contract's Validation (the evaluator checks their ranges)."""
    return evaluator_pb2.Validation(
        mode=VALIDATION_MODES[args.validation],
        seed=args.validation_seed,
        selection_share=args.selection_share,
        folds=args.folds,
        metric=args.validation_metric,
    )


# -- talking to the stack ----------------------------------------------------


def write_report(client: ChunkLab, experiment_id: str, target: str, view: str) -> Path:
    """--report and `report --out`: a .html file, or a folder (made if missing) that gets the
    evaluator's file name; written as it streams, at any size."""
    return client.write_report(experiment_id, target, VIEWS[view]).path


# -- commands ----------------------------------------------------------------


def cmd_experiment(args, client: ChunkLab) -> int:
    progress = Progress()
    options = retrieval_cli.options(args, experiment=True)
    grids = strategy_grids(args.strategy, args.grid or [], client.list_strategies())
    mapping = questions_cli.mapping(args.map)
    document_ids = []
    for corpus in args.corpus or []:
        uploaded = client.upload_document(corpus, collection=args.collection)
        document = uploaded.document
        document_ids.append(document.document_id)
        again = " (already uploaded)" if uploaded.already_existed else ""
        progress.message(f"{'reused' if again else 'uploaded'} {corpus} as {document.document_id}{again}")
    if args.question_set:
        question_set_id = args.question_set
    else:
        check = evaluator_pb2.EXCERPT_CHECK_LENIENT if args.lenient else evaluator_pb2.EXCERPT_CHECK_STRICT
        question_set = client.import_question_set(args.questions, document_ids=mapping, excerpt_check=check)
        question_set_id = question_set.question_set_id
        left_out = question_set.validation.questions_left_out
        progress.message(
            f"imported {question_set.question_count} questions as {question_set_id}"
            + (f" ({left_out} left out: `chunklab questions validate` says why)" if left_out else "")
        )
    config = evaluator_pb2.ExperimentConfig(
        name=args.name or "",
        question_set_id=question_set_id,
        strategies=grids,
        retrieval=options,
        retrieval_only=args.retrieval_only,
        answer_model=endpoint(args.answer_base_url, args.answer_model, args.api_key_env),
        judge_model=endpoint(args.judge_base_url, args.judge_model, args.api_key_env),
        validation=validation_of(args),
    )
    if args.only_uploaded:
        config.retrieval.filter.document_ids.extend(document_ids)
    return finish(client, client.run_experiment(config, dry_run=args.dry_run), args, progress)


def cmd_resume(args, client: ChunkLab) -> int:
    key = os.environ.get(args.api_key_env, "") if args.api_key_env else ""
    args.dry_run = False
    return finish(client, client.resume_experiment(args.experiment_id, key, key), args, Progress())


def finish(client: ChunkLab, events, args, progress: Progress) -> int:
    outcome = follow(events, progress)
    for warning in outcome.estimate.warnings if outcome.estimate else ():
        print(f"warning: {warning}", file=sys.stderr)  # runs that cannot run as planned, before they start
    if args.dry_run:
        estimate = outcome.estimate
        shown = json_format.MessageToDict(estimate, preserving_proto_field_name=True) if estimate else {}
        print(json.dumps({"dry_run": True, "estimate": shown}, indent=2))
        return 0
    experiment = outcome.experiment
    if experiment is None:
        raise ClientError("the evaluator ended the stream without the experiment; see its log", service="evaluator")
    if args.json:
        if args.per_question:  # the stream's experiment carries no results: read them
            experiment = client.get_experiment(experiment.experiment_id)
        runs = summary_rows(experiment, MetricFormat(client.list_metrics()), per_question=args.per_question)
        print(
            json.dumps(
                {
                    "experiment_id": experiment.experiment_id,
                    "state": experiment_state.name(experiment.state, None),
                    "error": experiment.error,
                    "runs": runs,
                    "validation": json_format.MessageToDict(experiment.validation, preserving_proto_field_name=True),
                },
                indent=2,
            )
        )
    else:
        print_table(experiment, MetricFormat(client.list_metrics()))
    if args.report:
        path = write_report(client, experiment.experiment_id, args.report, args.view)
        print(f"report written to {path}", file=sys.stderr)
    missing = runs_not_run(experiment)
    for line in missing:
        print(line, file=sys.stderr)
    return 0 if experiment.state == evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED and not missing else 1


def runs_not_run(experiment: evaluator_pb2.Experiment) -> list[str]:
    """One line per run that did not answer every question (a partial experiment has
    some), saying how far it got and why: such an experiment is no full result, so the
    command exits 1."""
    return [
        f"run {run.run_key} {'did not run' if experiment_state.failed_run(run) else 'is incomplete'}: "
        f"{numbers.count(run.questions_done - run.questions_failed)}/{numbers.counted(run.questions_total, 'question')} "
        f"({experiment_state.failure(run)})"
        for run in experiment.runs
        if experiment_state.incomplete_run(run)
    ]


def cmd_report(args, client: ChunkLab) -> int:
    path = write_report(client, args.experiment_id, args.out, args.view)
    print(f"report written to {path}", file=sys.stderr)
    return 0


def cmd_compare(args, client: ChunkLab) -> int:
    reply = client.compare_experiments(args.experiment_ids)
    for warning in reply.warnings:
        print(f"warning: {warning}")
    metrics = MetricFormat(client.list_metrics())
    for d in reply.differences:
        print(
            f"{metrics.label(d.metric):<28} {d.run_key:<40} vs {d.baseline_run_key:<30} "
            f"{metrics.difference(d.metric, d.difference)} {metrics.interval(d.metric, d.ci_low, d.ci_high)} "
            f"over {d.shared_questions} questions"
        )
    return 0


def cmd_load(args, client: ChunkLab) -> int:
    progress = Progress()
    infos = client.list_strategies()
    specs = strategy_specs(args.strategy, args.knob or [], infos)
    # A bulk load makes each set the active one: a size below its sensible minimum is said first (ADR 0089).
    for warning in knobs.spec_warnings(infos, specs):
        print(f"warning: {warning}", file=sys.stderr)
    missing = [f for f in args.files if not Path(f).is_file()]
    if missing:
        raise UsageError(f"no such file: {', '.join(missing)}")
    names = {}
    for i, name in enumerate(args.files, start=1):
        uploaded = client.upload_document(name, collection=args.collection)
        names[uploaded.document.document_id] = Path(name).name
        said = f"reused {name} (already uploaded)" if uploaded.already_existed else f"uploaded {name}"
        progress.update(i, len(args.files), said)
    progress.close()
    load = client.submit_bulk_load(list(names), specs, embedding_model=args.embedding_model or "")
    print(f"bulk load {load.bulk_load_id}: {load.jobs_total} documents queued on {load.broker}", file=sys.stderr)
    if args.no_wait:
        print(load.bulk_load_id)
        return 0
    return follow_load(client, load.bulk_load_id, args, names)


def cmd_load_status(args, client: ChunkLab) -> int:
    args.timeout = args.timeout if args.wait else 0.0
    return follow_load(client, args.bulk_load_id, args, {})


def cmd_load_cancel(args, client: ChunkLab) -> int:
    load = client.cancel_bulk_load(args.bulk_load_id)
    print(
        f"bulk load {load.bulk_load_id} cancelled: {len(load.results)} of {load.jobs_total} documents had "
        "finished; those not started will not run, those running finish",
        file=sys.stderr,
    )
    return 0


def follow_load(client: ChunkLab, bulk_load_id: str, args, names: dict[str, str]) -> int:
    """Follows the bulk load until every job has finished (or the timeout), then
    prints one line per document. 0: every strategy of every document done."""
    progress = Progress()
    for load in client.follow_bulk_load(bulk_load_id, timeout=args.timeout):
        progress.update(len(load.results), load.jobs_total, "documents done")
    progress.close()
    rows = [load_row(result, names) for result in load.results]
    if args.json:
        print(
            json.dumps(
                {
                    "bulk_load_id": load.bulk_load_id,
                    "jobs_total": load.jobs_total,
                    "jobs_finished": len(load.results),
                    "broker": load.broker,
                    "documents": rows,
                },
                indent=2,
            )
        )
    else:
        print(
            f"bulk load {load.bulk_load_id}: {len(load.results)} of {load.jobs_total} documents finished "
            f"({load.broker})"
        )
        for row in rows:
            done = ", ".join(f"{s['strategy']} {s['chunks']} chunks" for s in row["completed"])
            failed = "; ".join(f"{f['strategy']} failed: {f['reason']}" for f in row["failed"])
            print(f"  {row['document']:<40} {row['error'] or '; '.join(x for x in (done, failed) if x)}")
    finished = len(load.results) >= load.jobs_total
    ok = finished and all(not row["error"] and not row["failed"] for row in rows)
    if not finished:
        print(
            f"chunklab: {load.jobs_total - len(load.results)} documents not finished yet; "
            f"follow with: chunklab load-status {load.bulk_load_id} --wait",
            file=sys.stderr,
        )
    return 0 if ok else 1


def load_row(result: chunker_pb2.BulkLoadJobResult, names: dict[str, str]) -> dict:
    return {
        "document": names.get(result.document_id, result.document_id),
        "document_id": result.document_id,
        "completed": [
            {"strategy": o.strategy, "chunks": o.chunk_count, "seconds": round(o.seconds, 2)}
            for o in result.result.strategies_completed
        ],
        "failed": [{"strategy": f.strategy, "reason": f.reason} for f in result.result.strategies_failed],
        "error": result.error,
        "deliveries": result.deliveries,
        "worker": result.worker,
    }


def cmd_strategies(args, client: ChunkLab) -> int:
    """Each strategy with its description, then each knob on its own line: its default and
    what it takes, as ListStrategies declares them (the UI's forms read the same)."""
    for info in client.list_strategies():
        print(f"{info.name:<28} {'(needs an LLM) ' if info.requires_llm else ''}{info.description}")
        for knob in knobs.from_info(info):
            print(f"    {knob.summary()}" + (f": {knob.description}" if knob.description else ""))
    return 0


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="chunklab", description="ChunkLab from the command line (a gRPC client).")
    root.add_argument("--start", action="store_true", help="start the whole stack for this command, then stop it")
    root.add_argument("--data-dir", help="with --start: the stack's data folder (default: CHUNKLAB_DATA_DIR)")
    commands = root.add_subparsers(dest="command", required=True)

    run = commands.add_parser("experiment", help="upload, import, run an experiment and write its report")
    run.add_argument(
        "--corpus", nargs="*", help=f"documents to upload first ({UPLOADABLE}; already uploaded ones are reused)"
    )
    source = run.add_mutually_exclusive_group(required=True)
    source.add_argument("--questions", help="a question set file (.jsonl or .csv) to import")
    source.add_argument("--question-set", help="the id of a question set already imported")
    run.add_argument("--map", action="append", help="corpus_id=document_id for references (repeatable)")
    run.add_argument(
        "--lenient",
        action="store_true",
        help="import the questions whose excerpts are located, leaving out the others (default: strict)",
    )
    run.add_argument("--collection", default="", help="collection for uploaded documents")
    run.add_argument(
        "--strategy",
        action="append",
        required=True,
        help=f'a strategy to run (repeatable) or "all"; first choice: {recommended.summary()}: '
        f"{recommended.flags()}, beside --strategy {recommended.BASELINE} as the baseline",
    )
    run.add_argument(
        "--grid",
        action="append",
        help="strategy.knob=v1,v2: values to try (repeatable; knob=v1,v2 when one --strategy is given)",
    )
    retrieval_cli.add_flags(run, experiment=True)
    check = run.add_argument_group("validation", "which questions choose the winner and which confirm it (ADR 0046)")
    check.add_argument(
        "--validation",
        choices=VALIDATION_MODES,
        default="holdout",
        help="holdout: a seeded share chooses, the rest confirms (default); k-fold: each fold "
        "confirms the others' choice; none: chosen and scored on every question",
    )
    check.add_argument("--validation-seed", type=int, default=0, help="the same seed splits the same way")
    check.add_argument(
        "--selection-share", type=float, default=0.0, help="holdout: the share of questions that chooses (default 0.5)"
    )
    check.add_argument("--folds", type=int, default=0, help="k-fold: how many folds (default 5)")
    check.add_argument(
        "--validation-metric", default="", help="the measure to choose on (default: recall with references, ADR 0054)"
    )
    run.add_argument("--answer-base-url")
    run.add_argument("--answer-model", help='a chat model, or "extractive"')
    run.add_argument("--judge-base-url")
    run.add_argument("--judge-model", help='a chat model, or "none"')
    run.add_argument("--api-key-env", help="name of the environment variable holding the API key")
    run.add_argument("--retrieval-only", action="store_true", help="retrieval measures only: no answers, no judges")
    run.add_argument(
        "--only-uploaded",
        action="store_true",
        help="search only the documents given with --corpus (besides any --filter-document-ids)",
    )
    run.add_argument("--dry-run", action="store_true", help="validate and estimate; nothing runs")
    run.add_argument("--name")
    run.add_argument("--report", help="where to write the HTML report: a .html file, or a folder (made if missing)")
    run.add_argument("--view", choices=VIEWS, default="both")
    run.add_argument(
        "--json", action="store_true", help="print the summary as JSON (each run per document and collection)"
    )
    run.add_argument("--per-question", action="store_true", help="with --json: each run's questions one by one too")
    run.set_defaults(handler=cmd_experiment)

    retrieval_cli.add_query_command(commands)
    questions_cli.add_questions_command(commands)

    resume = commands.add_parser("resume", help="continue an interrupted experiment")
    resume.add_argument("experiment_id")
    resume.add_argument("--api-key-env")
    resume.add_argument("--report")
    resume.add_argument("--view", choices=VIEWS, default="both")
    resume.add_argument("--json", action="store_true")
    resume.add_argument("--per-question", action="store_true", help="with --json: each run's questions one by one too")
    resume.set_defaults(handler=cmd_resume)

    rep = commands.add_parser("report", help="write an experiment's HTML report")
    rep.add_argument("experiment_id")
    rep.add_argument("--out", required=True)
    rep.add_argument("--view", choices=VIEWS, default="both")
    rep.set_defaults(handler=cmd_report)

    cmp_ = commands.add_parser("compare", help="compare experiments with bootstrap intervals")
    cmp_.add_argument("experiment_ids", nargs="+")
    cmp_.set_defaults(handler=cmd_compare)

    load = commands.add_parser("load", help="upload documents and chunk them through the message broker (a bulk load)")
    load.add_argument("files", nargs="+", help=f"documents to upload ({UPLOADABLE}; already uploaded ones are reused)")
    load.add_argument(
        "--strategy",
        action="append",
        required=True,
        help=f'a strategy to run (repeatable) or "all"; first choice: {recommended.summary()}',
    )
    load.add_argument(
        "--knob", action="append", help="strategy.knob=value (repeatable; knob=value when one --strategy is given)"
    )
    load.add_argument("--collection", default="", help="collection for the uploaded documents")
    load.add_argument("--embedding-model", help="default: the stack's configured model")
    load.add_argument("--no-wait", action="store_true", help="queue the load, print its id and return")
    load.add_argument("--timeout", type=float, help="seconds to follow the load (default: CHUNKLAB_LONG_RPC_TIMEOUT_S)")
    load.add_argument("--json", action="store_true", help="print the outcome as JSON")
    load.set_defaults(handler=cmd_load)

    status = commands.add_parser("load-status", help="a bulk load's outcome so far")
    status.add_argument("bulk_load_id")
    status.add_argument("--wait", action="store_true", help="follow it until every document is done")
    status.add_argument("--timeout", type=float, help="with --wait: seconds to follow it")
    status.add_argument("--json", action="store_true")
    status.set_defaults(handler=cmd_load_status)

    cancel = commands.add_parser("load-cancel", help="cancel a bulk load: documents not started are not run")
    cancel.add_argument("bulk_load_id")
    cancel.set_defaults(handler=cmd_load_cancel)

    strategies = commands.add_parser("strategies", help="list the chunker's strategies")
    strategies.set_defaults(handler=cmd_strategies)

    export_cli.add_export_command(commands)
    tune_cli.add_tune_command(commands, tune_cli.cmd_tune)
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        settings = Settings()
    except ValidationError as exc:
        print(invalid_settings(exc), file=sys.stderr)
        return 2
    stack = None
    tracing.start("cli", settings)  # a command is one trace across the services
    try:
        if args.start:
            from chunklab_app.stack import Stack

            data_dir = Path(args.data_dir) if args.data_dir else settings.data_dir
            print(f"starting ChunkLab in {data_dir.resolve()} ...", file=sys.stderr)
            stack = Stack(data_dir=data_dir.resolve()).start()
            client = stack.client(settings)
        else:
            client = ChunkLab(settings)
        with tracing.span(f"chunklab {args.command}"):
            return args.handler(args, client)
    except (
        UsageError,
        export_cli.ExportUsage,
        InvalidArgument,
    ) as exc:  # InvalidArgument: retrieval options the retriever would refuse
        print(f"chunklab: {exc}", file=sys.stderr)
        return 2
    except ClientError as exc:
        print(f"chunklab: {exc.message}", file=sys.stderr)
        return 3 if exc.service else 2  # no service: refused before any call (a file that cannot be read)
    except KeyboardInterrupt:
        print(
            "\nchunklab: stopped following; a running experiment or bulk load goes on in the services "
            "(chunklab load-cancel <id> cancels a load)",
            file=sys.stderr,
        )
        return 130
    finally:
        tracing.stop()
        if stack is not None:
            stack.stop()


if __name__ == "__main__":
    sys.exit(main())
