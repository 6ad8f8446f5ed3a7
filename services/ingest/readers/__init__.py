"""One reader per format, each turning an upload's bytes into canonical text
and a DocumentTree: Markdown and text, DOCX, HTML, PDF; text decoding and
language detection beside them."""
