"""Experiments: planned, estimated, recorded, run on a worker under a lease, summarised."""
