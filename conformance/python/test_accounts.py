"""Users, organizations and teams through PyGithub's high-level objects: gh.get_user(),
gh.get_user(login), gh.get_organization(login), Organization.get_teams/get_team_by_slug,
AuthenticatedUser.get_orgs; and GET /meta through the requester (PyGithub has no method)."""
import secrets

import pytest
from github import GithubException, UnknownObjectException
from github.PaginatedList import PaginatedList
from github.Team import Team

from conftest import admin, client

META_NOTE = "no PyGithub method for GET /meta; driven through gh.requester.requestJsonAndCheck: works"


def fresh_user(scopes):
    login = f"py-acct-{secrets.token_hex(4)}"
    status, _ = admin("POST", "/users", {"login": login, "name": "Py Account"})
    assert status == 201
    status, tok = admin("POST", "/tokens", {"kind": "classic", "login": login, "scopes": scopes})
    assert status == 201
    return login, tok["token"]


@pytest.fixture(scope="module")
def world():
    """A fresh organization owned by `boss`, with `member`; teams Core (closed, member) and Hidden (secret, boss)."""
    boss, boss_token = fresh_user(["read:org", "user"])
    member, member_token = fresh_user(["read:org"])
    org = f"py-org-{secrets.token_hex(4)}"
    assert admin("POST", "/orgs", {"login": org, "name": "Py Org", "owners": [boss], "members": [member]})[0] == 201
    assert admin("POST", f"/orgs/{org}/teams", {"name": "Core", "members": [member]})[0] == 201
    assert admin("POST", f"/orgs/{org}/teams", {"name": "Hidden", "privacy": "secret", "members": [boss]})[0] == 201
    return {"org": org, "boss": (boss, boss_token), "member": (member, member_token)}


@pytest.mark.op("users/get-authenticated")
def test_authenticated_user(world):
    login, token = world["boss"]
    me = client(token).get_user()
    assert me.login == login
    assert me.name == "Py Account"
    assert me.total_private_repos == 0  # the private profile: the token has the user scope
    assert me.created_at.year >= 2000
    with pytest.raises(GithubException) as e:
        client().get_user().login
    assert e.value.status == 401


@pytest.mark.op("users/get-by-username")
def test_named_user_and_organization_as_user(world):
    gh = client()
    user = gh.get_user("octo")
    assert user.name == "Octo Owner"
    assert user.type == "User"
    assert user.public_repos == 0
    assert gh.get_user(world["org"]).type == "Organization"
    with pytest.raises(UnknownObjectException):
        gh.get_user(f"nobody-{secrets.token_hex(4)}").name


@pytest.mark.op("orgs/list-for-authenticated-user")
def test_orgs_of_authenticated_user(world):
    login, token = world["boss"]
    assert admin("POST", "/orgs", {"login": f"py-org2-{secrets.token_hex(4)}", "members": [login]})[0] == 201
    gh = client(token, per_page=1)
    orgs = list(gh.get_user().get_orgs())
    assert len(orgs) == 2
    assert world["org"] in [o.login for o in orgs]


@pytest.mark.op("orgs/get")
def test_organization(world):
    org = client(world["member"][1]).get_organization(world["org"])
    assert org.name == "Py Org"
    assert org.type == "Organization"
    assert org.public_repos == 0
    # Owner fields are for owners with admin:org: the seeded owner of conf sees the plan.
    conf = client("owner").get_organization("conf")
    assert conf.plan.seats >= 2
    with pytest.raises(UnknownObjectException):
        client().get_organization("octo").name


@pytest.mark.op("teams/list")
@pytest.mark.op("teams/get-by-name")
def test_teams_secret_for_members_only(world):
    boss = client(world["boss"][1]).get_organization(world["org"])
    member = client(world["member"][1]).get_organization(world["org"])
    assert sorted(t.slug for t in boss.get_teams()) == ["core", "hidden"]
    assert [t.slug for t in member.get_teams()] == ["core"]
    core = member.get_team_by_slug("core")
    assert core.members_count == 1
    assert core.privacy == "closed"
    assert core.organization.login == world["org"]
    assert boss.get_team_by_slug("hidden").privacy == "secret"
    with pytest.raises(UnknownObjectException):
        member.get_team_by_slug("hidden").privacy
    with pytest.raises(UnknownObjectException):
        list(client("owner").get_organization(world["org"]).get_teams())


@pytest.mark.op("teams/get-by-id", note="a Team from Organization.get_teams() completes through its url")
def test_listed_team_completes_through_its_url(world):
    member = client(world["member"][1]).get_organization(world["org"])
    (core,) = list(member.get_teams())
    assert core.members_count == 1  # not in the list shape: PyGithub reads the team's url
    assert core.organization.login == world["org"]


@pytest.mark.op("meta/get", supported=False, note=META_NOTE)
def test_meta():
    headers, meta = client().requester.requestJsonAndCheck("GET", "/meta")
    assert meta["verifiable_password_authentication"] is False
    assert isinstance(meta["hooks"], list)


ENT_NOTE = "no PyGithub method for enterprise teams; driven through PaginatedList(Team, gh.requester, ...) and Team objects: works"


@pytest.mark.op("enterprise-teams/list", supported=False, note=ENT_NOTE)
@pytest.mark.op("enterprise-teams/get", supported=False, note=ENT_NOTE)
def test_enterprise_teams():
    gh = client("owner", per_page=1)
    teams = list(PaginatedList(Team, gh.requester, "/enterprises/conf-ent/teams", None))
    assert "ent:conformance" in [t.slug for t in teams]
    headers, data = gh.requester.requestJsonAndCheck("GET", "/enterprises/conf-ent/teams/ent:conformance")
    team = Team(gh.requester, headers, data)
    assert team.name == "Conformance"
    assert team.organization_selection_type == "disabled"
    with pytest.raises(UnknownObjectException):
        client("stranger").requester.requestJsonAndCheck("GET", "/enterprises/conf-ent/teams")
