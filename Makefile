# ChunkLab: every set-up step lives here, so that the README's two commands
# work on a fresh machine with Python 3.11 and make.
#   make up     set up, start the four services and the UI on loopback
#   make test   set up, then run the whole test suite
#   make llm    set up, then serve the local LLM (SmolLM2 on llama.cpp) on loopback;
#               CHUNKLAB_LLM_LOCAL=1 make up starts it with the stack (ADR 0135)

PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q
STAMP  := $(VENV)/.installed

.PHONY: up setup onnx stubs test browser broker postgres bench clean llm toolchain

up: setup stubs
	$(PY) -m chunklab_app.stack

setup: $(STAMP) onnx

# torch first and on its own: pinned, it resolves to the CPU build. llama-cpp-python
# (requirements-llm.txt) builds llama.cpp from its source package with gcc, g++ and
# cmake (PyPI has no Linux wheels): the first time takes minutes, then pip's cache keeps
# the wheel. A portable build (GGML_NATIVE=OFF: AVX2, no AMX): the native one faults
# on AMX here (ldtilecfg, a general protection fault). The local model's package goes
# without its declared dependencies (ADR 0135).
$(STAMP): requirements.txt requirements-dev.txt requirements-llm.txt requirements-llm-model.txt pyproject.toml | toolchain
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install torch==2.13.0
	CMAKE_ARGS="-DGGML_NATIVE=OFF" CMAKE_BUILD_PARALLEL_LEVEL=2 \
	  $(PIP) install -r requirements.txt -r requirements-dev.txt -r requirements-llm.txt
	$(PIP) install --no-deps -r requirements-llm-model.txt
	$(PIP) install --no-deps -e .
	touch $(STAMP)

# The bundled all-MiniLM-L6-v2 exported to ONNX (fp32 and int8), offline, from
# the packaged weights, into the environment (ADR 0062); a no-op once built.
onnx: $(STAMP)
	$(PY) -m chunklab.embeddings.onnx_export

# The local LLM server alone, on loopback port 8088 (--port to change it): an
# OpenAI-compatible endpoint for users without a key (chunklab_app/local_llm.py).
llm: setup
	$(PY) -m chunklab_app.local_llm

# Regenerates the gRPC stubs (with .pyi types) from protos/. Never edit them.
stubs: setup
	$(PY) -m tools.gen_stubs

# The compilers and cmake that build llama.cpp for llama-cpp-python, from the distribution.
toolchain:
	@{ command -v gcc && command -v g++ && command -v cmake; } >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq gcc g++ cmake >/dev/null; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq gcc g++ cmake >/dev/null; fi; }

# Chromium for the browser tests, from the distribution (never a download
# of its own by a test tool).
browser:
	@command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null; fi; }
	@# DejaVu Sans draws the Arabic of the right-to-left PDF tests (tests/support/pdf_structures.py).
	@test -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq fonts-dejavu-core >/dev/null; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq fonts-dejavu-core >/dev/null; fi; }

# A real Redis server for the broker tests (bulk loads, ADR 0037), from the
# distribution. The stack itself needs none: its default queue is embedded.
broker:
	@command -v redis-server >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq redis-server >/dev/null; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq redis-server >/dev/null; fi; }

# A real PostgreSQL for the persistence tests (issue 19), from the
# distribution; the tests start their own server (tests/support/postgres_server.py).
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq postgresql >/dev/null; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq postgresql >/dev/null; fi; }

# One process, one module after another (ADR 0161).
test: setup stubs browser broker postgres
	$(PY) -m pytest

# Every benchmark in turn (each compares side by side and prints its ratios; see the README).
BENCHES := ingest_throughput pdf_libraries ingest_fidelity chunker_bench retriever_bench retriever_layout index_sets grpc_idle evaluator_chroma bulk_load hybrid_scope report_size request_limits load boundaries_view embedding_backends growth replicas tracing_overhead cold_experiment dry_run_estimate study_speed study_goals llm_features benchmarks_page

bench: setup stubs
	set -e; for b in $(BENCHES); do echo "== bench/$$b.py"; $(PY) bench/$$b.py; done

clean:
	rm -rf $(VENV) .chunklab .pytest_cache
