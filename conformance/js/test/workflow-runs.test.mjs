// Workflow runs and deployment review through octokit.rest.actions.*: runs created by the control
// plane and moved step by step (`/_admin/runs/{id}/advance`), lists with filters, re-runs,
// cancels, log downloads (the client follows the redirect to the signed URL), reviews, usage.
import assert from "node:assert/strict";
import { inflateRawSync } from "node:zlib";
import { ORG, PUBLIC_REPO, TOKENS, adminCall, check, client } from "../lib/helpers.mjs";

const owner = client({ token: TOKENS.owner });
const repo = { owner: ORG, repo: PUBLIC_REPO };

/** A run from a plan (actor octo, starts at once). */
async function newRun(plan = {}) {
  return adminCall("POST", `/repos/${ORG}/${PUBLIC_REPO}/runs`, { workflow: ".workflows/js.yml", actor: "octo", queue_seconds: 0, ...plan });
}

/** Moves a run until it completes. */
async function finish(run) {
  for (let i = 0; i < 50; i++) {
    const r = await adminCall("POST", `/runs/${run.id}/advance`, {}).catch(() => null);
    if (!r || r.status === "completed") return;
  }
}

// Jobs longer than any test: the platform clock counts whole seconds, so a 1 s job could finish
// between two requests; tests move runs with `finish` instead.
const failing = { jobs: [{ name: "build", duration_seconds: 60 }, { name: "test", needs: ["build"], duration_seconds: 60, outcome: ["failure", "success"] }] };

check("listWorkflowRunsForRepo pages through runs and filters them", ["runs/list"], async () => {
  const a = await newRun({ branch: "main" });
  const res = await owner.rest.actions.listWorkflowRunsForRepo({ ...repo, per_page: 2 });
  assert.equal(res.status, 200);
  assert.equal(typeof res.data.total_count, "number");
  assert.ok(res.data.workflow_runs.length <= 2);
  const all = await owner.paginate(owner.rest.actions.listWorkflowRunsForRepo, { ...repo, per_page: 100, status: "queued" });
  assert.ok(Array.isArray(all));
  const byStatus = await owner.rest.actions.listWorkflowRunsForRepo({ ...repo, status: "in_progress", actor: "octo", created: ">=2000-01-01" });
  assert.ok(byStatus.data.workflow_runs.some((r) => r.id === a.id));
  await assert.rejects(owner.rest.actions.listWorkflowRunsForRepo({ ...repo, created: "yesterday" }), (e) => e.status === 422);
});

check("listWorkflowRuns takes the workflow file name", ["runs/list-for-workflow"], async () => {
  const a = await newRun({ workflow: ".workflows/js-named.yml" });
  const res = await owner.rest.actions.listWorkflowRuns({ ...repo, workflow_id: "js-named.yml" });
  assert.equal(res.status, 200);
  assert.ok(res.data.workflow_runs.every((r) => r.workflow_id === a.workflow_id));
  assert.equal(res.data.workflow_runs[0].id, a.id);
});

check("getWorkflowRun, getWorkflowRunAttempt and listJobsForWorkflowRunAttempt", ["runs/get", "runs/get-attempt", "runs/list-attempt-jobs"], async () => {
  const a = await newRun(failing);
  const run = await owner.rest.actions.getWorkflowRun({ ...repo, run_id: a.id });
  assert.equal(run.data.id, a.id);
  assert.equal(run.data.run_attempt, 1);
  const att = await owner.rest.actions.getWorkflowRunAttempt({ ...repo, run_id: a.id, attempt_number: 1 });
  assert.equal(att.data.run_attempt, 1);
  const jobs = await owner.rest.actions.listJobsForWorkflowRunAttempt({ ...repo, run_id: a.id, attempt_number: 1 });
  assert.deepEqual(jobs.data.jobs.map((j) => j.name), ["build", "test"]);
  await assert.rejects(owner.rest.actions.getWorkflowRun({ ...repo, run_id: 987654321 }), (e) => e.status === 404);
});

check("reRunWorkflow, reRunWorkflowFailedJobs and reRunJobForWorkflowRun start new attempts", ["runs/rerun", "runs/rerun-failed-jobs", "runs/rerun-job"], async () => {
  const a = await newRun(failing);
  await assert.rejects(owner.rest.actions.reRunWorkflow({ ...repo, run_id: a.id }), (e) => e.status === 403);
  await finish(a);
  let res = await owner.rest.actions.reRunWorkflowFailedJobs({ ...repo, run_id: a.id, enable_debug_logging: true });
  assert.equal(res.status, 201);
  const run = (await owner.rest.actions.getWorkflowRun({ ...repo, run_id: a.id })).data;
  assert.equal(run.run_attempt, 2);
  assert.equal(run.conclusion, null);
  assert.match(run.previous_attempt_url, /\/attempts\/1$/);
  await finish(a);
  const jobs = await owner.rest.actions.listJobsForWorkflowRunAttempt({ ...repo, run_id: a.id, attempt_number: 2 });
  res = await owner.rest.actions.reRunJobForWorkflowRun({ ...repo, job_id: jobs.data.jobs[1].id });
  assert.equal(res.status, 201);
  await finish(a);
  res = await owner.rest.actions.reRunWorkflow({ ...repo, run_id: a.id });
  assert.equal(res.status, 201);
  assert.equal((await owner.rest.actions.getWorkflowRun({ ...repo, run_id: a.id })).data.run_attempt, 4);
});

check("cancelWorkflowRun and forceCancelWorkflowRun answer 202, then 409", ["runs/cancel", "runs/force-cancel"], async () => {
  for (const method of ["cancelWorkflowRun", "forceCancelWorkflowRun"]) {
    const a = await newRun({ jobs: [{ name: "long", duration_seconds: 3600 }] });
    const res = await owner.rest.actions[method]({ ...repo, run_id: a.id });
    assert.equal(res.status, 202);
    assert.equal((await owner.rest.actions.getWorkflowRun({ ...repo, run_id: a.id })).data.conclusion, "cancelled");
    await assert.rejects(owner.rest.actions[method]({ ...repo, run_id: a.id, request: { retries: 0 } }), (e) => e.status === 409);
  }
});

// The texts of a zip's entries, read from its local headers (stored or deflated).
function zipEntries(bytes) {
  const texts = [];
  for (let at = 0; bytes.readUInt32LE(at) === 0x04034b50; ) {
    const method = bytes.readUInt16LE(at + 8);
    const size = bytes.readUInt32LE(at + 18);
    const start = at + 30 + bytes.readUInt16LE(at + 26) + bytes.readUInt16LE(at + 28);
    const data = bytes.subarray(start, start + size);
    texts.push((method === 8 ? inflateRawSync(data) : data).toString("utf8"));
    at = start + size;
  }
  return texts;
}

check("downloadWorkflowRunLogs follows the redirect to a zip; deleteWorkflowRunLogs removes it", ["runs/download-logs", "runs/download-attempt-logs", "runs/delete-logs"], async () => {
  const a = await newRun({ jobs: [{ name: "build", duration_seconds: 1, log: "hello from js" }] });
  await finish(a);
  for (const res of [
    await owner.rest.actions.downloadWorkflowRunLogs({ ...repo, run_id: a.id }),
    await owner.rest.actions.downloadWorkflowRunAttemptLogs({ ...repo, run_id: a.id, attempt_number: 1 }),
  ]) {
    assert.equal(res.status, 200);
    const bytes = Buffer.from(res.data);
    assert.equal(bytes.subarray(0, 4).toString("latin1"), "PK\u0003\u0004");
    assert.ok(zipEntries(bytes).some((text) => text.includes("hello from js")));
  }
  const del = await owner.rest.actions.deleteWorkflowRunLogs({ ...repo, run_id: a.id });
  assert.equal(del.status, 204);
  await assert.rejects(owner.rest.actions.downloadWorkflowRunLogs({ ...repo, run_id: a.id }), (e) => e.status === 404);
});

check("deleteWorkflowRun answers 204", ["runs/delete"], async () => {
  const a = await newRun();
  assert.equal((await owner.rest.actions.deleteWorkflowRun({ ...repo, run_id: a.id })).status, 204);
  await assert.rejects(owner.rest.actions.getWorkflowRun({ ...repo, run_id: a.id }), (e) => e.status === 404);
});

check("pending deployments: list, approve, review history", ["runs/list-pending-deployments", "runs/review-pending-deployments", "runs/list-reviews"], async () => {
  const env = { name: "js-production", reviewers: [{ type: "User", login: "octo" }] };
  const a = await newRun({ jobs: [{ name: "deploy", duration_seconds: 1, environment: env }] });
  const pending = await owner.rest.actions.getPendingDeploymentsForRun({ ...repo, run_id: a.id });
  assert.equal(pending.data.length, 1);
  assert.equal(pending.data[0].current_user_can_approve, true);
  const res = await owner.rest.actions.reviewPendingDeploymentsForRun({
    ...repo, run_id: a.id, environment_ids: [pending.data[0].environment.id], state: "approved", comment: "go",
  });
  assert.equal(res.status, 200);
  assert.equal(res.data[0].environment, "js-production");
  const reviews = await owner.rest.actions.getReviewsForRun({ ...repo, run_id: a.id });
  assert.equal(reviews.data[0].state, "approved");
  assert.equal(reviews.data[0].user.login, "octo");
});

check("approveWorkflowRun queues a fork pull request's run", ["runs/approve-fork-run"], async () => {
  const a = await newRun({ fork: true, event: "pull_request" });
  assert.equal(a.conclusion, "action_required");
  const res = await owner.rest.actions.approveWorkflowRun({ ...repo, run_id: a.id });
  assert.equal(res.status, 201);
  assert.notEqual((await owner.rest.actions.getWorkflowRun({ ...repo, run_id: a.id })).data.conclusion, "action_required");
});

check("getWorkflowRunUsage reports the run's duration (closing down)", ["runs/get-usage"], async () => {
  const a = await newRun({ jobs: [{ name: "build", duration_seconds: 1 }] });
  await finish(a);
  const res = await owner.rest.actions.getWorkflowRunUsage({ ...repo, run_id: a.id });
  assert.equal(res.status, 200);
  assert.equal(typeof res.data.run_duration_ms, "number");
  assert.ok(res.headers.sunset && res.headers.deprecation);
});

check("listRepoWorkflows and getWorkflow (id or file name)", ["workflows/list", "workflows/get"], async () => {
  const a = await newRun({ workflow: ".workflows/js-wf.yml" });
  const all = await owner.paginate(owner.rest.actions.listRepoWorkflows, { ...repo, per_page: 1 });
  const w = all.find((x) => x.id === a.workflow_id);
  assert.ok(w, "the run's workflow is listed");
  assert.equal(w.path, ".workflows/js-wf.yml");
  assert.equal(w.state, "active");
  for (const workflow_id of [a.workflow_id, "js-wf.yml"]) {
    const res = await owner.rest.actions.getWorkflow({ ...repo, workflow_id });
    assert.equal(res.data.id, a.workflow_id);
    assert.equal(res.data.url, a.workflow_url);
  }
  await assert.rejects(owner.rest.actions.getWorkflow({ ...repo, workflow_id: "js-none.yml" }), (e) => e.status === 404);
});

check("listJobsForWorkflowRun (latest and all), getJobForWorkflowRun, downloadJobLogsForWorkflowRun", ["jobs/list-for-run", "jobs/get", "jobs/download-logs"], async () => {
  const a = await newRun({ jobs: [{ name: "build", duration_seconds: 60, log: "job log from js", outcome: ["failure", "success"] }] });
  await finish(a);
  await owner.rest.actions.reRunWorkflowFailedJobs({ ...repo, run_id: a.id });
  await finish(a);
  const latest = await owner.rest.actions.listJobsForWorkflowRun({ ...repo, run_id: a.id });
  assert.equal(latest.data.total_count, 1);
  assert.equal(latest.data.jobs[0].run_attempt, 2);
  assert.ok(latest.data.jobs[0].steps.length > 0);
  const all = await owner.paginate(owner.rest.actions.listJobsForWorkflowRun, { ...repo, run_id: a.id, filter: "all", per_page: 1 });
  assert.deepEqual(all.map((j) => j.run_attempt), [1, 2]);
  const job = await owner.rest.actions.getJobForWorkflowRun({ ...repo, job_id: all[0].id });
  assert.equal(job.data.id, all[0].id);
  assert.equal(job.data.conclusion, "failure");
  const log = await owner.rest.actions.downloadJobLogsForWorkflowRun({ ...repo, job_id: all[0].id });
  assert.equal(log.status, 200);
  assert.match(String(log.data), /job log from js/);
  await assert.rejects(owner.rest.actions.getJobForWorkflowRun({ ...repo, job_id: 987654321 }), (e) => e.status === 404);
});

check("listWorkflowRunArtifacts answers an empty list (runs upload none)", ["artifacts/list-for-run"], async () => {
  const a = await newRun();
  const res = await owner.rest.actions.listWorkflowRunArtifacts({ ...repo, run_id: a.id });
  assert.deepEqual(res.data, { total_count: 0, artifacts: [] });
  await assert.rejects(owner.rest.actions.listWorkflowRunArtifacts({ ...repo, run_id: 987654321 }), (e) => e.status === 404);
});

check("getAllEnvironments and getEnvironment", ["environments/list", "environments/get"], async () => {
  const env = { name: "js-staging", wait_timer: 2, reviewers: [{ type: "User", login: "octo" }] };
  await newRun({ jobs: [{ name: "deploy", duration_seconds: 60, environment: env }] });
  const all = await owner.rest.repos.getAllEnvironments({ ...repo, per_page: 100 });
  assert.equal(typeof all.data.total_count, "number");
  const e = all.data.environments.find((x) => x.name === "js-staging");
  assert.ok(e, "the environment is listed");
  const one = await owner.rest.repos.getEnvironment({ ...repo, environment_name: "js-staging" });
  assert.equal(one.data.id, e.id);
  assert.deepEqual(one.data.protection_rules.map((r) => r.type), ["wait_timer", "required_reviewers"]);
  assert.equal(one.data.protection_rules[1].reviewers[0].reviewer.login, "octo");
  await assert.rejects(owner.rest.repos.getEnvironment({ ...repo, environment_name: "js-none" }), (e) => e.status === 404);
});
