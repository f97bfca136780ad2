// Conditional requests: the ETag sent back in if-none-match gives a 304, which octokit surfaces as
// a RequestError with status 304, and which does not charge the primary limit.
import assert from "node:assert/strict";
import { before } from "node:test";
import { ORG, PUBLIC_REPO, TOKENS, check, client, freshUser, pushBranch } from "../lib/helpers.mjs";

let octokit; // a fresh user: its rate-limit bucket moves only with this file's requests
let commit;

before(async () => {
  const user = await freshUser();
  octokit = client({ token: user.token });
  commit = await pushBranch();
  await client({ token: TOKENS.owner }).rest.repos.createCommitStatus({ owner: ORG, repo: PUBLIC_REPO, sha: commit.sha, state: "success" });
});

async function assertNotModified(call, params) {
  const first = await call(params);
  assert.equal(first.status, 200);
  const etag = first.headers.etag;
  assert.match(etag, /^"[^"]+"$/, "a quoted strong ETag");
  const used = first.headers["x-ratelimit-used"];
  assert.ok(used !== undefined, "x-ratelimit-used on every response");

  const err = await call({ ...params, headers: { "if-none-match": etag } }).then(
    () => assert.fail("expected a 304 RequestError"),
    (e) => e,
  );
  assert.equal(err.name, "HttpError");
  assert.equal(err.status, 304);
  assert.equal(err.response.headers["x-ratelimit-used"], used, "a 304 does not charge the limit");

  const again = await call(params);
  assert.equal(again.status, 200);
  assert.equal(again.headers.etag, etag, "the ETag is stable while nothing changes");
  assert.equal(Number(again.headers["x-ratelimit-used"]), Number(used) + 1, "only the 200s were charged");
  return etag;
}

check("listCommitStatusesForRef: if-none-match gives 304 without charging", ["statuses/list"], async () => {
  await assertNotModified(octokit.rest.repos.listCommitStatusesForRef, { owner: ORG, repo: PUBLIC_REPO, ref: commit.sha });
});

check("getCombinedStatusForRef: if-none-match gives 304 without charging", ["statuses/get-combined"], async () => {
  await assertNotModified(octokit.rest.repos.getCombinedStatusForRef, { owner: ORG, repo: PUBLIC_REPO, ref: commit.sha });
});

check("legacy statuses route: if-none-match gives 304 without charging", ["statuses/list-legacy"], async () => {
  const call = (p) => octokit.request("GET /repos/{owner}/{repo}/statuses/{ref}", p);
  await assertNotModified(call, { owner: ORG, repo: PUBLIC_REPO, ref: commit.sha });
});

check("meta.root: if-none-match gives 304 without charging", ["meta/root"], async () => {
  await assertNotModified(octokit.rest.meta.root, {});
});

check("a new status changes the ETag: the old one gets a 200 again", ["statuses/list"], async () => {
  const params = { owner: ORG, repo: PUBLIC_REPO, ref: commit.sha };
  const before = await octokit.rest.repos.listCommitStatusesForRef(params);
  await client({ token: TOKENS.owner }).rest.repos.createCommitStatus({ owner: ORG, repo: PUBLIC_REPO, sha: commit.sha, state: "failure", context: "new" });
  const after = await octokit.rest.repos.listCommitStatusesForRef({ ...params, headers: { "if-none-match": before.headers.etag } });
  assert.equal(after.status, 200);
  assert.notEqual(after.headers.etag, before.headers.etag);
  assert.equal(after.data.length, before.data.length + 1);
});
