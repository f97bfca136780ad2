"""Rate limits as PyGithub sees them: RateLimitOverview, primary exhaustion, secondary limits."""
import os
import time
from datetime import datetime, timezone

import pytest
from github import GithubRetry, RateLimitExceededException
from github.GithubException import RateLimitExceededExceedsMaxWait
from github.Rate import Rate
from github.RateLimit import RateLimit
from github.RateLimitOverview import RateLimitOverview

from conftest import PUBLIC_REPO, TIGHT_URL, URL, admin, client, push_fresh_sha


@pytest.mark.op("rate-limit/get")
def test_get_rate_limit_matches_headers(owner):
    owner.get_repo(PUBLIC_REPO).get_commit("main").get_combined_status()  # a charged request
    remaining, limit = owner.rate_limiting  # from that response's x-ratelimit-* headers
    reset = owner.rate_limiting_resettime

    overview = owner.get_rate_limit()
    assert isinstance(overview, RateLimitOverview)
    assert isinstance(overview.resources, RateLimit)
    core = overview.resources.core
    assert isinstance(core, Rate)
    assert (core.limit, core.remaining) == (limit, remaining)  # GET /rate_limit is not charged
    assert core.used == limit - remaining
    assert isinstance(core.reset, datetime) and core.reset.tzinfo == timezone.utc
    assert int(core.reset.timestamp()) == reset
    assert core.limit == 5000
    # PyGithub also reads the headers of the /rate_limit answer itself
    assert owner.rate_limiting == (core.remaining, core.limit)
    assert owner.get_rate_limit().resources.core.remaining == remaining


@pytest.mark.op("rate-limit/get")
def test_primary_limit_exhaustion_is_rate_limit_exceeded():
    """Tight server (10 requests/hour): the 11th charged request is PyGithub's RateLimitExceededException."""
    gh = client("stranger", url=TIGHT_URL, retry=None)
    commit = gh.get_repo(PUBLIC_REPO).get_commit("main")
    core = gh.get_rate_limit().resources.core
    assert core.limit == 10
    with pytest.raises(RateLimitExceededException) as ei:
        for _ in range(core.remaining + 1):
            commit.get_combined_status()
    e = ei.value
    assert type(e) is RateLimitExceededException
    assert e.status == 403
    assert e.data["message"].startswith("API rate limit exceeded")
    assert e.headers["x-ratelimit-remaining"] == "0"
    assert "retry-after" not in e.headers
    assert int(e.headers["x-ratelimit-reset"]) > time.time()
    # /rate_limit is never charged, so it still answers, and reports the exhaustion
    after = gh.get_rate_limit().resources.core
    assert (after.remaining, after.used) == (0, 10)

    # with its own retry and a wait cap, PyGithub reads x-ratelimit-reset and refuses to wait that long
    capped = client("stranger", url=TIGHT_URL, retry=GithubRetry(total=3, max_rate_limit_wait=5))
    with pytest.raises(RateLimitExceededExceedsMaxWait) as ei:
        capped.get_repo(PUBLIC_REPO).get_commit("main").get_combined_status()
    assert ei.value.wait > 5


def _inject_secondary(path):
    if os.environ.get("PLATFORM_CLUSTER"):
        pytest.skip("injected faults are kept per node; the balancer may send the request elsewhere")
    status, body = admin("POST", "/faults", {"kind": "secondary", "path": path, "count": 1, "retry_after": 1})
    if status == 404:
        pytest.skip("needs /_admin/faults")
    assert status in (200, 201, 204), (status, body)


SECONDARY = "secondary limit: RateLimitExceededException, default GithubRetry waits retry-after"


@pytest.mark.op("statuses/get-combined", note=SECONDARY)
def test_secondary_limit_is_classified_secondary():
    sha = push_fresh_sha()
    path = f"/repos/{PUBLIC_REPO}/commits/{sha}/status"
    _inject_secondary(path)
    gh = client("owner", retry=None)
    with pytest.raises(RateLimitExceededException) as ei:
        gh.get_repo(PUBLIC_REPO).get_commit(sha).get_combined_status()
    e = ei.value
    assert "secondary rate limit" in e.data["message"]
    assert e.headers["retry-after"] == "1"
    # the fault was consumed: the next call succeeds
    assert gh.get_repo(PUBLIC_REPO).get_commit(sha).get_combined_status().sha == sha


@pytest.mark.op("statuses/get-combined", note=SECONDARY)
def test_secondary_limit_default_retry_waits_retry_after():
    sha = push_fresh_sha()
    _inject_secondary(f"/repos/{PUBLIC_REPO}/commits/{sha}/status")
    gh = client("owner")  # PyGithub's default GithubRetry
    started = time.monotonic()
    combined = gh.get_repo(PUBLIC_REPO).get_commit(sha).get_combined_status()
    assert combined.sha == sha
    assert time.monotonic() - started >= 1.0
