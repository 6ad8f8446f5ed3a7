# One image for every ChunkLab process; docker-compose.yml runs it once per
# service, each with its own command (`python -m services.<name>`,
# `python -m frontend`). Everything is installed and prepared at build time;
# at run time the image reaches no network and generates nothing.
FROM python:3.11-slim

# Offline at run time: the embedding model ships inside a package, its ONNX
# export (the default model, ADR 0071) is built from it below, and tiktoken
# reads its encodings from the cache written at build time below.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    GRADIO_ANALYTICS_ENABLED=False \
    TIKTOKEN_CACHE_DIR=/opt/tiktoken

# torch first and on its own, from the CPU index: from the default index it
# would bring the CUDA build. requirements.txt's torch==2.13.0 is then
# already satisfied by 2.13.0+cpu.
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu

COPY requirements.txt /tmp/requirements.txt
RUN pip install -r /tmp/requirements.txt

# The project itself (.dockerignore lets in only what it needs). The gRPC
# stubs are committed under chunklab/v1, so nothing is generated here.
COPY . /src
RUN pip install --no-deps /src \
    && mkdir -p /opt/chunklab \
    && cp /src/deploy/healthcheck.py /opt/chunklab/healthcheck.py \
    && rm -rf /src \
    && python -c "from chunklab import tokens; tokens.ensure_offline_cache('/opt/tiktoken')" \
    && python -m chunklab.embeddings.onnx_export

# A non-root user; /data is where compose mounts each service's volume (a new
# named volume takes this folder's owner).
RUN useradd --create-home --uid 10001 --user-group chunklab \
    && mkdir -p /data \
    && chown chunklab:chunklab /data
USER 10001:10001
WORKDIR /home/chunklab
ENV CHUNKLAB_DATA_DIR=/data

# Ports the services listen on by default (compose sets them explicitly).
EXPOSE 50051 50052 50053 50054 7860

# No default service: compose gives each container its command.
CMD ["python", "-c", "import sys; sys.exit('chunklab image: run a service, e.g. python -m services.ingest (see docker-compose.yml)')"]
