"""The API's parts that need no cluster: token and session checks, the bind refusal, CORS, and
cross-site writes in the no-token mode (in process; nothing here touches Redis)."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from worker.api import create_app
from worker.api.auth import Auth
from worker.api.server import bind_problem, is_loopback
from worker.settings import Settings
from worker.storage import LocalStorage, StorageError

UNREACHABLE = "redis://127.0.0.1:1/0"


def settings(**values: str) -> Settings:
    return Settings(_env_file=None, broker_url=UNREACHABLE, **values)


def test_tokens_sessions_and_csrf() -> None:
    auth = Auth(" alpha-token , beta-token ,")
    assert auth.enabled and auth.valid_token("alpha-token") and auth.valid_token("beta-token")
    assert not auth.valid_token("alpha") and not auth.valid_token("") and not auth.valid_token("alpha-token ")
    session = auth.session_for("alpha-token")
    assert "alpha" not in session and auth.valid_session(session) and not auth.valid_session(session[:-1] + "0")
    assert auth.csrf_for(session) != auth.csrf_for(auth.session_for("beta-token"))
    assert Auth("alpha-token,beta-token").valid_session(session)  # replicas with the same tokens agree
    assert not Auth("beta-token").valid_session(session)  # a removed token ends its sessions
    assert not Auth("").enabled


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("::1", True), ("[::1]", True), ("localhost", True), ("127.0.0.2", True),
     ("0.0.0.0", False), ("::", False), ("10.0.0.5", False), ("no-such-host.invalid", False)],
)  # fmt: skip
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    problem = bind_problem(host, settings())
    assert (problem is None) is loopback
    assert bind_problem(host, settings(api_tokens="t0ken")) is None


def test_cors_is_off_unless_configured() -> None:
    preflight = {"Origin": "https://app.example", "Access-Control-Request-Method": "POST"}
    with TestClient(create_app(settings())) as c:
        r = c.options("/v1/jobs", headers=preflight)
        assert "access-control-allow-origin" not in r.headers
    with TestClient(create_app(settings(api_cors_origins="https://app.example"))) as c:
        r = c.options("/v1/jobs", headers=preflight)
        assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "https://app.example"
        r = c.options("/v1/jobs", headers={**preflight, "Origin": "https://evil.example"})
        assert r.headers.get("access-control-allow-origin") != "https://evil.example"


def test_no_token_mode_refuses_cross_site_writes() -> None:
    with TestClient(create_app(settings()), base_url="http://127.0.0.1:8080") as c:
        r = c.post("/v1/jobs", headers={"Origin": "https://evil.example"}, files={"file": ("a.pdf", b"%PDF-")})
        assert r.status_code == 403 and r.json() == {"error": "cross-site request from 'https://evil.example' refused"}
        r = c.post("/v1/jobs", headers={"Origin": "null"}, files={"file": ("a.pdf", b"%PDF-")})
        assert r.status_code == 403
        assert c.get("/healthz").json() == {"status": "ok"}
        assert c.get("/ui/login").status_code == 200
        r = c.post("/ui/logout", follow_redirects=False)
        assert r.status_code == 303 and 'tablesight_session=""' in r.headers["set-cookie"]


class BrokenStorage(LocalStorage):
    """A store whose reads fail: a bug (RuntimeError) for one document, an outage for another."""

    def get_bytes(self, key: str) -> bytes:
        if key.startswith("00000000000000aa/"):
            raise RuntimeError("secret internals /etc/passwd")
        raise StorageError("cannot read: connection refused", transient=True)


def test_errors_are_one_json_line_never_a_traceback(tmp_path) -> None:
    from worker.queue.client import JobClient

    client = JobClient(settings(), storage=BrokenStorage(tmp_path))
    with TestClient(create_app(client=client), raise_server_exceptions=False) as c:
        r = c.get("/v1/documents/00000000000000aa")
        assert r.status_code == 500 and r.json() == {
            "error": "internal error (RuntimeError); the server log has the details"
        }
        r = c.get("/v1/documents/00000000000000bb/tables/p0001-t01.png")
        assert r.status_code == 503 and r.json() == {"error": "storage: cannot read: connection refused"}
        r = c.get("/v1/documents/00000000000000bb/chunks", params={"max_tokens": "many"})
        assert r.status_code == 422 and "max_tokens" in r.json()["error"] and len(r.json()) == 1
        r = c.put("/v1/jobs/00000000000000000000000000000000")  # DELETE is a route now (cancel)
        assert r.status_code == 405 and set(r.json()) == {"error"}
    client.close()
