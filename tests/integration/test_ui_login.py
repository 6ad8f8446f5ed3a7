"""The UI asks for a login when the stack has a token, and serves https with
the services' certificate when TLS is on (ADR 0048): launched for real on
loopback, signed in over HTTP as a browser's login form would."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import gradio as gr
import pytest

from frontend.app import LOGIN_MESSAGE, launch, protection
from tests.support.certificates import make_certificates
from tests.support.fake_stubs import settings as base_settings

TOKEN = "ui-token-of-the-stack-0123456789"


def test_without_a_token_or_tls_the_ui_is_launched_open():
    assert protection(base_settings()) == {}


def test_with_a_token_the_login_takes_any_user_name_and_the_token_as_password():
    options = protection(base_settings().model_copy(update={"auth_token": TOKEN}))
    assert sorted(options) == ["auth", "auth_message"]
    assert options["auth_message"] == LOGIN_MESSAGE
    check = options["auth"]
    assert (check("chunklab", TOKEN), check("ada", TOKEN), check("chunklab", TOKEN[:-1]), check("chunklab", "")) == (
        True,
        True,
        False,
        False,
    )


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    """A small app launched as the UI's main() launches the real one: with a token and TLS."""
    certificates = make_certificates(tmp_path_factory.mktemp("ui-tls"))
    settings = base_settings().model_copy(
        update={"auth_token": TOKEN, "tls_cert": str(certificates.cert), "tls_key": str(certificates.key)}
    )
    with gr.Blocks() as app:
        gr.Markdown("inside")
    port = launch(app, "127.0.0.1", 0, settings=settings)
    yield f"https://127.0.0.1:{port}", ssl.create_default_context(cafile=str(certificates.ca))
    app.close()


def request(url: str, context: ssl.SSLContext, form: dict | None = None, cookie: str = "") -> tuple[int, dict, str]:
    """(status, body as JSON, the Set-Cookie header) of a GET, or of a POST of form."""
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    req = urllib.request.Request(url, data=data, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(req, context=context, timeout=30) as response:
            body = response.read()
            return response.status, json.loads(body) if body else {}, response.headers.get("Set-Cookie", "")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), ""


def test_the_ui_over_https_wants_a_login_and_takes_the_token_as_password(ui):
    base, context = ui
    status, body, _ = request(f"{base}/gradio_api/login_check", context)
    assert status == 401 and body["detail"]["auth_message"] == LOGIN_MESSAGE
    status, body, _ = request(f"{base}/login", context, {"username": "ada", "password": "not-the-token"})
    assert (status, body) == (400, {"detail": "Incorrect credentials."})
    status, body, set_cookie = request(f"{base}/login", context, {"username": "ada", "password": TOKEN})
    assert (status, body) == (200, {"success": True})
    cookie = next(part for part in set_cookie.split(";") if part.startswith("access-token"))
    status, _, _ = request(f"{base}/gradio_api/login_check", context, cookie=cookie)
    assert status == 200


def test_uploads_are_capped_and_kept_in_the_data_folder(tmp_path, monkeypatch):
    import uuid

    from frontend.app import keep_uploads_in_data_folder

    monkeypatch.delenv("GRADIO_TEMP_DIR", raising=False)
    settings = base_settings().model_copy(update={"data_dir": tmp_path / "data", "max_upload_mb": 0.01})
    folder = keep_uploads_in_data_folder(settings)
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(folder))  # undone after the test, like the line above
    assert folder == (tmp_path / "data" / "ui-uploads").resolve()
    with gr.Blocks() as app:
        gr.File(label="a document")
    port = launch(app, "127.0.0.1", 0, settings=settings)
    try:

        def upload(data: bytes) -> tuple[int, str]:
            boundary = uuid.uuid4().hex
            body = (
                (
                    f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="notes.md"\r\n'
                    f"Content-Type: text/markdown\r\n\r\n"
                ).encode()
                + data
                + f"\r\n--{boundary}--\r\n".encode()
            )
            req = urllib.request.Request(
                f"http://127.0.0.1:{port}/gradio_api/upload",
                data=body,
                headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
            )
            try:
                with urllib.request.urlopen(req, timeout=30) as response:
                    return response.status, response.read().decode()
            except urllib.error.HTTPError as exc:
                return exc.code, exc.read().decode()

        status, body = upload(b"# small\n" * 100)  # 800 bytes: under the 10 kB cap
        assert status == 200
        (stored,) = json.loads(body)
        assert stored.startswith(str(folder)) and Path(stored).read_bytes() == b"# small\n" * 100
        status, body = upload(b"x" * 20_000)
        assert status == 413 and not [p for p in folder.rglob("*") if p.is_file() and p.stat().st_size >= 20_000]
    finally:
        app.close()
