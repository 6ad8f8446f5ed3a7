"""`chunklab questions generate|validate|import|export`: question sets from the
command line, through chunklab.client (ADR 0059).

    chunklab questions generate notes.md --count 20 --seed 7 --model gpt-4o-mini --out notes-questions.jsonl
    chunklab questions validate questions.jsonl --map sotu=<document id>
    chunklab questions import questions.jsonl --lenient
    chunklab questions export <question set id> --out questions.jsonl

Progress goes to stderr; the outcome to stdout (JSON with --json). Exit codes:
0 done (a set stored, a file with nothing to fix), 1 a generation that kept
nothing or was interrupted, a file whose import would be refused; 2 and 3 as
every command (bad usage, a service refused or unreachable).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from google.protobuf import json_format

from chunklab.client import ChunkLab, ClientError, generation_outcome
from chunklab.errors import InvalidArgument
from chunklab.v1 import evaluator_pb2
from chunklab_app.cli.terminal import Progress

G = evaluator_pb2


def mapping(items: list[str] | None) -> dict[str, str]:
    """--map corpus_id=document_id flags as the import header's document_ids."""
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise InvalidArgument(f"--map {item!r}: write corpus_id=document_id")
        out[key] = value
    return out


def _dict(message) -> dict:
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


def _word(enum, value: int, prefix: str) -> str:
    return enum.Name(value).removeprefix(prefix).lower()


def _check(args) -> int:
    return G.EXCERPT_CHECK_LENIENT if args.lenient else G.EXCERPT_CHECK_STRICT


# -- generate ------------------------------------------------------------------


def cmd_generate(args, client: ChunkLab) -> int:
    progress = Progress()
    document_ids = list(args.document_id or [])
    for name in args.files or []:
        document = client.upload_document(name, collection=args.collection).document
        document_ids.append(document.document_id)
        progress.message(f"uploaded {name} as {document.document_id}")
    if not document_ids and not args.resume:
        raise InvalidArgument("give the documents to generate from: files to upload, or --document-id")
    key = os.environ.get(args.api_key_env, "") if args.api_key_env else ""
    request = G.GenerateQuestionSetRequest(
        name=args.name or "",
        document_ids=document_ids,
        question_count=args.count,
        seed=args.seed,
        dry_run=args.dry_run,
        resume_generation_id=args.resume or "",
        embedding_model=args.embedding_model or "",
        generator_model=G.ModelEndpoint(base_url=args.base_url or "", model=args.model or "", api_key=key),
    )

    def shown(p: G.GenerationProgress) -> None:
        progress.update(p.passages_done, p.passages_total, f"kept {p.kept}, failed {p.failed}: {p.message}")

    outcome = generation_outcome(client.generate_question_set(request), shown)
    progress.close()
    if args.dry_run:
        print(json.dumps({"dry_run": True, "estimate": _dict(outcome.estimate) if outcome.estimate else {}}, indent=2))
        return 0
    generation = outcome.generation
    if generation is None:
        raise ClientError("the evaluator ended the stream without the generation; see its log", service="evaluator")
    dropped = {_word(G.DropReason, d.reason, "DROP_REASON_"): d.count for d in generation.dropped}
    problems = [
        {
            "passage": o.passage_number,
            "outcome": _word(G.GenerationOutcome, o.outcome, "GENERATION_OUTCOME_"),
            "reason": _word(G.DropReason, o.drop_reason, "DROP_REASON_") if o.drop_reason else "",
            "problem": o.problem,
        }
        for o in generation.outcomes
        if o.outcome != G.GENERATION_OUTCOME_KEPT
    ]
    state = _word(G.GenerationState, generation.state, "GENERATION_STATE_")
    if args.json:
        print(
            json.dumps(
                {
                    "generation_id": generation.generation_id,
                    "state": state,
                    "question_set_id": generation.question_set_id,
                    "asked": generation.asked,
                    "kept": generation.kept,
                    "dropped": dropped,
                    "failed": generation.failed,
                    "provenance": _dict(generation.provenance),
                    "problems": problems,
                },
                indent=2,
            )
        )
    else:
        said = ", ".join(f"{reason} {count}" for reason, count in dropped.items()) or "none"
        print(
            f"generation {generation.generation_id} {state}: kept {generation.kept} of {generation.asked} "
            f"asked (dropped: {said}; failed: {generation.failed})"
        )
        for problem in problems:
            print(f"  passage {problem['passage']}: {problem['outcome']} {problem['reason']}: {problem['problem']}")
        if generation.question_set_id:
            print(f"question set {generation.question_set_id}")
        elif generation.error:
            print(f"chunklab: {generation.error}", file=sys.stderr)
    if args.out and generation.question_set_id:
        Path(args.out).write_text(client.export_question_set(generation.question_set_id), encoding="utf-8")
        print(f"questions written to {args.out}", file=sys.stderr)
    return 0 if generation.state == G.GENERATION_STATE_SUCCEEDED else 1


# -- validate, import, export ----------------------------------------------------------


def _print_report(report: G.QuestionSetValidation) -> None:
    print(
        f"{report.questions_valid} of {report.questions_total} questions kept "
        f"({_word(G.ExcerptCheck, report.excerpt_check, 'EXCERPT_CHECK_')}); references: "
        f"{report.references_exact} exact, {report.references_snapped} snapped, {report.references_failed} "
        f"not located, of {report.references_total}"
    )
    for p in report.problems:
        print(
            f"{p.where} reference {p.reference_number}: {_word(G.ExcerptProblemKind, p.kind, 'EXCERPT_PROBLEM_KIND_')}"
            f"{' (left out)' if p.left_out else ''}: {p.message}"
        )


def refused(report: G.QuestionSetValidation) -> bool:
    """Whether an import with the report's mode would refuse the file."""
    if report.excerpt_check == G.EXCERPT_CHECK_LENIENT:
        return report.questions_valid == 0
    return bool(report.problems)


def cmd_validate(args, client: ChunkLab) -> int:
    report = client.validate_question_set(args.file, document_ids=mapping(args.map), excerpt_check=_check(args))
    if args.json:
        print(json.dumps(_dict(report), indent=2))
    else:
        _print_report(report)
    return 1 if refused(report) else 0


def cmd_import(args, client: ChunkLab) -> int:
    question_set = client.import_question_set(
        args.file, name=args.name or "", document_ids=mapping(args.map), excerpt_check=_check(args)
    )
    if args.json:
        print(
            json.dumps(
                {
                    "question_set_id": question_set.question_set_id,
                    "question_count": question_set.question_count,
                    "validation": _dict(question_set.validation),
                },
                indent=2,
            )
        )
    else:
        _print_report(question_set.validation)
        print(
            f"question set {question_set.question_set_id}: {question_set.question_count} questions "
            f"({question_set.validation.questions_left_out} left out)"
        )
    return 0


def cmd_export(args, client: ChunkLab) -> int:
    text = client.export_question_set(args.question_set_id)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"{text.count(chr(10))} questions written to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def add_questions_command(commands) -> None:
    questions = commands.add_parser("questions", help="generate, validate, import or export question sets")
    verbs = questions.add_subparsers(dest="verb", required=True)

    gen = verbs.add_parser("generate", help="generate a question set from documents with the chat endpoint")
    gen.add_argument("files", nargs="*", help="documents to upload first (already uploaded ones are reused)")
    gen.add_argument("--document-id", action="append", help="an uploaded document to use (repeatable)")
    gen.add_argument("--collection", default="", help="collection for uploaded documents")
    gen.add_argument("--count", type=int, default=20, help="questions to ask for, one per passage (default 20)")
    gen.add_argument("--seed", type=int, default=0, help="the same seed samples the same passages")
    gen.add_argument("--name")
    gen.add_argument("--base-url", help="the chat endpoint (default: CHUNKLAB_LLM_BASE_URL)")
    gen.add_argument("--model", help="the chat model (default: CHUNKLAB_LLM_MODEL)")
    gen.add_argument("--api-key-env", help="the environment variable that holds the endpoint's key")
    gen.add_argument("--embedding-model", help="finds near-duplicates (default: the stack's model)")
    gen.add_argument("--resume", metavar="GENERATION_ID", help="continue an interrupted generation")
    gen.add_argument("--dry-run", action="store_true", help="estimate calls, tokens and cost; nothing is called")
    gen.add_argument("--out", help="also write the set as JSONL here")
    gen.add_argument("--json", action="store_true", help="print the outcome as JSON")
    gen.set_defaults(handler=cmd_generate)

    for verb, handler, text in (
        ("validate", cmd_validate, "locate every excerpt of a file; nothing is stored"),
        ("import", cmd_import, "import a JSONL or CSV file"),
    ):
        sub = verbs.add_parser(verb, help=text)
        sub.add_argument("file")
        sub.add_argument("--map", action="append", help="corpus_id=document_id for references (repeatable)")
        sub.add_argument(
            "--lenient",
            action="store_true",
            help="keep the questions whose excerpts are located (snapped where close); default strict",
        )
        sub.add_argument("--json", action="store_true")
        if verb == "import":
            sub.add_argument("--name")
        sub.set_defaults(handler=handler)

    export = verbs.add_parser("export", help="write a question set as JSONL (stdout, or --out)")
    export.add_argument("question_set_id")
    export.add_argument("--out")
    export.set_defaults(handler=cmd_export)
