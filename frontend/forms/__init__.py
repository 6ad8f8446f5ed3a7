"""Shared form builders: the strategy forms drawn from the chunker's knobs, the experiment
config, the reranking and retrieval inputs, the document and question-set pickers, and the
export sections. Each module's pure checks come first, its Gradio inputs last."""
