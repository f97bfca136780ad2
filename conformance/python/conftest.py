"""Shared fixtures of the PyGithub conformance suite.

Environment (set by conformance/run): PLATFORM_URL, PLATFORM_TOKENS, PLATFORM_TIGHT_URL,
PLATFORM_TIGHT_TOKENS, PLATFORM_ADMIN_TOKEN, CONFORMANCE_RESULTS.

Every test names the operation(s) it drives with ``@pytest.mark.op("<operation id>")``;
``@pytest.mark.op(id, supported=False, note=...)`` marks an operation PyGithub has no method
for (it is then driven through PyGithub's generic requester and recorded as ``not-supported``).
At the end of the session the results go to $CONFORMANCE_RESULTS/pygithub.json
(format: conformance/matrix.py): an operation is ``fail`` if any of its tests failed.
"""
import importlib.metadata
import json
import os
import pathlib
import secrets
import urllib.error
import urllib.request

import pytest
from github import Auth, Github

URL = os.environ["PLATFORM_URL"].rstrip("/")
TIGHT_URL = os.environ["PLATFORM_TIGHT_URL"].rstrip("/")
ADMIN_TOKEN = os.environ["PLATFORM_ADMIN_TOKEN"]
TOKENS = json.loads(pathlib.Path(os.environ["PLATFORM_TOKENS"]).read_text())
TIGHT_TOKENS = json.loads(pathlib.Path(os.environ["PLATFORM_TIGHT_TOKENS"]).read_text())
PUBLIC_REPO = "conf/public-repo"
PRIVATE_REPO = "conf/private-repo"
PYGITHUB_VERSION = importlib.metadata.version("PyGithub")


# ---------------------------------------------------------------- clients


def client(token=None, *, url=URL, **kwargs):
    """A PyGithub client on the server: ``token`` is a seed token name, a raw token or None.

    Not lazy, PyGithub's default and what users run: ``get_repo``/``get_user``/``get_organization``/
    ``get_commit`` read GET /repos/{o}/{r}, /users/{u}, /orgs/{org}, …/commits/{ref} before the
    seed operation. ``lazy=True`` builds objects without requests (a test of laziness itself).
    """
    tokens = TOKENS if url == URL else TIGHT_TOKENS
    if token is not None:
        kwargs["auth"] = Auth.Token(tokens.get(token, token))
    kwargs.setdefault("lazy", False)
    # PyGithub throttles itself for the hosted service (1 s between writes, 0.25 s between requests);
    # a local test server needs no such courtesy.
    kwargs.setdefault("seconds_between_requests", 0)
    kwargs.setdefault("seconds_between_writes", 0)
    return Github(base_url=url, **kwargs)


@pytest.fixture
def owner():
    gh = client("owner")
    yield gh
    gh.close()


@pytest.fixture
def public_repo(owner):
    return owner.get_repo(PUBLIC_REPO)


# ---------------------------------------------------------------- control plane


def admin(method, path, body=None, *, url=URL):
    """Calls the control plane; returns (status, parsed JSON or None)."""
    req = urllib.request.Request(
        f"{url}/_admin{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={
            "Authorization": f"Bearer {ADMIN_TOKEN}",
            "Content-Type": "application/json",
            "User-Agent": "conformance-python",
        },
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            raw = r.read()
            return r.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw) if raw else None
        except ValueError:
            return e.code, raw.decode(errors="replace")


def push_branch(branch, repo=PUBLIC_REPO):
    """Pushes `branch` at a new random sha through the control plane; returns the sha."""
    sha = secrets.token_hex(20)
    status, body = admin("POST", f"/repos/{repo}/refs", {"ref": f"refs/heads/{branch}", "sha": sha})
    assert status == 201, (status, body)
    return sha


def push_fresh_sha(repo=PUBLIC_REPO):
    """Pushes a new branch at a random sha (statuses exist only on pushed commits); returns the sha."""
    return push_branch(f"py-{secrets.token_hex(6)}", repo)


@pytest.fixture
def fresh_sha():
    return push_fresh_sha()


# ---------------------------------------------------------------- results recorder

_results = {}  # op id -> {"failed": bool, "supported": bool, "notes": [str]}
_skipped = {}  # test node id -> reason


def pytest_configure(config):
    config.addinivalue_line("markers", "op(id, supported=True, note=None): operation a test drives")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        _skipped[item.nodeid] = reason
        for mark in item.iter_markers("op"):  # visible in the matrix note, not counted as a result
            notes = _results.setdefault(mark.args[0], {"failed": False, "supported": True, "notes": []})["notes"]
            if f"skipped: {reason}" not in notes:
                notes.append(f"skipped: {reason}")
        return report
    if report.when == "call" or report.failed:
        for mark in item.iter_markers("op"):
            entry = _results.setdefault(mark.args[0], {"failed": False, "supported": True, "notes": []})
            entry["ran"] = True
            entry["failed"] |= report.failed
            if mark.kwargs.get("supported") is False:
                entry["supported"] = False
            note = mark.kwargs.get("note")
            if note and note not in entry["notes"]:
                entry["notes"].append(note)
    return report


def pytest_sessionfinish(session, exitstatus):
    results = {}
    for op_id, e in sorted(_results.items()):
        if not e.get("ran"):
            continue
        status = "fail" if e["failed"] else ("pass" if e["supported"] else "not-supported")
        results[op_id] = {"status": status}
        if e["notes"]:
            results[op_id]["note"] = "; ".join(e["notes"])
    doc = {"client": "pygithub", "version": PYGITHUB_VERSION, "results": results}
    if _skipped:
        doc["skipped"] = _skipped  # not read by matrix.py; kept for humans
    out = pathlib.Path(os.environ.get("CONFORMANCE_RESULTS", "results"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "pygithub.json").write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
