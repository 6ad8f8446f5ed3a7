"""Renders HTML through Jinja2 templates with autoescape on.

Every HTML fragment of the UI and every report comes from a template: Python
prepares plain view data, the template lays it out, and Jinja escapes every
value it prints unless a template says otherwise. A package's own templates sit
in its `templates/` folder; the shared ones (the retrieved chunks and the
expansion tree, drawn alike by the UI and the reports) in `chunklab/views/templates/`.
Templates are package data, so they ship with any install.

Numbers go through chunklab.views.numbers as filters, so a template writes
`{{ tokens | count }}` ("1,077"), `| percent`, `| score`, `| duration` (seconds), `| size`
(bytes) the way every view does.

Undefined names raise (StrictUndefined): a misspelt field fails a test rather
than printing nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

import jinja2

from chunklab.views import numbers

SHARED = "chunklab.views"


@cache
def environment(package: str) -> jinja2.Environment:
    """The environment for one package's templates, falling back on the shared ones.

    Built on first use, not at import; one per package for the life of the process.
    """
    loaders = [jinja2.PackageLoader(package, "templates")] if package != SHARED else []
    loaders.append(jinja2.PackageLoader(SHARED, "templates"))
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(NUMBER_FILTERS)
    return env


# The number formats a template may apply, by filter name.
NUMBER_FILTERS = {
    "count": numbers.count,
    "median": numbers.median,
    "percent": numbers.percent,
    "score": numbers.score,
    "duration": numbers.duration,
    "size": numbers.size,
}


def render(package: str, template: str, /, **context: object) -> str:
    """package's template rendered with context: the HTML, every value escaped."""
    return environment(package).get_template(template).render(**context)


def render_pieces(package: str, template: str, piece_bytes: int, /, **context: object) -> Iterator[bytes]:
    """package's template rendered as render() does, as UTF-8 in pieces of exactly piece_bytes (the
    last one shorter), made as the template runs: a page of any size is never held whole. A piece may
    end inside a character; joined, the pieces are render(...).encode()."""
    if piece_bytes < 1:
        raise ValueError(f"pieces hold at least one byte, not {piece_bytes}")
    pending = bytearray()
    for text in environment(package).get_template(template).generate(**context):
        pending += text.encode()
        while len(pending) >= piece_bytes:
            yield bytes(pending[:piece_bytes])
            del pending[:piece_bytes]
    if pending:
        yield bytes(pending)


def render_macro(package: str, template: str, macro: str, /, *args: object, **kwargs: object) -> str:
    """One macro of package's template called with the arguments: for a fragment that
    several pages (or several packages) draw alike, such as the expansion tree."""
    return str(getattr(environment(package).get_template(template).module, macro)(*args, **kwargs))
