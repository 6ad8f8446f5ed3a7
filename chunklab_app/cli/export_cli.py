"""`chunklab export`: take a configuration home (ADR 0060).

    chunklab export chunks --document handbook.md --strategy fixed_size --format langchain -o chunks.jsonl
    chunklab export snippet --experiment 7c1e...            # the experiment's winner
    chunklab export snippet --strategy fixed_size --knob fixed_size.chunk_size=256 --knob fixed_size.chunk_overlap=32

The mapping itself lives in chunklab_app/export.py; this module only reads flags,
asks the stack and prints.
"""

from __future__ import annotations

import sys

from chunklab import knobs
from chunklab.client import ChunkLab
from chunklab_app import export
from chunklab_app.cli import flags


class ExportUsage(Exception):
    """A command line that cannot work; the message says why."""


def add_export_command(commands) -> None:
    group = commands.add_parser("export", help="an index set's chunks as a file, or a configuration as code")
    kinds = group.add_subparsers(dest="export_kind", required=True)

    chunks = kinds.add_parser("chunks", help="write one index set's chunks as JSON lines")
    chunks.add_argument("--document", required=True, help="the document's id, or its file name when only one has it")
    chunks.add_argument("--strategy", required=True)
    chunks.add_argument("--config-id", default="", help="which index set (default: the active one)")
    chunks.add_argument(
        "--format",
        choices=export.FORMATS,
        default="jsonl",
        help="jsonl: ChunkLab's records; langchain: Document objects; llamaindex: TextNode objects",
    )
    chunks.add_argument("--embedding-model", default="", help="default: the stack's configured model")
    chunks.add_argument("-o", "--out", required=True, help="a file, or a folder (ending in /) that gets a named file")
    chunks.set_defaults(handler=cmd_export_chunks)

    code = kinds.add_parser("snippet", help="a configuration as ChunkLab, LangChain and LlamaIndex code")
    source = code.add_mutually_exclusive_group(required=True)
    source.add_argument("--experiment", help="an experiment's id: its winner's configuration")
    source.add_argument("--strategy", help="a strategy, with --knob values (the others at their defaults)")
    code.add_argument("--run", default="", help="with --experiment: this run instead of the winner")
    code.add_argument(
        "--knob",
        action="append",
        default=[],
        help="strategy.knob=value (repeatable; knob=value, since --strategy names one)",
    )
    code.add_argument(
        "--library",
        action="append",
        choices=export.LIBRARIES,
        help="only this library's code (repeatable; default: all three, to paste one of)",
    )
    code.set_defaults(handler=cmd_export_snippet)


def document_id_of(client: ChunkLab, given: str) -> str:
    """A document id, or the id of the one uploaded document with this file name."""
    documents = client.list_documents()
    if any(d.document_id == given for d in documents):
        return given
    named = [d for d in documents if d.name == given]
    if len(named) == 1:
        return named[0].document_id
    if named:
        ids = ", ".join(d.document_id for d in named)
        raise ExportUsage(f"{len(named)} documents are called {given!r} ({ids}); give --document one of these ids")
    raise ExportUsage(f"no document has the id or file name {given!r}; upload it, or see the Documents page")


def cmd_export_chunks(args, client: ChunkLab) -> int:
    try:
        path, count = export.write_export(
            client,
            document_id_of(client, args.document),
            args.strategy,
            args.format,
            args.out,
            config_id=args.config_id,
            embedding_model=args.embedding_model,
        )
    except export.ExportError as exc:
        raise ExportUsage(str(exc)) from None
    except OSError as exc:
        raise ExportUsage(f"cannot write {args.out}: {exc.strerror}") from None
    print(f"{count} chunks written to {path}", file=sys.stderr)
    return 0


def snippet_for_experiment(client: ChunkLab, experiment_id: str, run_key: str = "", libraries=export.LIBRARIES) -> str:
    """The winner's (or run_key's) configuration as code, with the experiment's retrieval settings."""
    experiment = client.get_experiment(experiment_id, without_results=True)
    try:
        run = export.winner_run(experiment, run_key)
    except export.ExportError as exc:
        raise ExportUsage(str(exc)) from None
    title = f"{run.run_key}: {'the winner of' if not run_key else 'a run of'} experiment {experiment_id}"
    return export.snippet(run.spec, run.config_id, run.retrieval, title=title, libraries=libraries)


def snippet_for_strategy(client: ChunkLab, strategy: str, settings: list[str], libraries=export.LIBRARIES) -> str:
    """A strategy with --knob [strategy.]knob=value settings (every other knob at its default) as code."""
    infos = {info.name: info for info in client.list_strategies()}
    if strategy not in infos:
        raise ExportUsage(f"unknown strategy {strategy}; the chunker offers {', '.join(infos)}")
    info = infos[strategy]
    (given,) = flags.strategy_specs([strategy], settings, [info])
    spec, config_id = export.resolved_spec(info, {name: knobs.python_value(v) for name, v in given.knobs.items()})
    return export.snippet(spec, config_id, libraries=libraries)


def cmd_export_snippet(args, client: ChunkLab) -> int:
    libraries = args.library or export.LIBRARIES
    if args.experiment:
        if args.knob:
            raise ExportUsage("--knob goes with --strategy; an experiment's run has its knobs")
        print(snippet_for_experiment(client, args.experiment, args.run, libraries), end="")
    else:
        if args.run:
            raise ExportUsage("--run goes with --experiment")
        print(snippet_for_strategy(client, args.strategy, args.knob, libraries), end="")
    return 0
