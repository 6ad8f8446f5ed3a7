"""Text as the strategies and the evaluator read it: the tokenizer, sentences, the
Markdown block scanner, page labels and reference excerpts located in a document."""
