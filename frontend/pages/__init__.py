"""One module per page; each `build(gateway)` returns its own gr.Blocks for app.py to place in a tab."""
