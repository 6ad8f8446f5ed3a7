"""The evaluator's tables, and one store per aggregate over them (Repository holds them all)."""
