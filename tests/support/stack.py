"""How the tests' shared stack (the `stack` fixture in tests/conftest.py) is set."""

# The stack's evaluator sends reports in pieces this small, so that every report a test
# fetches comes in several (the default is the contract's 1 MiB).
REPORT_PIECE_BYTES = 16 * 1024
