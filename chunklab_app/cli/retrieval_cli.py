"""Retrieval on the command line: a flag per row of chunklab.retrieval.SETTINGS
(ADR 0045), for `experiment` and `query`, and the `query` command itself.

A flag is its field's path in RetrievalOptions (`filter.collections` is
--filter-collections), takes the contract's type and the retriever's bounds,
and a value out of bounds is refused by argparse in the retriever's own words
before anything is sent. A field added to the contract (and its row to
SETTINGS) is a flag of every command that takes retrieval options.
"""

from __future__ import annotations

import argparse

from google.protobuf import json_format

from chunklab import retrieval
from chunklab.client import ChunkLab
from chunklab.errors import InvalidArgument
from chunklab.text import pages
from chunklab.v1 import common_pb2
from chunklab.views import metric_format, numbers, retrieval_view

_METAVARS = {int: "N", float: "X", str: "NAME", list: "A,B"}


def flag(setting: retrieval.Setting) -> str:
    return "--" + setting.path.replace(".", "-").replace("_", "-")


def dest(setting: retrieval.Setting) -> str:
    """Where argparse keeps the value: apart from the commands' own arguments (an
    experiment's --strategy is its grids' list)."""
    return f"retrieval:{setting.path}"


def add_flags(parser: argparse.ArgumentParser, *, experiment: bool) -> None:
    """Every setting as a flag; for an experiment, those that name an index set (strategy,
    config_id) are left out, since its grids name them."""
    group = parser.add_argument_group(
        "retrieval options", "RetrievalOptions' fields, with the bounds the retriever enforces"
    )
    for setting in retrieval.SETTINGS:
        if setting.names_a_set and experiment:
            continue
        text = setting.help + (f"; {setting.bounds()}" if setting.high is not None else "")
        if setting.choices is not None:
            text += f"; one of {', '.join(setting.choices)}"
        if setting.kind is bool:
            group.add_argument(flag(setting), dest=dest(setting), action="store_true", help=text)
        elif setting.kind is list:
            group.add_argument(
                flag(setting),
                dest=dest(setting),
                action="extend",
                default=[],
                type=_parser(setting),
                metavar=_METAVARS[list],
                help=f"{text} (comma-separated, repeatable)",
            )
        else:
            group.add_argument(
                flag(setting), dest=dest(setting), type=_parser(setting), metavar=_METAVARS[setting.kind], help=text
            )


def _parser(setting: retrieval.Setting):
    """argparse's type for the setting: the value typed, then checked as the retriever checks it,
    except that a typed 0 never stands for a default (--top-k 0 is refused: leave the flag out)."""

    def parse(text: str):
        if setting.kind is list:
            value = [part.strip() for part in text.split(",")]
        else:
            try:
                value = setting.kind(text)
            except ValueError:
                wanted = "a whole number" if setting.kind is int else "a number"
                raise argparse.ArgumentTypeError(f"{setting.path} takes {wanted}, got {text!r}") from None
        try:
            setting.check_typed(value)
        except InvalidArgument as exc:
            raise argparse.ArgumentTypeError(exc.message) from None
        return value

    parse.__name__ = setting.path
    return parse


def options(args: argparse.Namespace, *, experiment: bool) -> common_pb2.RetrievalOptions:
    """The RetrievalOptions the flags give, checked whole as the retriever will check them
    (InvalidArgument, e.g. no --strategy for a query, or too many filter values)."""
    values = {s.path: getattr(args, dest(s)) for s in retrieval.SETTINGS if hasattr(args, dest(s))}
    built = retrieval.options(values)
    retrieval.check_options(built, needs_strategy=not experiment)
    return built


def add_query_command(commands) -> None:
    ask = commands.add_parser("query", help="retrieve the chunks for one question, as the Query page does")
    ask.add_argument("question")
    add_flags(ask, experiment=False)
    ask.add_argument("--json", action="store_true", help="print the RetrieveResponse as JSON")
    ask.set_defaults(handler=cmd_query)


def cmd_query(args, client: ChunkLab) -> int:
    """One question: the chunks the LLM would see, in document order, each with its label."""
    response = client.retrieve(args.question, options(args, experiment=False))
    if args.json:
        print(json_format.MessageToJson(response, preserving_proto_field_name=True))
        return 0
    for item in response.retrieved_chunks:
        chunk = item.chunk
        shown = metric_format.score(item.score) if item.HasField("score") else ""
        if item.HasField("rerank_score"):
            shown += f" rerank {metric_format.score(item.rerank_score)}"
        text = " ".join(chunk.content.split())
        page = pages.page_label(chunk.first_page, chunk.last_page)
        size = numbers.counted(chunk.token_count, "token") + (f", {page}" if page else "")
        print(
            f"{retrieval_view.label_name(item.label):<9} {shown:>6} {chunk.document_name} #{chunk.chunk_index} "
            f"({size}): {text[:100]}{'…' if len(text) > 100 else ''}"
        )
    return 0
