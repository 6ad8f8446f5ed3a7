"""What the command line prints for an experiment: the table reads its labels and
formats from the evaluator's metric catalogue, as the UI and the reports do."""

from __future__ import annotations

import io

from chunklab.v1 import evaluator_pb2
from chunklab.views.metric_format import MetricFormat
from chunklab_app.cli.terminal import print_table
from services.evaluator.judging import metric_catalog

SHOWN = {
    "IoU": "7.1%",
    "recall": "77.7%",
    "precision": "1.2%",
    "hit rate": "100.0%",
    "MRR": "0.756",
    "tokens sent": "1,234",
}


def test_the_experiment_table_shows_each_metric_as_the_catalogue_formats_it():
    run = evaluator_pb2.ExperimentRun(
        run_key="fixed_size[chunk_size=256]",
        questions_done=3,
        questions_total=3,
        mean_metrics=evaluator_pb2.RetrievalMetrics(
            recall=0.777, precision=0.0125, iou=0.071, hit_rate=1.0, mrr=0.756, questions_labelled=3, tokens_sent=1234
        ),
    )
    failed = evaluator_pb2.ExperimentRun(run_key="contextual_retrieval", error="no LLM endpoint is configured")
    experiment = evaluator_pb2.Experiment(
        experiment_id="e-1", state=evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED, runs=[run, failed]
    )
    metrics = MetricFormat(metric_catalog.list_metrics().metrics)
    out = io.StringIO()
    print_table(experiment, metrics, out)
    head, row, error = out.getvalue().splitlines()[1:]
    # The catalogue's labelled and efficiency groups in its order, as the verdict's table beneath
    # and the Compare page read (ADR 0077; test_metric_columns checks that none is left out).
    labels = [metrics.label(name) for name in metrics.groups("labelled", "efficiency")]
    assert head.split() == ["run", *" ".join(labels).split()] and row.split()[0] == "fixed_size[chunk_size=256]"
    cells = dict(zip(labels, row.split()[1:]))
    assert [(label, cells[label]) for label in labels if label in SHOWN] == list(SHOWN.items())
    assert error.split()[1:] == ["not", "measured:", "no", "LLM", "endpoint", "is", "configured"]
