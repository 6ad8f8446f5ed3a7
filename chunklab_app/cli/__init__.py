"""The command line (`chunklab`, `python -m chunklab_app.cli`): main.py builds the
parser and runs the commands, one module per command family beside it, flags.py
reads the strategy flags every command shares, terminal.py prints tables and progress."""
