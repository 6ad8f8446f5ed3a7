"""The evaluator service (`python -m services.evaluator`): question sets,
answers, judges, experiments, comparisons, reports and feedback.

- server.py: the gRPC wiring; service.py: the logic objects per RPC group;
  peers.py: the one way to call ingest, the chunker and the retriever;
  deps.py: what the logic is given; queries.py: Answer and feedback; leases.py: which
  replica runs an experiment or a question generation.
- questions/: question sets (files, located references, generation).
- experiments/: plan, estimate, record, run (index sets, each question), summary,
  the grid, the winner's hold-out and the worker.
- judging/: answers, the LLM judge, retrieval measures, the metric catalogue,
  models and prices.
- reports/: comparisons, the verdict, the HTML report and its plots.
- storage/: the tables and one store per aggregate; migrations/: their revisions.
"""
