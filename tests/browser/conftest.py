"""The browser tests' fixtures: each module's own stack with the UI, headless Chromium
(Debian's, never a download), and a page opened on the UI once its forms are drawn."""

from __future__ import annotations

import pytest

from chunklab_app.stack import Stack
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, SECONDS, STORMS, documents_part, page_at_failure, upload


@pytest.fixture(scope="module")
def ui_stack(tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (make browser) to run the browser tests")
    stack = Stack(data_dir=tmp_path_factory.mktemp("ui-stack"), ui=True).start()
    try:
        yield stack
    finally:
        stack.stop()


@pytest.fixture(scope="module")
def browser(ui_stack):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def storms(ui_stack) -> str:
    return upload(ui_stack, "storms.md", STORMS)


@pytest.fixture
def page(browser, ui_stack):
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1400, "height": 1200})
    page = context.new_page()
    # Waits end on what the page shows; these bounds (expect's own default is 5 s) only stop a hang,
    # and leave a loaded machine the time a chain of events takes there.
    page.set_default_timeout(30 * SECONDS)
    expect.set_options(timeout=30 * SECONDS)
    page.goto(ui_stack.ui_url)
    # The page opens on Start here, its steps read from the stack.
    page.locator("#start-steps [data-step]").first.wait_for(timeout=120 * SECONDS)
    # The strategy form appears once the chunker's ListStrategies has answered (after every call
    # the page makes as it loads, so longer on a loaded machine); the tests begin on Documents.
    documents_part(page, "Process")
    page.locator("#knob-fixed_size-chunk_size input").wait_for(timeout=120 * SECONDS)
    documents_part(page, "Upload and list")
    yield page
    expect.set_options(timeout=5 * SECONDS)
    context.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed browser test's report says what the page showed and what the UI logged then:
    a wait that timed out names only the element it waited for."""
    report = yield
    page, stack = item.funcargs.get("page"), item.funcargs.get("ui_stack")
    if report.when == "call" and report.failed and page is not None and stack is not None:
        report.sections.append(("the page when the test failed", page_at_failure(page, stack, item.name)))
    return report
