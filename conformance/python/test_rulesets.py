"""Repository rulesets and rules for a branch. PyGithub has no methods for them, so every operation
is driven through the client's own requester (``requestJsonAndCheck``), which still applies its
base URL, authentication, error mapping (``GithubException`` by status) and URL checks.

The seeded world has a ruleset on conf/public-repo protecting the default branch and an
organization ruleset that applies to every repository of conf.
"""
import secrets

import pytest
from github import GithubException, UnknownObjectException

from conftest import PUBLIC_REPO, client

REQUESTER = "no PyGithub method; driven through Github(...).requester.requestJsonAndCheck: works"
BASE = f"/repos/{PUBLIC_REPO}"


@pytest.fixture
def req():
    gh = client("owner")
    yield gh.requester
    gh.close()


def body(name):
    return {
        "name": name,
        "enforcement": "active",
        "conditions": {"ref_name": {"include": [f"refs/heads/{name}/*"], "exclude": [f"refs/heads/{name}/skip"]}},
        "rules": [
            {"type": "commit_message_pattern", "parameters": {"operator": "regex", "pattern": "^(fix|feat):"}},
            {"type": "required_status_checks", "parameters": {
                "strict_required_status_checks_policy": True, "required_status_checks": [{"context": "ci/build"}]}},
        ],
    }


def make(req, name=None):
    name = name or f"py-{secrets.token_hex(4)}"
    _, made = req.requestJsonAndCheck("POST", f"{BASE}/rulesets", input=body(name))
    return name, made


@pytest.mark.op("rulesets/create", supported=False, note=REQUESTER)
@pytest.mark.op("rulesets/get", supported=False, note=REQUESTER)
def test_create_and_get(req):
    name, made = make(req)
    assert made["name"] == name and made["target"] == "branch" and made["source"] == PUBLIC_REPO
    assert made["rules"][1]["parameters"]["required_status_checks"] == [{"context": "ci/build"}]
    _, got = req.requestJsonAndCheck("GET", f"{BASE}/rulesets/{made['id']}")
    got.pop("url", None)  # PyGithub's requester records the URL it fetched
    assert got == made


@pytest.mark.op("rulesets/create", supported=False, note=REQUESTER)
def test_create_refuses_an_invalid_regex(req):
    b = body("bad")
    b["rules"][0]["parameters"]["pattern"] = "(unclosed"
    with pytest.raises(GithubException) as e:
        req.requestJsonAndCheck("POST", f"{BASE}/rulesets", input=b)
    assert e.value.status == 422 and e.value.data["message"] == "Validation Failed"


@pytest.mark.op("rulesets/list", supported=False, note=REQUESTER)
def test_list_with_and_without_parents(req):
    _, made = make(req)
    _, everything = req.requestJsonAndCheck("GET", f"{BASE}/rulesets", parameters={"per_page": 100})
    ids = [r["id"] for r in everything]
    assert made["id"] in ids
    assert any(r["source_type"] == "Organization" for r in everything)
    _, own = req.requestJsonAndCheck("GET", f"{BASE}/rulesets", parameters={"per_page": 100, "includes_parents": "false"})
    assert all(r["source_type"] == "Repository" for r in own)
    with pytest.raises(GithubException) as e:
        req.requestJsonAndCheck("GET", f"{BASE}/rulesets", parameters={"targets": "branch,leaf"})
    assert e.value.status == 422


@pytest.mark.op("rulesets/update", supported=False, note=REQUESTER)
@pytest.mark.op("rulesets/list-history", supported=False, note=REQUESTER)
@pytest.mark.op("rulesets/get-version", supported=False, note=REQUESTER)
def test_update_history_and_version(req):
    name, made = make(req)
    _, up = req.requestJsonAndCheck("PUT", f"{BASE}/rulesets/{made['id']}", input={"name": name + "-renamed"})
    assert up["name"] == name + "-renamed" and up["rules"] == made["rules"]
    _, history = req.requestJsonAndCheck("GET", f"{BASE}/rulesets/{made['id']}/history")
    assert [v["actor"]["type"] for v in history] == ["User", "User"]
    _, v = req.requestJsonAndCheck("GET", f"{BASE}/rulesets/{made['id']}/history/{history[-1]['version_id']}")
    assert v["state"]["name"] == name


@pytest.mark.op("rulesets/delete", supported=False, note=REQUESTER)
def test_delete(req):
    _, made = make(req)
    status, _, _ = req.requestJson("DELETE", f"{BASE}/rulesets/{made['id']}")
    assert status == 204
    with pytest.raises(UnknownObjectException):
        req.requestJsonAndCheck("GET", f"{BASE}/rulesets/{made['id']}")


@pytest.mark.op("rules/list-for-branch", supported=False, note=REQUESTER)
def test_rules_for_a_branch(req):
    name, made = make(req)
    _, rules = req.requestJsonAndCheck("GET", f"{BASE}/rules/branches/{name}/x")
    assert [(r["type"], r["ruleset_source_type"]) for r in rules] == [
        ("commit_message_pattern", "Repository"), ("required_status_checks", "Repository"), ("required_signatures", "Organization")]
    assert rules[0]["ruleset_id"] == made["id"]
    _, skipped = req.requestJsonAndCheck("GET", f"{BASE}/rules/branches/{name}/skip")
    assert [r["type"] for r in skipped] == ["required_signatures"], "exclusions win"
    anonymous = client()
    _, main = anonymous.requester.requestJsonAndCheck("GET", f"{BASE}/rules/branches/main")
    assert [r["type"] for r in main] == ["deletion", "non_fast_forward", "required_signatures"]
    anonymous.close()
