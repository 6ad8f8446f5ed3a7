"""Every LLM feature against the real local server, with and without structured output.

Starts llama.cpp's server with SmolLM2-135M-Instruct (chunklab_app.local_llm) and
asks it what each feature asks, through the same code the services use: a
streamed answer, the four judges, a contextual chunk's situating context, a
generated question, an LLM rerank. JSON features (judges, questions, rerank)
run both ways side by side: structured output "auto" (response_format with the
schema, llama.cpp's grammar) and "off" (the prompt alone, then our parser).

Per feature and way: calls, tokens (prompt + completion, per call), seconds per
call (best round, and the spread over rounds) and the share of replies that were
usable (an answer or context that is not blank; a judge reply parse_reply reads;
a question whose excerpts are all located in the passage's document; a rerank
reply with one score per passage). One reply per call: no retries, so the share
is what a first attempt gives.

    .venv/bin/python bench/llm_features.py [--rounds 2]

Writes docs/benchmarks/llm_features.json (bench/benchmarks_page.py puts the table
on docs/benchmarks.md) and prints the table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chunklab.llm import ChatClient, ChatEndpoint, ChatResult, LLMError
from chunklab.llm_json import complete_json
from chunklab.text import excerpts
from chunklab.v1 import common_pb2
from chunklab_app.local_llm import LocalLLM
from chunklab_app.stack import free_port
from services.evaluator.judging import answers, judge
from services.evaluator.questions import question_prompt
from services.retriever.search import rerank

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "docs" / "benchmarks" / "llm_features.json"
COMMAND = ".venv/bin/python bench/llm_features.py"

PASSAGES = [
    "The lighthouse at Kell Point was built in 1874. Its keeper trims the wick every four hours and logs "
    "every passing ship in a red ledger.",
    "The ferry to Marrow Island leaves at seven each morning. It carries twelve cars and returns at noon "
    "unless the wind is above force six.",
    "Harbour fees are paid at the kiosk by the north pier. Boats under six metres pay half the fee, and "
    "fishing boats registered in the town pay none.",
]
DOCUMENT = "# Harbour guide\n\n" + "\n\n".join(PASSAGES)
QUESTIONS = ["When was the lighthouse built?", "When does the ferry leave?", "Who pays no harbour fee?"]
ANSWERS = ["It was built in 1874.", "At seven each morning.", "Fishing boats registered in the town."]
EXPECTED = ["1874", "seven in the morning", "registered fishing boats"]


class Tally:
    def __init__(self) -> None:
        self.calls = self.usable = self.tokens = 0
        self.seconds: list[float] = []

    def add(self, result: ChatResult | None, seconds: float, usable: bool) -> None:
        self.calls += 1
        self.usable += usable
        self.seconds.append(seconds)
        if result is not None:
            self.tokens += result.prompt_tokens + result.completion_tokens


def timed(call):
    started = time.perf_counter()
    try:
        value = call()
    except LLMError:
        value = None
    return value, time.perf_counter() - started


def answer_calls(client: ChatClient, tally: Tally) -> None:
    for question, passage in zip(QUESTIONS, PASSAGES):
        retrieved = [common_pb2.RetrievedChunk(chunk=common_pb2.Chunk(content=passage, document_name="guide.md"))]
        messages = answers.answer_messages(question, retrieved)
        pieces, seconds = timed(lambda: list(client.stream(messages, max_tokens=64)))
        result = pieces[-1] if pieces else None
        tally.add(result, seconds, bool(result and result.text.strip()))


def context_calls(client: ChatClient, tally: Tally) -> None:
    from services.chunker.strategies import contextual

    for passage in PASSAGES:
        user = (
            contextual.DOCUMENT_PROMPT.format(document=DOCUMENT) + "\n" + contextual.CHUNK_PROMPT.format(chunk=passage)
        )
        messages = [{"role": "user", "content": user}]
        result, seconds = timed(lambda: client.complete(messages, max_tokens=contextual.CONTEXT_MAX_TOKENS))
        tally.add(result, seconds, bool(result and result.text.strip()))


def judge_calls(client: ChatClient, tally: Tally) -> None:
    for question, passage, answer, expected in zip(QUESTIONS, PASSAGES, ANSWERS, EXPECTED):
        for measure in judge.MEASURES:
            prompt = judge.PROMPTS[measure].format(question=question, context=passage, answer=answer, expected=expected)
            messages = [{"role": "system", "content": judge.SYSTEM}, {"role": "user", "content": prompt}]
            reply, seconds = timed(
                lambda: (
                    complete_json(
                        client,
                        messages,
                        name=f"judge_{measure}",
                        schema=judge.schema(measure),
                        max_tokens=judge.MAX_TOKENS,
                    ).result
                )
            )
            try:
                usable = reply is not None and bool(judge.parse_reply(measure, reply.text, reply.finish_reason))
            except judge.UnusableReply:
                usable = False
            tally.add(reply, seconds, usable)


def question_calls(client: ChatClient, tally: Tally) -> None:
    for passage in PASSAGES:
        messages = question_prompt.messages("guide.md", passage)
        reply, seconds = timed(
            lambda: (
                complete_json(
                    client,
                    messages,
                    name=question_prompt.SCHEMA_NAME,
                    schema=question_prompt.schema(passage),
                    max_tokens=question_prompt.MAX_TOKENS,
                ).result
            )
        )
        try:
            draft = reply is not None and question_prompt.parse_reply(reply.text, reply.finish_reason)
            usable = bool(draft and draft.excerpts) and all(excerpts.locate(passage, e).located for e in draft.excerpts)
        except question_prompt.UnusableReply:
            usable = False
        tally.add(reply, seconds, usable)


def rerank_calls(client: ChatClient, tally: Tally) -> None:
    for question in QUESTIONS:
        reply, seconds = timed(
            lambda: (
                complete_json(
                    client,
                    rerank.llm_messages(question, PASSAGES),
                    name="rerank_scores",
                    schema=rerank.llm_schema(len(PASSAGES)),
                    max_tokens=rerank.llm_max_tokens(len(PASSAGES)),
                ).result
            )
        )
        try:
            usable = reply is not None and len(rerank.llm_scores(reply.text, len(PASSAGES))) == len(PASSAGES)
        except rerank.Unscorable:
            usable = False
        tally.add(reply, seconds, usable)


FEATURES = {
    "answer (streamed, 64 tokens)": (answer_calls, False),
    "contextual chunk context": (context_calls, False),
    "judges (4 measures)": (judge_calls, True),
    "question generation": (question_calls, True),
    "LLM rerank (3 passages)": (rerank_calls, True),
}


def measure(server: LocalLLM, rounds: int) -> list[dict]:
    rows = []
    for feature, (run, structured) in FEATURES.items():
        for mode in ("auto", "off") if structured else ("off",):
            endpoint = ChatEndpoint(server.base_url, "", server.model, 300.0, 0, mode)
            tallies = []
            for _ in range(rounds):
                tally = Tally()
                run(ChatClient(endpoint), tally)
                tallies.append(tally)
            per_call = [statistics.mean(t.seconds) for t in tallies]
            first = tallies[0]
            tokens = f"{first.tokens / max(first.calls, 1):.0f}"
            rows.append(
                {
                    "feature": feature,
                    "structured": ("response_format (schema)" if mode == "auto" else "off") if structured else "n/a",
                    "calls": first.calls,
                    "tokens_per_call": tokens,
                    "seconds_per_call": round(min(per_call), 2),
                    "spread": round(max(per_call) - min(per_call), 2),
                    "usable": f"{first.usable}/{first.calls}",
                    "usable_share": round(first.usable / max(first.calls, 1), 2),
                }
            )
            print(_line(rows[-1]), flush=True)
    return rows


COLUMNS = ("feature", "structured output", "calls", "tokens/call", "s/call (best)", "spread", "usable")


def _line(row: dict) -> str:
    return (
        f"{row['feature']:<30} {row['structured']:<25} {row['calls']:>5} {row['tokens_per_call']:>6} "
        f"{row['seconds_per_call']:>7.2f} ±{row['spread']:<5.2f} {row['usable']:>6} ({row['usable_share']:.0%})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, LocalLLM(free_port("127.0.0.1"), Path(folder) / "llm.log") as server:
        print(f"{server.model} on llama.cpp at {server.base_url}; {args.rounds} rounds", flush=True)
        rows = measure(server, args.rounds)
    results = {
        "columns": list(COLUMNS),
        "rows": rows,
        "rounds": args.rounds,
        "command": f"{COMMAND} --rounds {args.rounds}",
        "machine": {
            "cpu": platform.processor() or platform.machine(),
            "cores": os.cpu_count(),
            "load": ", ".join(f"{x:.1f}" for x in os.getloadavg()),
            "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        },
    }
    if not args.no_write:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
        print(f"stored {OUT.relative_to(REPO)} (bench/benchmarks_page.py puts it on docs/benchmarks.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
