"""Source imports through PyGithub's ``Repository.create_source_import``/``get_source_import``:
a Git repository made here is imported from its local path (the server runs on this machine)
into a fresh repository; the other operations have no PyGithub method and are driven through its
requester. Every response carries ``Deprecation`` and ``Sunset``.
"""
import os
import pathlib
import secrets
import subprocess
import tempfile
import time

import pytest
from github import GithubException

from conftest import admin

REQUESTER = "no PyGithub method; driven through Github(...).requester.requestJsonAndCheck: works"
GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com",
           "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.com"}


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def source():
    """A bare Git repository with two commits on ``main``; yields (path, head sha)."""
    with tempfile.TemporaryDirectory() as d:
        work = pathlib.Path(d, "work")
        work.mkdir()
        git(work, "init", "-q", "-b", "main")
        for name in ("README", "a.txt"):
            (work / name).write_text(name)
            git(work, "add", name)
            git(work, "commit", "-q", "-m", f"add {name}")
        head = git(work, "rev-parse", "HEAD")
        bare = pathlib.Path(d, "source.git")
        git(d, "clone", "-q", "--bare", str(work), str(bare))
        yield str(bare), head


def fresh_repo(owner):
    name = f"py-import-{secrets.token_hex(4)}"
    status, body = admin("POST", "/repos", {"owner": "conf", "name": name, "private": True})
    assert status == 201, body
    return owner.get_repo(f"conf/{name}")


def wait_complete(repo):
    for _ in range(400):
        imp = repo.get_source_import()
        if imp.status not in ("detecting", "importing", "mapping", "pushing"):
            return imp
        time.sleep(0.05)
    raise AssertionError(f"import still {imp.status}")


@pytest.mark.op("imports/start")
@pytest.mark.op("imports/get")
def test_start_and_follow_an_import(owner, source):
    path, head = source
    repo = fresh_repo(owner)
    started = repo.create_source_import("git", path)
    assert started.status == "importing" and started.vcs == "git" and started.vcs_url == path
    assert started.raw_headers.get("sunset") == "Fri, 12 Apr 2024 00:00:00 GMT"
    imp = wait_complete(repo)
    assert imp.status == "complete", imp.raw_data
    assert imp.status_text == "Done"
    assert imp.authors_count == 1 and imp.has_large_files is False
    assert imp.url.endswith(f"/repos/{repo.full_name}/import")
    # The imported commit takes statuses.
    st = repo.get_commit(head).create_status("success", context="py-import")
    assert st.state == "success"
    with pytest.raises(GithubException) as e:
        repo.create_source_import("git", path)
    assert e.value.status == 422


@pytest.mark.op("imports/list-authors", supported=False, note=REQUESTER)
@pytest.mark.op("imports/map-author", supported=False, note=REQUESTER)
@pytest.mark.op("imports/list-large-files", supported=False, note=REQUESTER)
@pytest.mark.op("imports/set-lfs-preference", supported=False, note=REQUESTER)
@pytest.mark.op("imports/update", supported=False, note=REQUESTER)
@pytest.mark.op("imports/cancel", supported=False, note=REQUESTER)
def test_authors_large_files_lfs_update_cancel(owner, source):
    path, _ = source
    repo = fresh_repo(owner)
    repo.create_source_import("git", path)
    wait_complete(repo)
    base = f"/repos/{repo.full_name}/import"
    req = owner.requester
    _, authors = req.requestJsonAndCheck("GET", f"{base}/authors")
    assert [a["remote_id"] for a in authors] == ["ada@example.com"]
    _, mapped = req.requestJsonAndCheck("PATCH", f"{base}/authors/{authors[0]['id']}", input={"email": "ada@conf.example", "name": "Ada L."})
    assert mapped["email"] == "ada@conf.example" and mapped["remote_name"] == "Ada"
    _, files = req.requestJsonAndCheck("GET", f"{base}/large_files")
    assert files == []
    _, imp = req.requestJsonAndCheck("PATCH", f"{base}/lfs", input={"use_lfs": "opt_in"})
    assert imp["use_lfs"] is True
    with pytest.raises(GithubException) as e:
        req.requestJsonAndCheck("PATCH", f"{base}/lfs", input={"use_lfs": "sometimes"})
    assert e.value.status == 422
    _, restarted = req.requestJsonAndCheck("PATCH", base)
    assert restarted["status"] == "importing"
    assert wait_complete(repo).status == "complete"
    status, _, _ = req.requestJson("DELETE", base)
    assert status == 204
    with pytest.raises(GithubException) as e:
        repo.get_source_import()
    assert e.value.status == 404
