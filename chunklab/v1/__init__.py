"""Generated from protos/chunklab/v1 by `make stubs`; do not edit."""
