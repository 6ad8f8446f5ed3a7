"""The README's first command ends in `python -m chunklab_app.stack`: it starts
every process, loads the sample, prints the UI's URL, and Ctrl-C stops it all."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e


def test_the_stack_starts_serves_the_ui_and_stops_on_ctrl_c(tmp_path):
    env = dict(os.environ)
    env.update({f"CHUNKLAB_{name}_ADDRESS": "127.0.0.1:0" for name in ("INGEST", "CHUNKER", "RETRIEVER", "EVALUATOR")})
    env.update({"CHUNKLAB_DATA_DIR": str(tmp_path), "CHUNKLAB_UI_PORT": "0"})
    process = subprocess.Popen(  # two strategies keep the sample fast; `make up` processes them all
        [sys.executable, "-m", "chunklab_app.stack", "--sample-strategies", "fixed_size,recursive"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines = []
    try:
        for line in process.stdout:
            lines.append(line)
            if "ChunkLab is ready" in line:
                break
        output = "".join(lines)
        url = re.search(r"open (http://127\.0\.0\.1:\d+)", output)
        assert url, output
        with urllib.request.urlopen(url.group(1), timeout=30) as page:  # up while the sample loads
            assert page.status == 200 and b"ChunkLab" in page.read()
        for line in process.stdout:  # the sample, loaded in the background, says each step
            lines.append(line)
            if line.startswith("  sample     ready") or "could not be loaded" in line:
                break
        steps = [line.split(maxsplit=1)[1].strip() for line in lines if line.startswith("  sample ")]
        assert steps[0] == "loading in the background: the pages show it when it is ready"
        assert "processing state_of_the_union.md with fixed_size (1/2)" in steps
        assert steps[-1].startswith("ready in ") and steps[-1].endswith(
            "s: question set sample-questions, 2 experiments finished"
        ), "".join(lines)
        children = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True).stdout.split()
        assert len(children) == 5  # four services and the UI
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 0
    # The launcher has exited; each child it started ends (or is a zombie nobody reaps) soon after.
    wait_for(lambda: all(_ended(pid) for pid in children), "the stack's services and UI to end")


def _ended(pid: str) -> bool:
    status = Path(f"/proc/{pid}/status")
    try:
        return "zombie" in status.read_text().lower()
    except FileNotFoundError:
        return True


def test_make_bench_runs_every_benchmark_script_there_is():
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    plan = subprocess.run(["make", "-n", "bench"], cwd=repo, capture_output=True, text=True, check=True).stdout
    ran = set(re.search(r"for b in ([a-z_ ]+);", plan).group(1).split())
    scripts = {name[:-3] for name in os.listdir(os.path.join(repo, "bench")) if name.endswith(".py")}
    assert ran == scripts
