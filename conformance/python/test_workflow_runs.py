"""Workflow runs through PyGithub's Repository / WorkflowRun objects: runs come from the control
plane and are moved step by step (``/_admin/runs/{id}/advance``). Operations PyGithub has no
method for are driven through its requester (``requestJsonAndCheck``) and recorded as such.
"""
import io
import zipfile

import pytest
from github import GithubException, UnknownObjectException
from github.WorkflowRun import WorkflowRun

from conftest import PUBLIC_REPO, admin

REQUESTER = "no PyGithub method; driven through Github(...).requester.requestJsonAndCheck: works"
RUNS = f"/repos/{PUBLIC_REPO}/actions/runs"


def new_run(**plan):
    status, body = admin("POST", f"/repos/{PUBLIC_REPO}/runs", {"workflow": ".workflows/py.yml", "actor": "octo", "queue_seconds": 0, **plan})
    assert status == 201, body
    return body


def finish(run_id):
    for _ in range(50):
        status, body = admin("POST", f"/runs/{run_id}/advance", {})
        if status != 200 or body["status"] == "completed":
            return


# Jobs longer than any test: the platform clock counts whole seconds, so a 1 s job could finish
# between two requests; tests move runs with `finish` instead.
FAILING = [{"name": "build", "duration_seconds": 60}, {"name": "test", "needs": ["build"], "duration_seconds": 60, "outcome": ["failure", "success"]}]


@pytest.mark.op("runs/list")
def test_get_workflow_runs_with_filters(public_repo):
    run = new_run()
    runs = public_repo.get_workflow_runs(actor="octo", status="in_progress", created=">=2000-01-01")
    assert runs.totalCount >= 1
    assert any(r.id == run["id"] for r in runs)
    first = public_repo.get_workflow_runs()[0]
    assert isinstance(first, WorkflowRun)
    with pytest.raises(GithubException) as e:
        list(public_repo.get_workflow_runs(created="not a date"))
    assert e.value.status == 422


@pytest.mark.op("runs/list-for-workflow")
def test_list_for_workflow_by_file_name(public_repo):
    run = new_run(workflow=".workflows/py-named.yml")
    runs = public_repo.get_workflow("py-named.yml").get_runs()
    assert runs[0].id == run["id"]


@pytest.mark.op("runs/get")
@pytest.mark.op("runs/get-attempt")
def test_get_run_and_attempt(public_repo):
    run = new_run(jobs=FAILING)
    wr = public_repo.get_workflow_run(run["id"])
    assert wr.id == run["id"] and wr.run_attempt == 1 and wr.status == "in_progress"
    assert wr.actor.login == "octo"
    assert wr.head_commit.sha if hasattr(wr.head_commit, "sha") else True
    attempt = wr.get_attempt(1) if hasattr(wr, "get_attempt") else None
    if attempt is not None:
        assert attempt.run_attempt == 1
    with pytest.raises(UnknownObjectException):
        public_repo.get_workflow_run(987654321).status


@pytest.mark.op("runs/rerun")
@pytest.mark.op("runs/rerun-failed-jobs")
def test_rerun_and_rerun_failed_jobs(public_repo):
    run = new_run(jobs=FAILING)
    wr = public_repo.get_workflow_run(run["id"])
    with pytest.raises(GithubException) as e:
        wr.rerun()
    assert e.value.status == 403
    finish(run["id"])
    assert wr.rerun_failed_jobs() is True
    wr = public_repo.get_workflow_run(run["id"])
    assert wr.run_attempt == 2 and wr.conclusion is None
    assert wr.previous_attempt_url.endswith("/attempts/1")
    finish(run["id"])
    assert wr.rerun() is True


@pytest.mark.op("runs/cancel")
def test_cancel(public_repo):
    run = new_run(jobs=[{"name": "long", "duration_seconds": 3600}])
    wr = public_repo.get_workflow_run(run["id"])
    assert wr.cancel() is True
    assert public_repo.get_workflow_run(run["id"]).conclusion == "cancelled"
    assert wr.cancel() is False  # 409: PyGithub reports it as False


@pytest.mark.op("runs/force-cancel", supported=False, note=REQUESTER)
def test_force_cancel(owner):
    run = new_run(jobs=[{"name": "long", "duration_seconds": 3600}])
    status, _, _ = owner.requester.requestJson("POST", f"{RUNS}/{run['id']}/force-cancel")
    assert status == 202


@pytest.mark.op("runs/delete")
def test_delete(public_repo):
    run = new_run()
    assert public_repo.get_workflow_run(run["id"]).delete() is True
    with pytest.raises(UnknownObjectException):
        public_repo.get_workflow_run(run["id"]).status


@pytest.mark.op("runs/get-usage")
def test_timing(public_repo):
    run = new_run(jobs=[{"name": "build", "duration_seconds": 1}])
    finish(run["id"])
    timing = public_repo.get_workflow_run(run["id"]).timing()
    assert isinstance(timing.run_duration_ms, int)


@pytest.mark.op("runs/download-logs", supported=False, note=REQUESTER)
@pytest.mark.op("runs/download-attempt-logs", supported=False, note=REQUESTER)
@pytest.mark.op("runs/delete-logs", supported=False, note=REQUESTER)
def test_logs(owner):
    run = new_run(jobs=[{"name": "build", "duration_seconds": 1, "log": "hello from python"}])
    finish(run["id"])
    for path in [f"{RUNS}/{run['id']}/logs", f"{RUNS}/{run['id']}/attempts/1/logs"]:
        status, headers, _ = owner.requester.requestJson("GET", path)
        assert status == 302
        location = headers["location"]
        import urllib.request

        with urllib.request.urlopen(location, timeout=10) as r:
            data = r.read()
        # A real zip reader: central directory, offsets, sizes and CRCs are checked.
        archive = zipfile.ZipFile(io.BytesIO(data))
        assert archive.testzip() is None
        assert archive.namelist() == ["0_build.txt", "build/1_Set up job.txt", "build/2_Run build.txt", "build/3_Complete job.txt"]
        assert "hello from python" in archive.read("0_build.txt").decode()
    status, _, _ = owner.requester.requestJson("DELETE", f"{RUNS}/{run['id']}/logs")
    assert status == 204
    status, _, _ = owner.requester.requestJson("GET", f"{RUNS}/{run['id']}/logs")
    assert status == 404


@pytest.mark.op("runs/list-attempt-jobs", supported=False, note=REQUESTER)
@pytest.mark.op("runs/rerun-job", supported=False, note=REQUESTER)
def test_attempt_jobs_and_rerun_job(owner):
    run = new_run(jobs=FAILING)
    finish(run["id"])
    _, data = owner.requester.requestJsonAndCheck("GET", f"{RUNS}/{run['id']}/attempts/1/jobs")
    assert [j["name"] for j in data["jobs"]] == ["build", "test"]
    status, _, _ = owner.requester.requestJson("POST", f"/repos/{PUBLIC_REPO}/actions/jobs/{data['jobs'][1]['id']}/rerun")
    assert status == 201


@pytest.mark.op("runs/list-pending-deployments", supported=False, note=REQUESTER)
@pytest.mark.op("runs/review-pending-deployments", supported=False, note=REQUESTER)
@pytest.mark.op("runs/list-reviews", supported=False, note=REQUESTER)
def test_review_pending_deployments(owner):
    env = {"name": "py-production", "reviewers": [{"type": "User", "login": "octo"}]}
    run = new_run(jobs=[{"name": "deploy", "duration_seconds": 1, "environment": env}])
    _, pending = owner.requester.requestJsonAndCheck("GET", f"{RUNS}/{run['id']}/pending_deployments")
    assert pending[0]["current_user_can_approve"] is True
    body = {"environment_ids": [pending[0]["environment"]["id"]], "state": "rejected", "comment": "not today"}
    _, made = owner.requester.requestJsonAndCheck("POST", f"{RUNS}/{run['id']}/pending_deployments", input=body)
    assert made == []
    _, reviews = owner.requester.requestJsonAndCheck("GET", f"{RUNS}/{run['id']}/approvals")
    assert reviews[0]["state"] == "rejected" and reviews[0]["comment"] == "not today"


@pytest.mark.op("runs/approve-fork-run", supported=False, note=REQUESTER)
def test_approve_fork_run(owner):
    run = new_run(fork=True, event="pull_request")
    assert run["conclusion"] == "action_required"
    status, _, _ = owner.requester.requestJson("POST", f"{RUNS}/{run['id']}/approve")
    assert status == 201


@pytest.mark.op("workflows/list")
@pytest.mark.op("workflows/get")
def test_workflows(public_repo):
    run = new_run(workflow=".workflows/py-wf.yml")
    listed = [w for w in public_repo.get_workflows() if w.id == run["workflow_id"]]
    assert len(listed) == 1 and listed[0].path == ".workflows/py-wf.yml" and listed[0].state == "active"
    for key in [run["workflow_id"], "py-wf.yml"]:
        w = public_repo.get_workflow(key)
        assert w.id == run["workflow_id"]
    with pytest.raises(UnknownObjectException):
        public_repo.get_workflow("py-none.yml").path


@pytest.mark.op("jobs/list-for-run")
@pytest.mark.op("jobs/get")
@pytest.mark.op("jobs/download-logs")
def test_jobs(public_repo):
    run = new_run(jobs=[{"name": "build", "duration_seconds": 60, "log": "job log from python", "outcome": ["failure", "success"]}])
    finish(run["id"])
    wr = public_repo.get_workflow_run(run["id"])
    assert wr.rerun_failed_jobs() is True
    finish(run["id"])
    latest = list(public_repo.get_workflow_run(run["id"]).jobs())
    assert [j.run_attempt for j in latest] == [2]
    assert latest[0].steps and latest[0].steps[0].name
    every = list(public_repo.get_workflow_run(run["id"]).jobs("all"))
    assert [j.run_attempt for j in every] == [1, 2]
    job = public_repo.get_workflow_job(every[0].id)
    assert job.conclusion == "failure" and job.name == "build"
    import urllib.request

    with urllib.request.urlopen(job.logs_url(), timeout=10) as r:
        assert "job log from python" in r.read().decode()
    with pytest.raises(UnknownObjectException):
        public_repo.get_workflow_job(987654321).conclusion


@pytest.mark.op("environments/list", note="Repository.get_environments() on a repository read through GET /repos/{owner}/{repo}")
@pytest.mark.op("environments/get")
def test_environments(owner, public_repo):
    env = {"name": "py-staging", "wait_timer": 2, "reviewers": [{"type": "User", "login": "octo"}]}
    new_run(jobs=[{"name": "deploy", "duration_seconds": 60, "environment": env}])
    listed = [e for e in public_repo.get_environments() if e.name == "py-staging"]
    assert len(listed) == 1
    e = public_repo.get_environment("py-staging")
    assert e.id == listed[0].id
    assert [r.type for r in e.protection_rules] == ["wait_timer", "required_reviewers"]
    with pytest.raises(UnknownObjectException):
        public_repo.get_environment("py-none").protection_rules


@pytest.mark.op("artifacts/list-for-run")
def test_artifacts(public_repo):
    run = new_run()
    assert list(public_repo.get_workflow_run(run["id"]).get_artifacts()) == []
