"""One package per tab; each package's `build(gateway)` returns its own gr.Blocks for
app.py to place in a tab, and its modules hold that tab's logic, layout and wiring."""
