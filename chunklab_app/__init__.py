"""ChunkLab's applications, beside the library: the command line
(`python -m chunklab_app.cli`, installed as `chunklab`) and the stack
launcher (`python -m chunklab_app.stack`, what `make up` runs).

Both are clients of the services through `chunklab.client`; the launcher
also starts the services' and the UI's processes. The `chunklab` package
stays a library that imports neither (ADR 0042).
"""
