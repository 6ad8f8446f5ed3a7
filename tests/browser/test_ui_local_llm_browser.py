"""The UI with the local LLM (issue 30, ADR 0135): a stack pointed at the real llama.cpp
server, as `CHUNKLAB_LLM_LOCAL=1 make up` points it, names that model on the Health page,
and an answer on the Query page is written by it and labelled with its name."""

from __future__ import annotations

import pytest

from chunklab.v1 import common_pb2
from chunklab_app.stack import Stack
from tests.support.browser import CHROMIUM, STORMS, screenshot, upload

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def ui_stack(tmp_path_factory, real_llm):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (make browser) to run the browser tests")
    stack = Stack(data_dir=tmp_path_factory.mktemp("ui-llm-stack"), ui=True)
    stack.extra_env.update(
        CHUNKLAB_LLM_BASE_URL=real_llm.base_url, CHUNKLAB_LLM_MODEL=real_llm.model, CHUNKLAB_LLM_API_KEY=""
    )
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()


@pytest.fixture(scope="module")
def processed_storms(ui_stack) -> str:
    document_id = upload(ui_stack, "storms.md", STORMS)
    spec = common_pb2.StrategySpec(name="fixed_size")
    spec.knobs["chunk_size"].int_value = 64
    spec.knobs["chunk_overlap"].int_value = 0
    list(ui_stack.client().process_document(document_id, [spec]))
    return document_id


def test_the_health_page_and_an_answer_name_the_local_model(page, real_llm, processed_storms):
    from playwright.sync_api import expect

    page.get_by_role("tab", name="Health").click()
    expect(page.locator(".cl-catalog").first).to_contain_text(f"LLM {real_llm.model} at {real_llm.base_url}")
    screenshot(page, "local-llm-health-names-the-model")

    page.get_by_role("tab", name="Query").click()
    page.locator("#query-text textarea").fill("Which flags meant a hurricane?")
    page.locator("#ask-button").click()
    # Written by the model, not the extractive fallback, and labelled with the model's name.
    written = page.locator("#answer .cl-answer[data-state=done]")
    expect(written).to_have_attribute("data-extractive", "false", timeout=300_000)
    expect(written.locator(".cl-answer-head")).to_contain_text(real_llm.model)
    assert written.locator(".cl-answer-text").inner_text().strip()
    screenshot(page, "local-llm-answer-names-the-model")
