"""The API root, URLs PyGithub follows, credentials errors and conditional requests."""
import pytest
from github import BadCredentialsException
from github.RateLimitOverview import RateLimitOverview

from conftest import PUBLIC_REPO, URL, client

ROOT_NOTE = "no PyGithub method for GET /; driven through gh.requester.requestJsonAndCheck: works"


@pytest.mark.op("meta/root", supported=False, note=ROOT_NOTE)
def test_root_urls_are_followable(owner):
    headers, root = owner.requester.requestJsonAndCheck("GET", "/")
    assert root["rate_limit_url"] == f"{URL}/rate_limit"
    for key, value in root.items():
        if key.endswith("_url"):
            assert value.startswith(URL + "/"), (key, value)
    # PyGithub asserts scheme/host/port/path prefix of every absolute URL it follows
    headers, data = owner.requester.requestJsonAndCheck("GET", root["rate_limit_url"])
    assert isinstance(RateLimitOverview(owner.requester, headers, data).resources.core.limit, int)


@pytest.mark.op("meta/root", supported=False, note=ROOT_NOTE)
def test_root_anonymous():
    headers, root = client().requester.requestJsonAndCheck("GET", "/")
    assert "current_user_url" in root
    assert int(headers["x-ratelimit-limit"]) == 60


@pytest.mark.op("rate-limit/get")
def test_bad_token_is_bad_credentials():
    gh = client("svp_" + "0" * 36, retry=None)
    with pytest.raises(BadCredentialsException) as ei:
        gh.get_rate_limit()
    assert ei.value.status == 401
    assert ei.value.data["message"] == "Bad credentials"


@pytest.mark.op("statuses/get-combined", note="conditional request via gh.requester with If-None-Match: 304, not charged")
def test_conditional_request_304(owner):
    url = f"/repos/{PUBLIC_REPO}/commits/main/status"
    headers, data = owner.requester.requestJsonAndCheck("GET", url)
    sha = data["sha"]  # main's head
    etag = headers["etag"]
    assert etag.startswith('"') and etag.endswith('"')  # strong, quoted
    remaining = int(headers["x-ratelimit-remaining"])

    status, headers, body = owner.requester.requestJson("GET", url, headers={"If-None-Match": etag})
    assert status == 304
    assert not body
    # requestJsonAndCheck hands a 304 back as (headers, None), not as an exception
    headers, data = owner.requester.requestJsonAndCheck("GET", url, headers={"If-None-Match": etag})
    assert data is None or data == {"url": url}  # PyGithub adds "url" to GET dicts only
    assert int(headers["x-ratelimit-remaining"]) == remaining  # 304s are not charged
    # a stale validator gets the full answer
    headers, data = owner.requester.requestJsonAndCheck("GET", url, headers={"If-None-Match": '"stale"'})
    assert data["sha"] == sha
    assert int(headers["x-ratelimit-remaining"]) == remaining - 1


@pytest.mark.op("rate-limit/get")
def test_oauth_scopes_header(owner):
    owner.get_rate_limit()
    # PyGithub splits X-OAuth-Scopes on ", "
    assert sorted(owner.oauth_scopes) == sorted(["repo", "read:org", "notifications", "admin:org", "admin:org_hook", "admin:enterprise", "assistant"])
