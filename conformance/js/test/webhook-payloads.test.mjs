// Every webhook event and action the server sends, received at a loopback receiver by hooks with
// `*` (json with a secret, and form) and validated against the published webhook schemas
// (lib/webhooks.mjs): each action below is caused through the API or the control plane, and its
// delivery must validate.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { ORG, PUBLIC_REPO, TOKENS, adminCall, check, client, randomSha, unique } from "../lib/helpers.mjs";
import { allEventHooks } from "../lib/webhooks.mjs";

const owner = client({ token: TOKENS.owner });
let hooks;
let rx;

before(async () => {
  hooks = await allEventHooks(owner, ORG);
  rx = hooks.rx;
});

after(() => hooks.close());

/** Waits for the delivery of `event` (and `action`) matching `pred` at every `*` hook; all validated. */
const delivered = (event, action, pred) => hooks.delivered(event, action, pred);

check("ping validates", [], async () => {
  const p = await delivered("ping");
  assert.equal(typeof p.zen, "string");
});

check("create, push and status of a new branch validate", [], async () => {
  // A placeholder commit (the organization's rules refuse the control plane's unsigned ones).
  const branch = unique("wh");
  const sha = randomSha();
  await adminCall("POST", `/repos/${ORG}/${PUBLIC_REPO}/refs`, { ref: `refs/heads/${branch}`, sha });
  const created = await delivered("create", undefined, (p) => p.ref === branch);
  assert.equal(created.ref_type, "branch");
  const push = await delivered("push", undefined, (p) => p.ref === `refs/heads/${branch}`);
  assert.equal(push.after, sha);
  assert.equal(push.repository.license, null);
  await owner.rest.repos.createCommitStatus({ owner: ORG, repo: PUBLIC_REPO, sha, state: "success", context: unique("ci") });
  const status = await delivered("status", undefined, (p) => p.sha === sha);
  assert.equal(status.commit.sha, sha);
  assert.equal(typeof status.commit.commit.message, "string");
});

check("delete and push (deleted) of a deleted branch validate", [], async () => {
  // A branch at a new repository's first commit (git has it; no new commit for the
  // organization's signature rule to check).
  const repo = unique("wh");
  await owner.rest.repos.createInOrg({ org: ORG, name: repo, auto_init: true });
  const branch = unique("wh");
  const { data: main } = await owner.rest.git.getRef({ owner: ORG, repo, ref: "heads/main" });
  await owner.rest.git.createRef({ owner: ORG, repo, ref: `refs/heads/${branch}`, sha: main.object.sha });
  await owner.rest.git.deleteRef({ owner: ORG, repo, ref: `heads/${branch}` });
  const del = await delivered("delete", undefined, (p) => p.ref === branch);
  assert.equal(del.ref_type, "branch");
  const push = await delivered("push", undefined, (p) => p.ref === `refs/heads/${branch}` && p.deleted);
  assert.equal(push.after, "0".repeat(40));
});

check("watch started and star created validate", [], async () => {
  const { login } = await adminCall("POST", "/users", { login: unique("wh") });
  await adminCall("POST", `/repos/${ORG}/${PUBLIC_REPO}/stars`, { login });
  const p = await delivered("watch", "started", (x) => x.sender.login === login);
  assert.equal(p.repository.full_name, `${ORG}/${PUBLIC_REPO}`);
  const star = await delivered("star", "created", (x) => x.sender.login === login);
  assert.equal(typeof star.starred_at, "string");
});

check("star deleted validates, with starred_at null", [], async () => {
  const { login } = await adminCall("POST", "/users", { login: unique("wh") });
  await adminCall("POST", `/repos/${ORG}/${PUBLIC_REPO}/stars`, { login });
  await adminCall("DELETE", `/repos/${ORG}/${PUBLIC_REPO}/stars/${login}`);
  const p = await delivered("star", "deleted", (x) => x.sender.login === login);
  assert.equal(p.starred_at, null);
  assert.equal(p.repository.full_name, `${ORG}/${PUBLIC_REPO}`);
});

check("workflow_run requested, in_progress and completed validate, for a finished run and a run cancelled through the API", [], async () => {
  const plan = { workflow: ".workflows/js.yml", actor: "octo", queue_seconds: 0, jobs: [{ name: "build", duration_seconds: 60 }] };
  const done = await adminCall("POST", `/repos/${ORG}/${PUBLIC_REPO}/runs`, plan);
  for (let i = 0; i < 50; i++) {
    const r = await adminCall("POST", `/runs/${done.id}/advance`, {}).catch(() => null);
    if (!r || r.status === "completed") break;
  }
  await delivered("workflow_run", "requested", (p) => p.workflow_run.id === done.id);
  await delivered("workflow_run", "in_progress", (p) => p.workflow_run.id === done.id);
  const finished = await delivered("workflow_run", "completed", (p) => p.workflow_run.id === done.id);
  assert.equal(finished.workflow_run.conclusion, "success");
  assert.equal(finished.workflow.path, ".workflows/js.yml");
  const run = await adminCall("POST", `/repos/${ORG}/${PUBLIC_REPO}/runs`, plan);
  await owner.rest.actions.cancelWorkflowRun({ owner: ORG, repo: PUBLIC_REPO, run_id: run.id });
  const cancelled = await delivered("workflow_run", "completed", (p) => p.workflow_run.id === run.id);
  assert.equal(cancelled.workflow_run.conclusion, "cancelled");
});

check("workflow_job queued, waiting, in_progress and completed validate, a job waiting for a review among them", [], async () => {
  const environment = { name: unique("js-env"), reviewers: [{ type: "User", login: "octo" }] };
  const plan = { workflow: ".workflows/js-jobs.yml", actor: "octo", queue_seconds: 0, jobs: [
    { name: "build", duration_seconds: 10 },
    { name: "deploy", needs: ["build"], duration_seconds: 10, environment },
  ] };
  const run = await adminCall("POST", `/repos/${ORG}/${PUBLIC_REPO}/runs`, plan);
  const job = (name) => (p) => p.workflow_job.run_id === run.id && p.workflow_job.name === name;
  await delivered("workflow_job", "queued", job("build"));
  await delivered("workflow_job", "queued", job("deploy"));
  await delivered("workflow_job", "in_progress", job("build"));
  // build ends; deploy waits for octo's review.
  await adminCall("POST", `/runs/${run.id}/advance`, {});
  const built = await delivered("workflow_job", "completed", job("build"));
  assert.equal(built.workflow_job.conclusion, "success");
  const waiting = await delivered("workflow_job", "waiting", job("deploy"));
  assert.equal(waiting.workflow_job.status, "waiting");
  const { data: pending } = await owner.rest.actions.getPendingDeploymentsForRun({ owner: ORG, repo: PUBLIC_REPO, run_id: run.id });
  await owner.rest.actions.reviewPendingDeploymentsForRun({
    owner: ORG, repo: PUBLIC_REPO, run_id: run.id, environment_ids: [pending[0].environment.id], state: "approved", comment: "ship it",
  });
  await delivered("workflow_job", "in_progress", job("deploy"));
  for (let i = 0; i < 10; i++) {
    const r = await adminCall("POST", `/runs/${run.id}/advance`, {}).catch(() => null);
    if (!r || r.status === "completed") break;
  }
  const deployed = await delivered("workflow_job", "completed", job("deploy"));
  assert.equal(deployed.workflow_job.conclusion, "success");
  await delivered("workflow_run", "completed", (p) => p.workflow_run.id === run.id);
});

check("repository created, edited, renamed and deleted validate", [], async () => {
  const name = unique("wh");
  const { data: repo } = await owner.rest.repos.createInOrg({ org: ORG, name });
  await delivered("repository", "created", (p) => p.repository.id === repo.id);
  await owner.rest.repos.update({ owner: ORG, repo: name, description: "edited" });
  const edited = await delivered("repository", "edited", (p) => p.repository.id === repo.id);
  assert.ok(edited.changes);
  const renamed = `${name}-2`;
  await owner.rest.repos.update({ owner: ORG, repo: name, name: renamed });
  await delivered("repository", "renamed", (p) => p.repository.id === repo.id);
  await owner.rest.repos.update({ owner: ORG, repo: renamed, private: true });
  await delivered("repository", "privatized", (p) => p.repository.id === repo.id);
  await owner.rest.repos.update({ owner: ORG, repo: renamed, private: false });
  await delivered("repository", "publicized", (p) => p.repository.id === repo.id);
  const pub = await delivered("public", undefined, (p) => p.repository.id === repo.id);
  assert.equal(pub.repository.private, false);
  const { token } = await adminCall("POST", "/tokens", { kind: "classic", login: "octo", scopes: ["repo", "delete_repo"] });
  await client({ token }).rest.repos.delete({ owner: ORG, repo: renamed });
  await delivered("repository", "deleted", (p) => p.repository.id === repo.id);
});

check("repository_import (success) validates", [], async () => {
  // A local bare repository with one commit, imported from its path (the server runs here).
  const env = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "Grace", GIT_AUTHOR_EMAIL: "grace@example.com", GIT_COMMITTER_NAME: "Grace", GIT_COMMITTER_EMAIL: "grace@example.com" };
  const git = (cwd, ...args) => execFileSync("git", args, { cwd, env, encoding: "utf8" });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "js-wh-import-"));
  const work = path.join(dir, "work");
  fs.mkdirSync(work);
  git(work, "init", "-q", "-b", "main");
  fs.writeFileSync(path.join(work, "README"), "hello");
  git(work, "add", "README");
  git(work, "commit", "-q", "-m", "first");
  git(dir, "clone", "-q", "--bare", work, path.join(dir, "source.git"));
  const name = unique("wh-import");
  await adminCall("POST", "/repos", { owner: ORG, name, private: true });
  await owner.request("PUT /repos/{owner}/{repo}/import", { owner: ORG, repo: name, vcs_url: path.join(dir, "source.git") });
  const p = await delivered("repository_import", undefined, (x) => x.repository.name === name);
  assert.equal(p.status, "success");
});

check("depbot_alert created, dismissed and reopened validate (against the package's dependabot_alert definitions)", [], async () => {
  // A crate: the security suites' filters (npm, pip; critical) do not see it.
  const name = unique("js-dep");
  const made = await adminCall("POST", `/repos/${ORG}/${PUBLIC_REPO}/depbot/alerts`, {
    package: { ecosystem: "rust", name }, manifest_path: "Cargo.lock", scope: "runtime",
    vulnerable_version_range: "< 2.0.0", first_patched_version: "2.0.0",
    advisory: { summary: `${name} is vulnerable`, severity: "high", cve_id: "CVE-2024-0001",
      cwes: [{ cwe_id: "CWE-79", name: "XSS" }], references: ["https://example.com/advisory"] },
  });
  const ofAlert = (p) => p.alert.number === made.number;
  const created = await delivered("depbot_alert", "created", ofAlert);
  assert.equal(created.alert.state, "open");
  const params = { owner: ORG, repo: PUBLIC_REPO, alert_number: made.number };
  await owner.request("PATCH /repos/{owner}/{repo}/depbot/alerts/{alert_number}",
    { ...params, state: "dismissed", dismissed_reason: "tolerable_risk", dismissed_comment: "accepted" });
  const dismissed = await delivered("depbot_alert", "dismissed", ofAlert);
  assert.equal(dismissed.alert.dismissed_by.login, "octo");
  await owner.request("PATCH /repos/{owner}/{repo}/depbot/alerts/{alert_number}", { ...params, state: "open" });
  const reopened = await delivered("depbot_alert", "reopened", ofAlert);
  assert.equal(reopened.alert.state, "open");
});

check("meta deleted validates, delivered to the deleted hook itself", [], async () => {
  const config = { url: `${rx.url}?h=${unique("meta")}`, content_type: "json", secret: "last-words" };
  const { data: hook } = await owner.rest.orgs.createWebhook({ org: ORG, name: "web", events: ["meta"], config });
  await owner.rest.orgs.deleteWebhook({ org: ORG, hook_id: hook.id });
  const d = await rx.waitFor(
    (x) => x.headers["x-service-hook-id"] === String(hook.id) && x.headers["x-service-event"] === "meta",
    `meta.deleted at hook ${hook.id}`,
  );
  assert.equal(d.payload.action, "deleted");
  assert.equal(d.payload.hook_id, hook.id);
  assert.deepEqual(d.payload.hook.events, ["meta"]);
  assert.equal(d.payload.organization.login, ORG);
  assert.ok(d.headers["x-service-signature-256"].startsWith("sha256="));
});

// Deployments of reviewed runs, and ruleset changes: validated against the official OpenAPI
// webhook schemas (lib/webhooks.mjs).
check("deployment created and deployment_status created (queued, in_progress, success) validate, for the deployment an approval creates", [], async () => {
  const environment = { name: unique("js-deploy"), reviewers: [{ type: "User", login: "octo" }] };
  const plan = { workflow: ".workflows/js-deploy.yml", actor: "octo", queue_seconds: 0, jobs: [
    { name: "build", duration_seconds: 10 },
    { name: "deploy", needs: ["build"], duration_seconds: 10, environment },
  ] };
  const run = await adminCall("POST", `/repos/${ORG}/${PUBLIC_REPO}/runs`, plan);
  await adminCall("POST", `/runs/${run.id}/advance`, {});
  await delivered("workflow_job", "waiting", (p) => p.workflow_job.run_id === run.id);
  const { data: pending } = await owner.rest.actions.getPendingDeploymentsForRun({ owner: ORG, repo: PUBLIC_REPO, run_id: run.id });
  const { data: made } = await owner.rest.actions.reviewPendingDeploymentsForRun({
    owner: ORG, repo: PUBLIC_REPO, run_id: run.id, environment_ids: [pending[0].environment.id], state: "approved", comment: "ship it",
  });
  const id = made[0].id;
  const created = await delivered("deployment", "created", (p) => p.deployment.id === id);
  assert.equal(created.deployment.environment, environment.name);
  assert.equal(created.workflow_run.id, run.id);
  assert.equal(created.workflow.path, ".workflows/js-deploy.yml");
  const status = (state) => (p) => p.deployment.id === id && p.deployment_status.state === state;
  await delivered("deployment_status", "created", status("queued"));
  await delivered("deployment_status", "created", status("in_progress"));
  for (let i = 0; i < 10; i++) {
    const r = await adminCall("POST", `/runs/${run.id}/advance`, {}).catch(() => null);
    if (!r || r.status === "completed") break;
  }
  const done = await delivered("deployment_status", "created", status("success"));
  assert.equal(done.deployment_status.environment, environment.name);
  assert.equal(done.workflow_run.id, run.id);
});

check("repository_ruleset created, edited (changes) and deleted validate, for a repository's ruleset and an organization's", [], async () => {
  const name = unique("js-rs");
  const repo = { owner: ORG, repo: PUBLIC_REPO };
  const { data: rs } = await owner.rest.repos.createRepoRuleset({
    ...repo, name, target: "branch", enforcement: "evaluate",
    conditions: { ref_name: { include: [`refs/heads/${name}`], exclude: [] } }, rules: [{ type: "deletion" }],
  });
  const of = (id) => (p) => p.repository_ruleset.id === id;
  const created = await delivered("repository_ruleset", "created", of(rs.id));
  assert.equal(created.repository.name, PUBLIC_REPO);
  assert.equal(created.repository_ruleset.source_type, "Repository");
  await owner.rest.repos.updateRepoRuleset({
    ...repo, ruleset_id: rs.id, name: `${name}-2`, enforcement: "disabled",
    conditions: { ref_name: { include: [`refs/heads/${name}-2`], exclude: [] } }, rules: [{ type: "non_fast_forward" }],
  });
  const edited = await delivered("repository_ruleset", "edited", of(rs.id));
  assert.deepEqual(edited.changes.name, { from: name });
  assert.deepEqual(edited.changes.enforcement, { from: "evaluate" });
  assert.deepEqual(edited.changes.conditions.updated[0].changes.include, { from: [`refs/heads/${name}`] });
  assert.deepEqual([edited.changes.rules.added[0].type, edited.changes.rules.deleted[0].type], ["non_fast_forward", "deletion"]);
  await owner.rest.repos.deleteRepoRuleset({ ...repo, ruleset_id: rs.id });
  const deleted = await delivered("repository_ruleset", "deleted", of(rs.id));
  assert.equal(deleted.repository_ruleset.name, `${name}-2`);
  // An organization's ruleset (the control plane's): no repository.
  const org = await adminCall("POST", `/orgs/${ORG}/rulesets`, {
    name, target: "branch", enforcement: "disabled",
    conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] }, repository_name: { include: [`${name}-*`], exclude: [] } },
    rules: [{ type: "deletion" }],
  });
  const orgCreated = await delivered("repository_ruleset", "created", of(org.id));
  assert.equal(orgCreated.repository, undefined);
  assert.equal(orgCreated.repository_ruleset.source_type, "Organization");
  await adminCall("PUT", `/orgs/${ORG}/rulesets/${org.id}`, { enforcement: "evaluate" });
  const orgEdited = await delivered("repository_ruleset", "edited", of(org.id));
  assert.deepEqual(orgEdited.changes.enforcement, { from: "disabled" });
  await adminCall("DELETE", `/orgs/${ORG}/rulesets/${org.id}`);
  await delivered("repository_ruleset", "deleted", of(org.id));
});

check("every delivery received validates", [], async () => {
  assert.ok(rx.received.length > 0);
  rx.assertAllValid();
});
