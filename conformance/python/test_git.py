"""Branches, commits and refs through PyGithub's Repository, Branch, Commit and GitRef objects:
branches pushed through the control plane (names with slashes), the 422 of an unknown ref.
"""
import secrets

import pytest
from github import GithubException, UnknownObjectException

from conftest import push_branch


@pytest.fixture
def branches():
    """Two fresh branches `<prefix>/a` and `<prefix>/b`: (prefix, {name: sha})."""
    prefix = f"py-git-{secrets.token_hex(4)}"
    return prefix, {f"{prefix}/{x}": push_branch(f"{prefix}/{x}") for x in "ab"}


@pytest.mark.op("branches/list")
def test_get_branches(public_repo, branches):
    prefix, made = branches
    mine = [b for b in public_repo.get_branches() if b.name.startswith(prefix + "/")]
    assert [b.name for b in mine] == sorted(made)
    assert all(b.commit.sha == made[b.name] for b in mine)
    # Rulesets other tests create may protect them: a boolean either way.
    assert all(isinstance(b.protected, bool) for b in mine)


@pytest.mark.op("branches/get")
def test_get_branch(public_repo, branches):
    prefix, made = branches
    name = f"{prefix}/a"
    b = public_repo.get_branch(name)
    assert b.name == name and b.commit.sha == made[name]
    assert b.protection_url.endswith("/protection")
    with pytest.raises(UnknownObjectException):
        public_repo.get_branch(f"{prefix}/none")


@pytest.mark.op("commits/get")
def test_get_commit(public_repo, branches):
    prefix, made = branches
    name = f"{prefix}/b"
    for ref in [made[name], name]:
        c = public_repo.get_commit(ref)
        assert c.commit.tree.sha and c.commit.author.date is not None
        assert c.sha == made[name]
        assert c.parents == []
    with pytest.raises(GithubException) as e:
        public_repo.get_commit(f"{prefix}-none").commit
    assert e.value.status == 422


@pytest.mark.op("git/get-ref")
@pytest.mark.op("git/list-matching-refs")
def test_git_refs(public_repo, branches):
    prefix, made = branches
    ref = public_repo.get_git_ref(f"heads/{prefix}/a")
    assert ref.object.sha == made[f"{prefix}/a"] and ref.object.type == "commit"
    assert ref.ref == f"refs/heads/{prefix}/a"
    with pytest.raises(UnknownObjectException):
        public_repo.get_git_ref(f"heads/{prefix}").object
    refs = list(public_repo.get_git_matching_refs(f"heads/{prefix}/"))
    assert [r.ref for r in refs] == [f"refs/heads/{n}" for n in sorted(made)]
    assert list(public_repo.get_git_matching_refs(f"heads/{prefix}-none")) == []
