"""Commit statuses through PyGithub's own Commit / CommitStatus / CommitCombinedStatus objects.

The usual chain ``Github().get_repo(full_name).get_commit(sha).create_status(...)`` reads the
repository and the commit first; ``Github(lazy=True)`` skips both reads (PyGithub 2.x;
``get_repo(..., lazy=True)`` is deprecated in favour of ``Github(lazy=True)``).
"""
from datetime import datetime, timezone

import pytest
from github import GithubException, UnknownObjectException
from github.CommitCombinedStatus import CommitCombinedStatus
from github.CommitStatus import CommitStatus
from github.NamedUser import NamedUser
from github.PaginatedList import PaginatedList
from github.Repository import Repository

from conftest import PRIVATE_REPO, PUBLIC_REPO, URL, client, push_fresh_sha

CHAIN = "Github().get_repo(full_name).get_commit(sha): reads GET /repos/{owner}/{repo} and GET .../commits/{ref} first"


def test_get_commit_is_lazy(fresh_sha):
    commit = client("owner", lazy=True).get_repo(PUBLIC_REPO).get_commit(fresh_sha)
    assert not commit.completed
    assert commit.sha == fresh_sha  # taken from the lazy url, no request
    assert commit.url == f"/repos/{PUBLIC_REPO}/commits/{fresh_sha}"  # lazy: relative to base_url


@pytest.mark.op("statuses/create", note=CHAIN)
def test_create_status_every_argument(public_repo, fresh_sha):
    commit = public_repo.get_commit(fresh_sha)
    st = commit.create_status(
        "success", target_url="https://ci.example/build/1", description="Build passed", context="ci/build"
    )
    assert isinstance(st, CommitStatus)
    assert isinstance(st.id, int) and st.id > 0
    assert st.state == "success"
    assert st.target_url == "https://ci.example/build/1"
    assert st.description == "Build passed"
    assert st.context == "ci/build"
    assert isinstance(st.created_at, datetime) and st.created_at.tzinfo == timezone.utc
    assert isinstance(st.updated_at, datetime)
    assert abs((datetime.now(timezone.utc) - st.created_at).total_seconds()) < 300
    assert isinstance(st.creator, NamedUser)
    assert st.creator.login == "octo"
    assert isinstance(st.creator.id, int)
    assert st.url.startswith(f"{URL}/repos/{PUBLIC_REPO}/statuses/")
    assert st.avatar_url.startswith("http")
    assert st.node_id


@pytest.mark.op("statuses/create", note="lazy chain: Github(lazy=True).get_repo(...).get_commit(sha)")
def test_create_status_lazily(public_repo, fresh_sha):
    st = client("owner", lazy=True).get_repo(PUBLIC_REPO).get_commit(fresh_sha).create_status("pending")
    assert st.state == "pending"
    assert st.context == "default"
    assert st.description is None
    assert st.target_url is None


@pytest.mark.op("statuses/create")
def test_create_status_bad_state_is_422_with_errors(public_repo, fresh_sha):
    with pytest.raises(GithubException) as ei:
        public_repo.get_commit(fresh_sha).create_status("bogus", context="ci/x")
    e = ei.value
    assert type(e) is GithubException
    assert e.status == 422
    assert e.data["message"] == "Validation Failed"
    assert isinstance(e.data["errors"], list) and e.data["errors"]
    assert "documentation_url" in e.data


@pytest.mark.op("statuses/create")
def test_create_status_read_only_token_is_plain_403(fresh_sha):
    """An ordinary 403 must surface at once as GithubException (no retry-after, not a rate limit)."""
    gh = client("fine_grained_read")  # PyGithub's default GithubRetry
    with pytest.raises(GithubException) as ei:
        gh.get_repo(PUBLIC_REPO).get_commit(fresh_sha).create_status("success")
    assert type(ei.value) is GithubException
    assert ei.value.status == 403
    assert "retry-after" not in {k.lower() for k in ei.value.headers}


@pytest.fixture(scope="module")
def many_statuses():
    """75 statuses on a fresh pushed sha; description i = creation order."""
    sha = push_fresh_sha()
    commit = client("owner").get_repo(PUBLIC_REPO).get_commit(sha)
    for i in range(75):
        commit.create_status("success" if i % 2 else "pending", description=str(i), context=f"ci/{i % 5}")
    return sha


@pytest.mark.op("statuses/list-legacy", note="Commit.get_statuses() calls GET /repos/{owner}/{repo}/statuses/{sha}")
def test_get_statuses_paginates(many_statuses):
    statuses = client("owner", per_page=30).get_repo(PUBLIC_REPO).get_commit(many_statuses).get_statuses()
    assert isinstance(statuses, PaginatedList)
    assert statuses.totalCount == 75  # page count of rel="last" with per_page=1
    got = list(statuses)  # follows rel="next" across 3 pages
    assert [s.description for s in got] == [str(i) for i in reversed(range(75))]  # newest first
    assert len({s.id for s in got}) == 75
    assert all(isinstance(s, CommitStatus) and s.creator.login == "octo" for s in got)
    assert [s.description for s in statuses.get_page(2)] == [str(i) for i in reversed(range(15))]


@pytest.mark.op("statuses/list-legacy")
def test_get_statuses_reversed(many_statuses):
    statuses = client("owner", per_page=30).get_repo(PUBLIC_REPO).get_commit(many_statuses).get_statuses()
    assert [s.description for s in statuses.reversed] == [str(i) for i in range(75)]


@pytest.mark.op(
    "statuses/list",
    supported=False,
    note="no PyGithub method (Commit.get_statuses() uses the legacy route); "
    "driven through PaginatedList(CommitStatus, gh.requester, url): works",
)
def test_list_statuses_commits_route(many_statuses):
    gh = client("owner", per_page=30)
    statuses = PaginatedList(
        CommitStatus, gh.requester, f"/repos/{PUBLIC_REPO}/commits/{many_statuses}/statuses", None
    )
    assert statuses.totalCount == 75
    assert [s.description for s in statuses] == [str(i) for i in reversed(range(75))]


@pytest.mark.op("statuses/get-combined", note=CHAIN)
def test_get_combined_status(public_repo, fresh_sha):
    commit = public_repo.get_commit(fresh_sha)
    commit.create_status("success", context="ci/a")
    commit.create_status("pending", context="ci/b")
    commit.create_status("success", context="CI/B")  # contexts are case-insensitive
    commit.create_status("failure", context="ci/c", description="broken")
    combined = commit.get_combined_status()
    assert isinstance(combined, CommitCombinedStatus)
    assert combined.state == "failure"
    assert combined.sha == fresh_sha
    assert combined.total_count == 3
    assert [s.context.lower() for s in combined.statuses] == ["ci/c", "ci/b", "ci/a"]  # newest first
    assert [s.state for s in combined.statuses] == ["failure", "success", "success"]
    for s in combined.statuses:
        assert isinstance(s, CommitStatus)
        assert "creator" not in s.raw_data
        assert isinstance(s.created_at, datetime)
    assert isinstance(combined.repository, Repository)
    assert combined.repository.full_name == PUBLIC_REPO
    assert combined.repository.owner.login == "conf"
    assert combined.commit_url == f"{URL}/repos/{PUBLIC_REPO}/commits/{fresh_sha}"
    assert combined.url == f"{URL}/repos/{PUBLIC_REPO}/commits/{fresh_sha}/status"


@pytest.mark.op("statuses/get-combined")
def test_get_combined_status_without_statuses_is_pending(public_repo, fresh_sha):
    combined = public_repo.get_commit(fresh_sha).get_combined_status()
    assert combined.state == "pending"
    assert combined.total_count == 0
    assert combined.statuses == []


@pytest.mark.op("statuses/get-combined", note="branch names with '/' are percent-encoded by get_commit")
def test_get_combined_status_of_slashed_branch():
    combined = client().get_repo(PUBLIC_REPO).get_commit("feature/x").get_combined_status()  # anonymous: public
    assert combined.sha == "2" * 40


@pytest.mark.op("statuses/get-combined")
def test_private_repo_is_unknown_object_for_stranger():
    gh = client("stranger")
    with pytest.raises(UnknownObjectException) as ei:
        gh.get_repo(PRIVATE_REPO).get_commit("main").get_combined_status()
    assert ei.value.status == 404
    assert ei.value.data["message"] == "Not Found"
