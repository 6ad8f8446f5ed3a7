"""Tuning studies: a budgeted search of chunking configurations, confirmed on held-out questions (ADR 0112)."""
