"""Shared rendering: the view builders several tabs use (formatting, the retrieved chunks and
expansion tree, the experiments' tables and summaries, the result plots' data and section).
Pure functions of what the services return; the HTML comes from frontend/templates."""
