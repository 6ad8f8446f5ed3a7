"""Whether the chunker's size-bounded strategies still give the very same chunks: a hash per
configuration (strategy, knobs, text, with or without the document's parse, encoding threads),
recorded from one version of the code and compared against another.

Each hash covers every chunk's id, index, offsets, content, heading path and token count. The
texts: the three texts of bench/chunker_bench.py, every Markdown file under
../shared/data/real-docs/ and the chroma corpora, and seeded random texts that stress the token
map and the cascade (Windows line breaks, no line breaks, runs of spaces, no-break spaces,
unicode, and documents that repeat sections with small differences).

    PYTHONPATH=. .venv/bin/python -m tools.recursive_identity --record /tmp/identity.json   # on the old code
    PYTHONPATH=. .venv/bin/python -m tools.recursive_identity --compare /tmp/identity.json  # on the new code

--quick leaves out chunk size 16 on the long texts (the slowest configurations).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from pathlib import Path

from bench.chunker_bench import CORPORA
from bench.chunker_bench import texts as bench_texts
from chunklab.knobs import to_spec
from chunklab.text import tokens
from chunklab.v1 import documents_pb2
from services.chunker.strategies import REGISTRY, SourceDocument, offline_context
from services.ingest.readers.markdown import parse

REPO = Path(__file__).resolve().parent.parent
REAL_DOCS = REPO.parent / "shared" / "data" / "real-docs"
SIZES = (16, 64, 128, 512, 1024)
OVERLAPS = (0.0, 0.1, 0.25)
# Strategies that chunk without a model or an LLM, at their defaults (they share Spans).
OTHERS = ("markdown_structure", "parent_child", "sentence_window")


def _section(rng: random.Random, n: int) -> str:
    words = ["alpha", "beta", "Gamma", "delta.", "e\u00e9t\u00e9", "\u65e5\u672c\u8a9e", "x2", "3.14", "\U0001f600"]
    lines = [f"## Part {n}", ""]
    for _ in range(rng.randint(2, 8)):
        lines.append(" ".join(rng.choice(words) for _ in range(rng.randint(3, 60))) + rng.choice([".", "!", "?", ""]))
        if rng.random() < 0.5:
            lines.append("")
    return "\n".join(lines) + "\n\n"


def random_texts(seed: int = 29) -> dict[str, str]:
    """Texts that take every path of the map and the cascade."""
    rng = random.Random(seed)
    alphabet = "ab cd\u00a0ef. G!\n\t\u3000\u00e9\u0301\U0001f44d\u200d12 \r\n"
    sections = [_section(rng, n) for n in range(12)]
    varied = []
    for copy in range(6):  # the same sections again and again, a few words changed in some copies
        for n, section in enumerate(sections):
            if (copy + n) % 5 == 0:
                section = section.replace("alpha", f"alpha{copy}", 1)
            varied.append(section)
    block = "".join(sections[:4])
    return {
        "random-chars": "".join(rng.choice(alphabet) for _ in range(40_000)),
        "crlf": "".join(sections).replace("\n", "\r\n") * 3,
        "no-newlines": " ".join(rng.choice(["word", "longerword", "x", "42", "\u00e9t\u00e9"]) for _ in range(30_000)),
        "many-spaces": "".join(rng.choice(["a", " " * rng.randint(1, 90), "\n", "b.", "  \n"]) for _ in range(20_000)),
        "nbsp": "".join(sections).replace(" ", "\u00a0", 400),
        "unicode": "\n\n".join("".join(chr(rng.randint(0x20, 0x2FFF)) for _ in range(300)) for _ in range(60)),
        "repeats-varied": "".join(varied),
        "repeats-exact": block * 25,
        "repeats-headings": "".join(f"# Chapter {c}\n\n{block}" for c in range(10)),
        "repeats-no-newline-end": (block.rstrip() + " ") * 20,
    }


def all_texts() -> dict[str, str]:
    found = {f"bench:{key}": text for key, (_label, text) in bench_texts().items()}
    for path in sorted(CORPORA.glob("*.md")):
        found[f"corpus:{path.name}"] = path.read_text(encoding="utf-8")
    for path in sorted(REAL_DOCS.rglob("*.md")):
        found[f"real-docs:{path.relative_to(REAL_DOCS)}"] = path.read_text(encoding="utf-8")
    found.update({f"random:{k}": v for k, v in random_texts().items()})
    return found


def digest(chunks) -> str:
    h = hashlib.sha256()
    for c in chunks:
        fields = (c.chunk_id, c.chunk_index, c.start_char, c.end_char, c.token_count, c.content, list(c.heading_path))
        h.update(json.dumps(fields, ensure_ascii=False).encode())
    return f"{len(chunks)}:{h.hexdigest()[:24]}"


def configurations(long_text: bool, quick: bool) -> list[tuple[str, dict]]:
    found = []
    for size in SIZES:
        if quick and long_text and size == 16:
            continue
        for share in OVERLAPS:
            overlap = int(size * share)
            found.append(("recursive", {"chunk_size": size, "chunk_overlap": overlap}))
            found.append(("fixed_size", {"chunk_size": size, "chunk_overlap": overlap}))
    found += [(name, {}) for name in OTHERS]
    return found


def run(quick: bool, only: str | None) -> dict[str, str]:
    results: dict[str, str] = {}
    for name, text in all_texts().items():
        if only and only not in name:
            continue
        started = time.perf_counter()
        parsed = parse(text, documents_pb2.DOCUMENT_FORMAT_MARKDOWN)
        long_text = len(text) > 300_000
        for tree_name, tree in (("plain", None), ("parsed", parsed)):
            document = documents_pb2.Document(document_id="identity", name="x.md", text=text, language="en")
            if tree is not None:
                document.tree.CopyFrom(tree)
            threads = (1, 2) if name.startswith("bench:") else (1,)
            for thread_count in threads:
                saved, tokens.THREADS = tokens.THREADS, thread_count
                try:
                    source = SourceDocument(document)  # one map for every strategy, as the service does
                    for strategy, knobs in configurations(long_text, quick):
                        if thread_count == 2 and strategy != "recursive":
                            continue
                        chunks = REGISTRY.build(to_spec(strategy, knobs)).chunk(source, offline_context())
                        key = f"{name}|{tree_name}|t{thread_count}|{strategy}|{json.dumps(knobs, sort_keys=True)}"
                        results[key] = digest(chunks)
                finally:
                    tokens.THREADS = saved
        print(f"{name}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", type=Path)
    parser.add_argument("--compare", type=Path)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", help="only texts whose name holds this")
    args = parser.parse_args()
    tokens.ensure_offline_cache(REPO / ".chunklab" / "tiktoken")
    results = run(args.quick, args.only)
    chunks = sum(int(v.split(":")[0]) for v in results.values())
    if args.record:
        args.record.write_text(json.dumps(results, indent=0, sort_keys=True))
        print(f"recorded {len(results)} configurations ({chunks} chunks) in {args.record}")
    if args.compare:
        known = json.loads(args.compare.read_text())
        differ = [k for k, v in results.items() if k in known and known[k] != v]
        missing = [k for k in results if k not in known]
        for key in differ[:20]:
            print(f"DIFFERENT {key}: {known[key]} -> {results[key]}")
        print(
            f"{len(results) - len(differ) - len(missing)} of {len(results)} configurations identical "
            f"({chunks} chunks), {len(differ)} different, {len(missing)} not recorded"
        )
        if differ:
            sys.exit(1)


if __name__ == "__main__":
    main()
