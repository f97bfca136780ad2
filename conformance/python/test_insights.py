"""API usage insights through PyGithub's requester.

PyGithub has no methods for the insights operations, so they are driven through the client's own
requester (``requestJsonAndCheck``), which maps our errors to its exception types. A token made for
this test alone is the actor of a known number of requests; every operation must count exactly
those (the server runs on the system clock, so windows start an hour back).
"""
import os
import time
import datetime

import pytest
from github import GithubException, UnknownObjectException

from conftest import admin, client

REQUESTER = "no PyGithub method; driven through Github(...).requester.requestJsonAndCheck: works"
API = "/orgs/conf/insights/api"
CALLS = 3


def since():
    t = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture(scope="module")
def actor():
    """A fresh PAT of octo that makes CALLS requests to conf; returns (token id, octo's id)."""
    status, tok = admin("POST", "/tokens", {"kind": "classic", "login": "octo", "scopes": ["read:org"], "note": "py-insights"})
    assert status == 201, tok
    gh = client(tok["token"])
    for _ in range(CALLS):
        gh.requester.requestJsonAndCheck("GET", "/orgs/conf/security-managers")
    gh.close()
    if os.environ.get("PLATFORM_CLUSTER"):
        # Each node flushes the requests it recorded every second; a node reading insights
        # flushes only its own first.
        time.sleep(1.5)
    return tok["id"], tok["user_id"]


@pytest.fixture
def req():
    gh = client("owner")
    yield gh.requester
    gh.close()


@pytest.mark.op("insights/get-summary-stats-by-actor", supported=False, note=REQUESTER)
@pytest.mark.op("insights/get-summary-stats", supported=False, note=REQUESTER)
@pytest.mark.op("insights/get-summary-stats-by-user", supported=False, note=REQUESTER)
def test_summaries(req, actor):
    token_id, user_id = actor
    params = {"min_timestamp": since()}
    _, s = req.requestJsonAndCheck("GET", f"{API}/summary-stats/classic_pat/{token_id}", parameters=params)
    # (PyGithub adds the request's `url` to objects it returns.)
    assert (s["total_request_count"], s["rate_limited_request_count"]) == (CALLS, 0)
    _, org = req.requestJsonAndCheck("GET", f"{API}/summary-stats", parameters=params)
    _, user = req.requestJsonAndCheck("GET", f"{API}/summary-stats/users/{user_id}", parameters=params)
    assert org["total_request_count"] >= user["total_request_count"] >= CALLS
    # The API Insights permission alone suffices.
    reader = client("insights_reader")
    _, same = reader.requester.requestJsonAndCheck("GET", f"{API}/summary-stats/classic_pat/{token_id}", parameters=params)
    reader.close()
    assert same["total_request_count"] == CALLS


@pytest.mark.op("insights/get-route-stats-by-actor", supported=False, note=REQUESTER)
def test_route_stats(req, actor):
    token_id, _ = actor
    _, rows = req.requestJsonAndCheck(
        "GET", f"{API}/route-stats/classic_pat/{token_id}",
        parameters={"min_timestamp": since(), "sort": "total_request_count,api_route", "api_route_substring": "SECURITY"},
    )
    assert len(rows) == 1
    row = rows[0]
    assert (row["http_method"], row["api_route"]) == ("GET", "/orgs/:org/security-managers")
    assert (row["total_request_count"], row["rate_limited_request_count"]) == (CALLS, 0)
    assert row["last_rate_limited_timestamp"] is None and row["last_request_timestamp"].endswith("Z")


@pytest.mark.op("insights/get-time-stats-by-actor", supported=False, note=REQUESTER)
@pytest.mark.op("insights/get-time-stats", supported=False, note=REQUESTER)
@pytest.mark.op("insights/get-time-stats-by-user", supported=False, note=REQUESTER)
def test_time_stats(req, actor):
    token_id, user_id = actor
    params = {"min_timestamp": since(), "timestamp_increment": "5m"}
    _, buckets = req.requestJsonAndCheck("GET", f"{API}/time-stats/classic_pat/{token_id}", parameters=params)
    assert len(buckets) in (12, 13)  # an hour of 5-minute buckets, aligned
    assert sum(b["total_request_count"] for b in buckets) == CALLS
    for path in ("time-stats", f"time-stats/users/{user_id}"):
        _, series = req.requestJsonAndCheck("GET", f"{API}/{path}", parameters=params)
        assert sum(b["total_request_count"] for b in series) >= CALLS


@pytest.mark.op("insights/get-subject-stats", supported=False, note=REQUESTER)
@pytest.mark.op("insights/get-user-stats", supported=False, note=REQUESTER)
def test_subjects_and_user_actors(req, actor):
    token_id, user_id = actor
    _, subjects = req.requestJsonAndCheck(
        "GET", f"{API}/subject-stats", parameters={"min_timestamp": since(), "subject_name_substring": "OCT"}
    )
    octo = [s for s in subjects if s["subject_type"] == "user" and s["subject_id"] == user_id]
    assert octo and octo[0]["subject_name"] == "octo" and octo[0]["total_request_count"] >= CALLS
    _, actors = req.requestJsonAndCheck(
        "GET", f"{API}/user-stats/{user_id}", parameters={"min_timestamp": since(), "actor_name_substring": "py-insights"}
    )
    assert [(a["actor_type"], a["actor_id"], a["total_request_count"]) for a in actors] == [("classic_pat", token_id, CALLS)]


@pytest.mark.op("insights/get-summary-stats", supported=False, note=REQUESTER)
@pytest.mark.op("insights/get-time-stats", supported=False, note=REQUESTER)
def test_invalid_parameters_and_access(req):
    for path, params in (
        ("summary-stats", {}),
        ("summary-stats", {"min_timestamp": "yesterday"}),
        ("time-stats", {"min_timestamp": since()}),
        ("time-stats", {"min_timestamp": since(), "timestamp_increment": "5s"}),
    ):
        with pytest.raises(GithubException) as e:
            req.requestJsonAndCheck("GET", f"{API}/{path}", parameters=params)
        assert e.value.status == 422
    stranger = client("stranger").requester
    with pytest.raises(UnknownObjectException):
        stranger.requestJsonAndCheck("GET", f"{API}/summary-stats", parameters={"min_timestamp": since()})
