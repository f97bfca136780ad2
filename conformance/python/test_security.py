"""Security managers and dependency alerts through PyGithub. It has no security-manager methods,
and its alert methods use the hosted platform's vendor path word, so they are driven through the client's own requester
(``requestJsonAndCheck``: its authentication, error mapping and JSON handling) with the spec's
paths, and PyGithub's PaginatedList follows the cursor Link headers."""
import pytest
from github import GithubException
from github.PaginatedList import PaginatedList
from github.GithubObject import NonCompletableGithubObject

from conftest import client

NOTE = "PyGithub's methods use the vendor path word; driven through Github(...).requester: works"
SM_NOTE = "no PyGithub method; driven through Github(...).requester: works"


class Alert(NonCompletableGithubObject):
    def _initAttributes(self):
        self.raw = None

    def _useAttributes(self, attributes):
        self.raw = attributes


@pytest.fixture
def req():
    gh = client("owner")
    yield gh.requester
    gh.close()


@pytest.mark.op("security-managers/add-team", supported=False, note=SM_NOTE)
@pytest.mark.op("security-managers/list-teams", supported=False, note=SM_NOTE)
@pytest.mark.op("security-managers/remove-team", supported=False, note=SM_NOTE)
def test_security_managers(req):
    headers, _ = req.requestJsonAndCheck("PUT", "/orgs/conf/security-managers/teams/security")
    assert headers["sunset"].endswith("GMT") and headers["deprecation"]
    _, teams = req.requestJsonAndCheck("GET", "/orgs/conf/security-managers")
    assert [t["slug"] for t in teams] == ["security"]
    req.requestJsonAndCheck("DELETE", "/orgs/conf/security-managers/teams/security")
    with pytest.raises(GithubException) as e:
        req.requestJsonAndCheck("PUT", "/orgs/conf/security-managers/teams/nope")
    assert e.value.status == 404


@pytest.mark.op("depbot-alerts/list-for-repo", supported=False, note=NOTE)
@pytest.mark.op("depbot-alerts/list-for-org", supported=False, note=NOTE)
@pytest.mark.op("depbot-alerts/list-for-enterprise", supported=False, note=NOTE)
def test_lists_paginate_by_cursor(req):
    repo = list(PaginatedList(Alert, req, "/repos/conf/public-repo/depbot/alerts", {"per_page": 1}))
    assert len(repo) >= 2 and len({a.raw["number"] for a in repo}) == len(repo)
    org = list(PaginatedList(Alert, req, "/orgs/conf/depbot/alerts", {"per_page": 1, "ecosystem": "npm,pip"}))
    assert {a.raw["repository"]["full_name"] for a in org} == {"conf/public-repo"}
    _, ent = req.requestJsonAndCheck("GET", "/enterprises/conf-ent/depbot/alerts", parameters={"has": "patch"})
    assert [a["repository"]["full_name"] for a in ent] == ["conf-sec/app"]
    with pytest.raises(GithubException) as e:
        req.requestJsonAndCheck("GET", "/repos/conf/public-repo/depbot/alerts", parameters={"severity": "urgent"})
    assert e.value.status == 422


@pytest.mark.op("depbot-alerts/get", supported=False, note=NOTE)
@pytest.mark.op("depbot-alerts/update", supported=False, note=NOTE)
def test_get_and_update(req):
    _, a = req.requestJsonAndCheck("GET", "/repos/conf/public-repo/depbot/alerts/1")
    assert a["dependency"]["package"] == {"ecosystem": "npm", "name": "lodash"}
    assert "cvss" in a["security_advisory"]
    with pytest.raises(GithubException) as e:
        req.requestJsonAndCheck("PATCH", "/repos/conf/public-repo/depbot/alerts/1", input={"state": "dismissed"})
    assert e.value.status == 422
    _, d = req.requestJsonAndCheck("PATCH", "/repos/conf/public-repo/depbot/alerts/1",
                                   input={"state": "dismissed", "dismissed_reason": "tolerable_risk"})
    assert d["state"] == "dismissed" and d["dismissed_by"]["login"] == "octo"
    _, o = req.requestJsonAndCheck("PATCH", "/repos/conf/public-repo/depbot/alerts/1", input={"state": "open"})
    assert o["state"] == "open" and o["dismissed_at"] is None
