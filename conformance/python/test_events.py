"""Event feeds through PyGithub's own get_events() methods (Event objects, PaginatedList)."""
import secrets

import pytest
from github import GithubException
from github.Event import Event
from github.PaginatedList import PaginatedList

from conftest import PRIVATE_REPO, PUBLIC_REPO, admin, client

ORG = "conf"


def push_as(repo, login):
    sha = secrets.token_hex(20)
    branch = f"py-feed-{sha[:10]}"
    status, body = admin("POST", f"/repos/{repo}/refs", {"ref": f"refs/heads/{branch}", "sha": sha, "pusher": login})
    assert status == 201, (status, body)
    return branch, sha


@pytest.fixture(scope="module")
def world():
    login = f"py-feed-{secrets.token_hex(4)}"
    status, _ = admin("POST", "/users", {"login": login})
    assert status == 201
    status, tok = admin("POST", "/tokens", {"kind": "classic", "login": login, "scopes": ["repo"]})
    assert status == 201
    return {"login": login, "token": tok["token"], "public": push_as(PUBLIC_REPO, login), "private": push_as(PRIVATE_REPO, login)}


def pushes(events, sha):
    return [e for e in events if e.type == "PushEvent" and e.payload["head"] == sha]


def assert_event(e):
    assert isinstance(e, Event)
    assert isinstance(e.id, str)
    assert e.actor.login
    assert "/" in e.repo.name
    assert isinstance(e.public, bool)
    assert e.created_at.tzinfo is not None


@pytest.mark.op("events/list-public")
def test_public_events(world):
    events = client(world["token"]).get_events()
    assert isinstance(events, PaginatedList)
    got = list(events)
    assert 0 < len(got) <= 300
    for e in got:
        assert_event(e)
        assert e.public
    assert len(pushes(got, world["public"][1])) == 1
    assert not pushes(got, world["private"][1])


@pytest.mark.op("events/list-for-repo")
def test_repo_events_payloads(world):
    repo = client(world["token"]).get_repo(PUBLIC_REPO)
    got = list(repo.get_events())
    (push,) = pushes(got, world["public"][1])
    assert_event(push)
    assert push.actor.login == world["login"]
    assert push.repo.name == PUBLIC_REPO
    assert push.payload["ref"] == f"refs/heads/{world['public'][0]}"
    assert push.payload["before"] == "0" * 40
    create = [e for e in got if e.type == "CreateEvent" and e.payload["ref"] == world["public"][0]]
    assert create and create[0].payload["ref_type"] == "branch"


@pytest.mark.op("events/list-for-repo")
def test_private_repo_events_members_only(world):
    got = list(client("owner").get_repo(PRIVATE_REPO).get_events())
    assert len(pushes(got, world["private"][1])) == 1
    assert all(not e.public for e in got)
    with pytest.raises(GithubException) as e:
        list(client("stranger").get_repo(PRIVATE_REPO).get_events())
    assert e.value.status == 404


@pytest.mark.op("events/list-for-network")
def test_network_events(world):
    got = list(client(world["token"], lazy=False).get_repo(PUBLIC_REPO).get_network_events())
    assert len(pushes(got, world["public"][1])) == 1


@pytest.mark.op("events/list-for-org")
def test_org_events_carry_org(world):
    got = list(client().get_organization(ORG).get_events())
    assert got
    assert all(e.public and e.org.login == ORG for e in got)
    assert len(pushes(got, world["public"][1])) == 1
    assert not pushes(got, world["private"][1])


@pytest.mark.op("events/list-for-user")
def test_user_events_private_only_for_self(world):
    mine = list(client(world["token"]).get_user(world["login"]).get_events())
    assert len(pushes(mine, world["public"][1])) == 1
    assert len(pushes(mine, world["private"][1])) == 1
    theirs = list(client("stranger").get_user(world["login"]).get_events())
    assert len(pushes(theirs, world["public"][1])) == 1
    assert not pushes(theirs, world["private"][1])


@pytest.mark.op("events/list-public-for-user")
def test_public_events_for_user(world):
    got = list(client(world["token"]).get_user(world["login"]).get_public_events())
    assert sorted(e.type for e in got) == ["CreateEvent", "PushEvent"]
    assert all(e.public for e in got)


@pytest.mark.op("events/list-org-for-user")
def test_org_dashboard(world):
    gh = client("owner")
    got = list(gh.get_user().get_organization_events(gh.get_organization(ORG)))
    assert len(pushes(got, world["private"][1])) == 1
    assert all(e.org.login == ORG for e in got)


@pytest.mark.op("events/list-for-repo", note="conditional request via gh.requester with If-None-Match: 304, not charged")
def test_conditional_poll(world):
    gh = client(world["token"])
    status, headers, _ = gh.requester.requestJson("GET", f"/repos/{PUBLIC_REPO}/events")
    assert status == 200
    assert int(headers["x-poll-interval"]) >= 1
    used = headers["x-ratelimit-used"]
    status, headers2, _ = gh.requester.requestJson("GET", f"/repos/{PUBLIC_REPO}/events", headers={"If-None-Match": headers["etag"]})
    assert status == 304
    assert headers2["x-ratelimit-used"] == used
