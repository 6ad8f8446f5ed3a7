"""What the browser tests share: Chromium's path and flags, the documents and questions they
upload (hostile markup on purpose), and the steps a person takes on a Gradio page."""

from __future__ import annotations

import os
import re
from pathlib import Path

from chunklab_app.stack import Stack

CHROMIUM = Path("/usr/bin/chromium")


CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


# The markup in the Storms section must show as text and never run: documents are untrusted.
DOCUMENT = """# Lighthouse keeping

## History

The first lighthouses were fires lit on hilltops to guide ships home. Over centuries they became
towers of stone with oil lamps and polished reflectors. Keepers lived beside them with their families.

## The lens

Augustin Fresnel invented a lens in 1822 made of concentric prisms. It bent light into a narrow beam
that could be seen for twenty miles. Every major lighthouse adopted the Fresnel lens within fifty years.

## Daily duties

A keeper trimmed the wick every four hours, which is why keepers were called wickies. They polished
the brass, cleaned soot from the glass and wrote the weather in the logbook.

## Storms

Fog horns <img src=x onerror="window.__chunklab_xss=1"> warned ships in storms when the beam was hidden.

## Automation

Electric lamps and automatic timers replaced the keepers during the twentieth century. Today most
lights run by themselves and are checked by engineers a few times a year.
"""


SECONDS = 1000  # Playwright counts milliseconds


# Hostile on purpose: its markup must reach reports and the boundary viewer as text.
STORMS = """# Storm signals

## Fog

Fog horns <img src=x onerror="window.__chunklab_xss=1"> warned ships when the beam was hidden. The horn
sounded twice a minute <script>window.__chunklab_xss=2</script> for as long as the fog lasted.

## Flags

By day a keeper raised storm flags: a red pennant for a gale from the north and two black cones for a hurricane.
Fishing boats stayed in the harbour while the cones were up.

## Radio

From 1930 radio beacons sent a call sign in Morse code, so that ships could take a bearing without seeing
the light at all. The beacons ran on batteries charged by a windmill.
"""


QUESTIONS = [
    {
        "question": "What did fog horns do when the beam was hidden?",
        "references": [{"document": "storms.md", "content": "warned ships when the beam was hidden"}],
    },
    {
        "question": "Which flags meant a hurricane?",
        "expected_answer": "two black cones",
        "references": [{"document": "storms.md", "content": "two black cones for a hurricane"}],
    },
]


def upload(stack: Stack, name: str, text: str, collection: str = "") -> str:
    """A document uploaded through gRPC, as another client would; returns its id."""
    return stack.client().upload_document(text.encode(), name=name, collection=collection).document.document_id


def choose(page, elem_id: str, option: str | re.Pattern) -> None:
    """Picks an option of a Gradio dropdown by its label.

    Gradio places the option list once, when it opens: when the page moves under it (a table
    refreshing above, a document's text drawn), the list can stay outside the viewport where no
    click reaches it. The list is then closed and the field left, so that the next click focuses
    it again: Gradio opens the list on focus, and places it anew."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    field = page.locator(f"#{elem_id} input")
    for attempt in range(3):
        field.scroll_into_view_if_needed()
        field.click()
        try:
            page.get_by_role("option", name=option).first.click(timeout=15_000)
            return
        except PlaywrightTimeout:
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
            field.blur()


def documents_part(page, part: str) -> None:
    """Opens the Documents tab's part: "Upload and list", "Process", "Index sets and export" or
    "Boundaries" (the Documents tab itself when another tab is open)."""
    tab = page.get_by_role("tab", name="Documents", exact=True)
    if tab.get_attribute("aria-selected") != "true":
        tab.click()
    page.get_by_role("tab", name=part, exact=True).click()


def enter(field, value: str) -> None:
    """Types value into a number or text input and leaves the field, as a person does before
    pressing a button: the field commits what was typed when it loses focus, and the wait ends
    when the input shows the value."""
    from playwright.sync_api import expect

    field.fill(value)
    field.blur()
    expect(field).to_have_value(value)


def fill(page, elem_id: str, value: str) -> None:
    """Types into a Gradio textbox or number field, whichever element it renders."""
    page.locator(f"#{elem_id}").locator("textarea, input").first.fill(value)


# Where the browser tests leave their screenshots (the closing note lists them).
SCREENSHOTS = Path(
    os.environ.get("CHUNKLAB_SCREENSHOTS", Path(__file__).resolve().parents[2] / ".chunklab" / "screenshots")
)


def experiment_grids(page):
    """Opens the Experiments tab and waits until its strategy grids are drawn (the tab reads the
    chunker's strategies when it is opened: longer on a loaded machine)."""
    page.get_by_role("tab", name="Experiments").click()
    page.locator("#dry-run-button").wait_for(timeout=120 * SECONDS)


def plot_points(plot) -> tuple[int, int]:
    """(points drawn, points a person can see) in a Gradio native plot: a point of a colour
    category the plot did not know is drawn without a stroke on a transparent fill."""
    plot.locator("svg.marks").wait_for()
    strokes = plot.locator("g.mark-symbol.role-mark path").evaluate_all(
        "paths => paths.map(p => p.getAttribute('stroke') || '')"
    )
    return len(strokes), sum(1 for stroke in strokes if stroke not in ("", "none", "transparent"))


def page_at_failure(page, stack: Stack, name: str) -> str:
    """The open tabs, the shown text and the end of the UI's log, and a screenshot's path."""
    try:
        tabs = page.locator("[role=tab][aria-selected=true]:visible").all_inner_texts()
        shown = page.locator("[role=tabpanel]:visible").first.inner_text(timeout=5 * SECONDS)
        path = screenshot(page, f"failed-{name}")
    except Exception as exc:  # the page itself may be what broke
        tabs, shown, path = [], f"(the page could not be read: {exc})", "none"
    log = (stack.data_dir / "logs" / "ui.log").read_text(errors="replace").splitlines()[-40:]
    return "\n".join(
        [f"open tabs: {' > '.join(tabs)}", f"screenshot: {path}", "shown:", shown[-4000:], "the UI's log ends:", *log]
    )


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
