"""What every page and form shares: turning a failed call or a refused input into a readable
message in the page."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import gradio as gr

from chunklab.client import ClientError
from frontend.views import formatting

# Long enough to read a service's sentence, short enough not to pile up.
ERROR_SECONDS = 20


def user_error(message: str) -> gr.Error:
    """An error Gradio shows in the page as a message; expected, so not logged as a traceback."""
    return gr.Error(message, duration=ERROR_SECONDS, print_exception=False)


def told_sentence(exc: ClientError) -> str:
    """The one sentence a page shows for a failed call: a service's refusal as its own
    sentence, without the service's name and status code in front (a service out of
    reach keeps its address, which is what a person must check)."""
    prefix = f"{exc.service} service: {exc.code.name}: " if exc.code is not None else ""
    if not (prefix and exc.message.startswith(prefix)):
        return exc.message
    sentence = exc.details if exc.details.endswith((".", "!", "?")) else exc.details + "."
    # A first word starts the sentence in capitals; a knob or field name (fixed_size.chunk_overlap) stays as spelt.
    if re.match(r"[a-z]+(?![\w.])", sentence):
        sentence = sentence[0].upper() + sentence[1:]
    return sentence


def told_html(exc: ClientError) -> str:
    """told_sentence as an error line for a page's status or message area."""
    return formatting.message_html(told_sentence(exc), "error")


@contextmanager
def told_as_sentence() -> Iterator[None]:
    """Re-raises a ClientError as gr.Error carrying told_sentence: Gradio shows it in the
    page, no traceback. Handlers with a status area catch ClientError and return
    told_sentence there instead, so no component turns into an "Error" pill."""
    try:
        yield
    except ClientError as exc:
        raise user_error(told_sentence(exc)) from None


def said_in_place(outputs: int, at: int = 0) -> Callable:
    """For a handler of `outputs` outputs whose output `at` (the first unless told) is its
    status area: a refusal (the gr.Error of user_error or told_as_sentence) becomes that
    area's error line and the other outputs stay as they were, so no component turns into
    an "Error" pill."""

    def wrap(handler: Callable) -> Callable:
        def said(exc: gr.Error):
            line = formatting.message_html(exc.message, "error")
            if outputs == 1:
                return line
            return tuple(line if i == at else gr.skip() for i in range(outputs))

        if inspect.isgeneratorfunction(handler):  # a handler that streams its progress

            @functools.wraps(handler)
            def streamed(*args, **kwargs):
                try:
                    yield from handler(*args, **kwargs)
                except gr.Error as exc:
                    yield said(exc)

            return streamed

        @functools.wraps(handler)
        def handled(*args, **kwargs):
            try:
                return handler(*args, **kwargs)
            except gr.Error as exc:
                return said(exc)

        return handled

    return wrap


def said_as_info(exc: ClientError) -> dict:
    """A dropdown or input whose refresh failed keeps its value and says why under it,
    rather than turning into an "Error" pill."""
    return gr.update(info=told_sentence(exc))
