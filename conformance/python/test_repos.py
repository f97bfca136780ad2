"""Repositories through PyGithub's own objects: gh.get_repo, Organization.get_repos/create_repo,
AuthenticatedUser.create_repo/get_repos, NamedUser.get_repos, Repository.edit/delete.

``client(..., lazy=False)`` makes get_repo fetch the repository (GET /repos/{owner}/{repo}).
"""
import secrets

import pytest
from github import GithubException, UnknownObjectException
from github.Repository import Repository

from conftest import PRIVATE_REPO, PUBLIC_REPO, admin, client

ORG = "conf"


def fresh_user(scopes=("repo", "delete_repo")):
    login = f"py-{secrets.token_hex(4)}"
    status, body = admin("POST", "/users", {"login": login})
    assert status == 201, (status, body)
    status, body = admin("POST", "/tokens", {"kind": "classic", "login": login, "scopes": list(scopes)})
    assert status == 201, (status, body)
    return login, body["token"]


@pytest.mark.op("repos/get")
def test_get_repo_full_repository():
    repo = client("owner", lazy=False).get_repo(PUBLIC_REPO)
    assert isinstance(repo, Repository)
    assert repo.full_name == PUBLIC_REPO
    assert repo.owner.login == ORG
    assert repo.organization.login == ORG
    assert repo.permissions.admin and repo.permissions.push and repo.permissions.pull
    assert repo.default_branch == "main"
    assert repo.private is False
    theirs = client("stranger", lazy=False).get_repo(PUBLIC_REPO)
    assert theirs.permissions.pull and not theirs.permissions.push
    with pytest.raises(UnknownObjectException):
        client("stranger", lazy=False).get_repo(PRIVATE_REPO)


@pytest.mark.op("repos/list-for-org")
def test_org_get_repos_members_see_private():
    mine = [r.full_name for r in client("owner").get_organization(ORG).get_repos()]
    assert PUBLIC_REPO in mine and PRIVATE_REPO in mine
    theirs = [r.full_name for r in client("stranger").get_organization(ORG).get_repos(type="all")]
    assert PUBLIC_REPO in theirs and PRIVATE_REPO not in theirs


@pytest.mark.op("repos/create-for-authenticated-user")
@pytest.mark.op("repos/list-for-authenticated-user")
@pytest.mark.op("repos/list-for-user", note="gh.get_user(login).get_repos(): the NamedUser is read through GET /users/{username}")
@pytest.mark.op("repos/update")
@pytest.mark.op("repos/delete")
def test_user_create_edit_delete():
    login, token = fresh_user()
    gh = client(token, lazy=False)
    me = gh.get_user()
    repo = me.create_repo("made by pygithub", description="py", homepage="https://py.example", auto_init=True)
    assert repo.full_name == f"{login}/made-by-pygithub"
    assert repo.description == "py" and repo.homepage == "https://py.example"
    assert repo.permissions.admin
    with pytest.raises(GithubException) as e:
        me.create_repo("made-by-pygithub")
    assert e.value.status == 422
    assert e.value.data["errors"][0]["message"] == "name already exists on this account"
    assert [r.full_name for r in me.get_repos()] == [repo.full_name]
    assert [r.name for r in client("stranger").get_user(login).get_repos()] == ["made-by-pygithub"]

    repo.edit(name="renamed-by-pygithub", description="edited", private=True)
    assert repo.name == "renamed-by-pygithub" and repo.private is True
    # The old name answers 301; the client follows it to the repository.
    assert gh.get_repo(f"{login}/made-by-pygithub").name == "renamed-by-pygithub"
    with pytest.raises(GithubException) as e:
        repo.edit(default_branch="nope")
    assert e.value.status == 422

    repo.delete()
    with pytest.raises(UnknownObjectException):
        gh.get_repo(f"{login}/renamed-by-pygithub")


@pytest.mark.op("repos/create-in-org")
@pytest.mark.op("repos/delete")
def test_org_create_repo():
    status, body = admin("POST", "/tokens", {"kind": "classic", "login": "octo", "scopes": ["repo", "delete_repo"]})
    assert status == 201, (status, body)
    org = client(body["token"]).get_organization(ORG)
    name = f"py-org-{secrets.token_hex(4)}"
    repo = org.create_repo(name, private=True)
    assert repo.full_name == f"{ORG}/{name}"
    assert repo.private is True and repo.organization.login == ORG
    repo.delete()
