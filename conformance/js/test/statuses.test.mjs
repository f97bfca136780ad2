// Commit statuses through octokit.rest.repos.*: results and shapes.
import assert from "node:assert/strict";
import { before } from "node:test";
import {
  MAIN_URL, ORG, PUBLIC_REPO, TOKENS, adminCall, bareClient, check, client, note, pushBranch, randomSha,
} from "../lib/helpers.mjs";

const TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const owner = client({ token: TOKENS.owner });
let commit; // a fresh pushed commit on a fresh branch of conf/public-repo

before(async () => {
  commit = await pushBranch();
});

function assertUser(u, login) {
  assert.equal(u.login, login);
  assert.equal(typeof u.id, "number");
  for (const k of ["node_id", "avatar_url", "url", "html_url", "type"]) assert.equal(typeof u[k], "string", k);
  assert.equal(typeof u.site_admin, "boolean");
}

function assertStatus(s, { creator = true } = {}) {
  for (const k of ["url", "avatar_url", "node_id", "state", "context", "created_at", "updated_at"]) assert.equal(typeof s[k], "string", k);
  assert.equal(typeof s.id, "number");
  assert.ok(["error", "failure", "pending", "success"].includes(s.state));
  assert.match(s.created_at, TS);
  assert.match(s.updated_at, TS);
  assert.ok("description" in s && "target_url" in s, "nullable fields are present");
  assert.ok(s.url.startsWith(MAIN_URL + "/"), `url ${s.url} is absolute under the base URL`);
  if (creator) assertUser(s.creator, "octo");
  else assert.equal(s.creator, undefined, "combined-status elements carry no creator");
}

check("createCommitStatus answers 201 with the status", ["statuses/create"], async () => {
  const res = await owner.rest.repos.createCommitStatus({
    owner: ORG, repo: PUBLIC_REPO, sha: commit.sha,
    state: "success", context: "ci/build", description: "built", target_url: "https://ci.example/1",
  });
  assert.equal(res.status, 201);
  assertStatus(res.data);
  assert.equal(res.data.state, "success");
  assert.equal(res.data.context, "ci/build");
  assert.equal(res.data.description, "built");
  assert.equal(res.data.target_url, "https://ci.example/1");
});

check("createCommitStatus defaults context to 'default' and nullable fields to null", ["statuses/create"], async () => {
  const { data } = await owner.rest.repos.createCommitStatus({ owner: ORG, repo: PUBLIC_REPO, sha: commit.sha, state: "pending" });
  assert.equal(data.context, "default");
  assert.equal(data.description, null);
  assert.equal(data.target_url, null);
});

check("createCommitStatus on a commit never pushed is a 422 RequestError", ["statuses/create"], async () => {
  await assert.rejects(
    owner.rest.repos.createCommitStatus({ owner: ORG, repo: PUBLIC_REPO, sha: randomSha(), state: "success" }),
    (e) => e.name === "HttpError" && e.status === 422,
  );
});

check("listCommitStatusesForRef lists newest first, by sha, branch and heads/branch", ["statuses/create", "statuses/list"], async () => {
  const c = await pushBranch();
  for (const state of ["pending", "failure", "success"]) {
    await owner.rest.repos.createCommitStatus({ owner: ORG, repo: PUBLIC_REPO, sha: c.sha, state, context: `ctx/${state}` });
  }
  for (const ref of [c.sha, c.branch, `heads/${c.branch}`]) {
    const res = await owner.rest.repos.listCommitStatusesForRef({ owner: ORG, repo: PUBLIC_REPO, ref });
    assert.equal(res.status, 200);
    assert.deepEqual(res.data.map((s) => s.state), ["success", "failure", "pending"], `ref ${ref}`);
    res.data.forEach((s) => assertStatus(s));
  }
});

check("listCommitStatusesForRef with a slash in the branch name (octokit percent-encodes it)", ["statuses/list"], async () => {
  const c = await pushBranch({ branch: `feature/${randomSha().slice(0, 8)}` });
  await owner.rest.repos.createCommitStatus({ owner: ORG, repo: PUBLIC_REPO, sha: c.sha, state: "success" });
  const { data } = await owner.rest.repos.listCommitStatusesForRef({ owner: ORG, repo: PUBLIC_REPO, ref: c.branch });
  assert.equal(data.length, 1);
});

check("listCommitStatusesForRef on a seeded tag, and anonymously on a public repo", ["statuses/list"], async () => {
  const anon = client();
  for (const ref of ["v1", "tags/v1", "main"]) {
    const res = await anon.rest.repos.listCommitStatusesForRef({ owner: ORG, repo: PUBLIC_REPO, ref });
    assert.equal(res.status, 200);
    assert.ok(Array.isArray(res.data));
  }
});

check("the legacy route GET /repos/{owner}/{repo}/statuses/{ref} lists the same statuses", ["statuses/list-legacy"], async () => {
  const c = await pushBranch();
  await owner.rest.repos.createCommitStatus({ owner: ORG, repo: PUBLIC_REPO, sha: c.sha, state: "error", context: "a" });
  await owner.rest.repos.createCommitStatus({ owner: ORG, repo: PUBLIC_REPO, sha: c.sha, state: "success", context: "b" });
  const modern = await owner.rest.repos.listCommitStatusesForRef({ owner: ORG, repo: PUBLIC_REPO, ref: c.branch });
  const legacy = await owner.request("GET /repos/{owner}/{repo}/statuses/{ref}", { owner: ORG, repo: PUBLIC_REPO, ref: c.branch });
  assert.equal(legacy.status, 200);
  assert.deepEqual(legacy.data, modern.data);
});
note("statuses/list-legacy", 'no octokit method: driven through octokit.request("GET /repos/{owner}/{repo}/statuses/{ref}")');

check("getCombinedStatusForRef derives the state from the latest status per context", ["statuses/get-combined"], async () => {
  const c = await pushBranch();
  const get = () => owner.rest.repos.getCombinedStatusForRef({ owner: ORG, repo: PUBLIC_REPO, ref: c.branch });
  const create = (state, context) => owner.rest.repos.createCommitStatus({ owner: ORG, repo: PUBLIC_REPO, sha: c.sha, state, context });

  let { data } = await get();
  assert.equal(data.state, "pending", "no statuses: pending");
  assert.equal(data.total_count, 0);
  assert.deepEqual(data.statuses, []);

  await create("success", "build");
  await create("pending", "test");
  assert.equal((await get()).data.state, "pending");
  await create("success", "test");
  assert.equal((await get()).data.state, "success");
  await create("error", "lint");
  ({ data } = await get());
  assert.equal(data.state, "failure");
  await create("success", "lint");
  ({ data } = await get());
  assert.equal(data.state, "success", "only the latest status of a context counts");

  assert.equal(data.sha, c.sha);
  assert.equal(data.total_count, 3);
  assert.deepEqual(data.statuses.map((s) => s.context), ["lint", "test", "build"], "latest per context, newest first");
  data.statuses.forEach((s) => assertStatus(s, { creator: false }));
  assert.equal(data.repository.full_name, `${ORG}/${PUBLIC_REPO}`);
  assertUser(data.repository.owner, ORG);
  assert.equal(data.url, `${MAIN_URL}/repos/${ORG}/${PUBLIC_REPO}/commits/${c.sha}/status`);
  assert.equal(typeof data.commit_url, "string");
});

check("getCombinedStatusForRef on an unknown ref is a 404 RequestError", ["statuses/get-combined"], async () => {
  await assert.rejects(
    owner.rest.repos.getCombinedStatusForRef({ owner: ORG, repo: PUBLIC_REPO, ref: "no-such-branch" }),
    (e) => e.status === 404 && e.response.data.message === "Not Found",
  );
});

check("a fine-grained token with statuses:read lists but may not create", ["statuses/list", "statuses/create"], async () => {
  const fg = client({ token: TOKENS.fine_grained_read });
  const res = await fg.rest.repos.listCommitStatusesForRef({ owner: ORG, repo: "private-repo", ref: "main" });
  assert.equal(res.status, 200);
  await assert.rejects(
    fg.rest.repos.createCommitStatus({ owner: ORG, repo: PUBLIC_REPO, sha: commit.sha, state: "success" }),
    (e) => e.status === 403 && /Resource not accessible/.test(e.message),
  );
});

check("status number 1001 for one sha and context is a 422 'Validation Failed'", ["statuses/create"], async () => {
  const c = await pushBranch();
  const setup = bareClient({ token: TOKENS.owner }); // the throttling plugin would space 1000 writes 1 s apart
  const create = (context) => setup.rest.repos.createCommitStatus({ owner: ORG, repo: PUBLIC_REPO, sha: c.sha, state: "success", context });
  for (let i = 0; i < 1000; i += 50) await Promise.all(Array.from({ length: 50 }, () => create("capped")));
  const err = await owner.rest.repos
    .createCommitStatus({ owner: ORG, repo: PUBLIC_REPO, sha: c.sha, state: "success", context: "capped" })
    .then(() => assert.fail("expected a 422"), (e) => e);
  assert.equal(err.status, 422);
  assert.equal(err.response.data.message, "Validation Failed");
  assert.ok(JSON.stringify(err.response.data.errors).includes("This SHA and context has reached the maximum number of statuses."));
  const other = await owner.rest.repos.createCommitStatus({ owner: ORG, repo: PUBLIC_REPO, sha: c.sha, state: "success", context: "other" });
  assert.equal(other.status, 201, "the cap is per context");
});

check("listCommitStatusesForRef on a renamed repository follows the 301 to the new name", ["statuses/list"], async () => {
  const name = `renamed-${randomSha().slice(0, 8)}`;
  await adminCall("POST", "/repos", { owner: ORG, name });
  const c = await pushBranch({ repo: name });
  await owner.rest.repos.createCommitStatus({ owner: ORG, repo: name, sha: c.sha, state: "success" });
  await adminCall("POST", `/repos/${ORG}/${name}/rename`, { name: `${name}-new` });
  const res = await client({ token: TOKENS.owner }).rest.repos.listCommitStatusesForRef({ owner: ORG, repo: name, ref: c.sha });
  assert.equal(res.status, 200);
  assert.equal(res.data.length, 1);
  assert.ok(res.url.includes(`/repos/${ORG}/${name}-new/`), `followed to ${res.url}`);
});
