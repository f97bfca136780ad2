"""Organization webhooks through PyGithub's Organization / Hook / HookDelivery objects, with real
signed deliveries to a local receiver.

PyGithub has no methods for the hook configuration endpoints nor for redelivery; those are driven
through the client's own requester (``requestJsonAndCheck``).
"""
import hashlib
import hmac
import http.server
import json
import secrets
import threading
import time

import pytest
from github import GithubException, UnknownObjectException
from github.Hook import Hook
from github.HookDelivery import HookDelivery, HookDeliverySummary

from conftest import client, push_fresh_sha

SECRET = "py-conformance-secret"
REQUESTER = "no PyGithub method; driven through Github(...).requester.requestJsonAndCheck: works"
RECEIVED = []


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        RECEIVED.append((dict((k.lower(), v) for k, v in self.headers.items()), body))
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def receiver_url():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/hook"
    srv.shutdown()


@pytest.fixture
def org():
    gh = client("owner")
    yield gh.get_organization("conf")
    gh.close()


def wait_for(pred, what, secs=10):
    deadline = time.time() + secs
    while True:
        v = pred()
        if v:
            return v
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def new_hook(org, receiver_url, **kw):
    url = f"{receiver_url}?h={secrets.token_hex(4)}"
    return org.create_hook("web", {"url": url, "content_type": "json", "secret": SECRET}, events=["push"], **kw)


def hits(hook_id, event=None):
    return [(h, b) for h, b in RECEIVED if h.get("x-service-hook-id") == str(hook_id) and (event is None or h.get("x-service-event") == event)]


@pytest.mark.op("org-hooks/create")
def test_create_hook(org, receiver_url):
    hook = new_hook(org, receiver_url)
    assert isinstance(hook, Hook)
    assert hook.name == "web" and hook.active is True and hook.events == ["push"]
    assert hook.config["secret"] == "********"
    assert hook.type == "Organization"
    headers, body = wait_for(lambda: hits(hook.id, "ping"), "the ping")[0]
    assert headers["x-service-signature-256"] == "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()


@pytest.mark.op("org-hooks/create")
def test_create_hook_needs_web(org, receiver_url):
    with pytest.raises(GithubException) as e:
        org.create_hook("email", {"url": receiver_url})
    assert e.value.status == 422


@pytest.mark.op("org-hooks/list")
@pytest.mark.op("org-hooks/get")
def test_get_hooks_and_hook(org, receiver_url):
    hook = new_hook(org, receiver_url)
    assert hook.id in [h.id for h in org.get_hooks()]
    got = org.get_hook(hook.id)
    assert got.config == hook.config and got.events == hook.events
    with pytest.raises(UnknownObjectException):
        org.get_hook(999999999).config


@pytest.mark.op("org-hooks/update")
def test_edit_hook_removes_secret_not_sent(org, receiver_url):
    hook = new_hook(org, receiver_url)
    edited = org.get_hook(hook.id)
    edited.edit("web", {"url": hook.config["url"], "content_type": "form"}, events=["push", "status"], active=True)
    assert edited.events == ["push", "status"]
    assert edited.config["content_type"] == "form"
    assert "secret" not in edited.config


@pytest.mark.op("org-hooks/get-config", supported=False, note=REQUESTER)
@pytest.mark.op("org-hooks/update-config", supported=False, note=REQUESTER)
def test_config_through_requester(org, receiver_url):
    hook = new_hook(org, receiver_url)
    _, cfg = org.requester.requestJsonAndCheck("GET", f"/orgs/conf/hooks/{hook.id}/config")
    assert cfg == {"content_type": "json", "insecure_ssl": "0", "secret": "********", "url": hook.config["url"]}
    _, cfg = org.requester.requestJsonAndCheck("PATCH", f"/orgs/conf/hooks/{hook.id}/config", input={"insecure_ssl": 1})
    assert cfg["insecure_ssl"] == "1" and cfg["secret"] == "********"


@pytest.mark.op("org-hooks/list-deliveries")
@pytest.mark.op("org-hooks/get-delivery")
@pytest.mark.op("org-hooks/redeliver", supported=False, note=REQUESTER)
def test_deliveries(org, receiver_url):
    hook = new_hook(org, receiver_url)
    sha = push_fresh_sha()
    headers, body = wait_for(lambda: hits(hook.id, "push"), "the push delivery")[0]
    assert json.loads(body)["after"] == sha
    assert headers["x-service-signature-256"] == "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()

    def done():
        items = list(org.get_hook_deliveries(hook.id))
        return items if len(items) >= 2 and all(i.status != "pending" for i in items) else None

    items = wait_for(done, "recorded deliveries")
    assert isinstance(items[0], HookDeliverySummary)
    assert items[0].event == "push" and items[0].status_code == 200
    assert items[0].guid == headers["x-service-delivery"]
    full = org.get_hook_delivery(hook.id, items[0].id)
    assert isinstance(full, HookDelivery)
    assert full.request.payload["after"] == sha
    assert full.response.payload == "ok"
    status, _ = org.requester.requestJsonAndCheck("POST", f"/orgs/conf/hooks/{hook.id}/deliveries/{items[0].id}/attempts")
    wait_for(lambda: len([h for h, _ in hits(hook.id, "push") if h["x-service-delivery"] == items[0].guid]) >= 2, "the redelivery")


@pytest.mark.op("org-hooks/ping")
def test_ping(org, receiver_url):
    hook = new_hook(org, receiver_url)
    hook.ping()
    wait_for(lambda: len(hits(hook.id, "ping")) >= 2, "the second ping")


@pytest.mark.op("org-hooks/delete")
def test_delete_hook(org, receiver_url):
    hook = new_hook(org, receiver_url)
    org.delete_hook(hook.id)
    with pytest.raises(UnknownObjectException):
        org.get_hook(hook.id).config
