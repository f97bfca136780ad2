// Error surfaces: octokit's RequestError carries status, message and body; plugin-retry does not
// retry 4xx (requests are counted below every plugin, at fetch).
import assert from "node:assert/strict";
import { ORG, PRIVATE_REPO, PUBLIC_REPO, TOKENS, check, client, countingFetch, pushBranch } from "../lib/helpers.mjs";

function assertErrorBody(e, status, message) {
  assert.equal(e.name, "HttpError");
  assert.equal(e.status, status);
  assert.equal(e.response.status, status);
  assert.match(e.response.headers["content-type"], /^application\/json; charset=utf-8$/);
  assert.equal(e.response.data.message, message);
  assert.equal(typeof e.response.data.documentation_url, "string");
  for (const h of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-used", "x-ratelimit-reset", "x-ratelimit-resource"]) {
    assert.ok(e.response.headers[h] !== undefined, `${h} on a ${status}`);
  }
}

const rejectsOnce = async (fetch, promise, verify) => {
  await assert.rejects(promise, (e) => (verify(e), true));
  assert.equal(fetch.calls.length, 1, `plugin-retry sent ${fetch.calls.length} requests`);
};

check("a private repository seen by a stranger is a 404 RequestError, not retried", ["statuses/list", "statuses/get-combined", "statuses/create"], async () => {
  for (const call of [
    (o) => o.rest.repos.listCommitStatusesForRef({ owner: ORG, repo: PRIVATE_REPO, ref: "main" }),
    (o) => o.rest.repos.getCombinedStatusForRef({ owner: ORG, repo: PRIVATE_REPO, ref: "main" }),
    (o) => o.rest.repos.createCommitStatus({ owner: ORG, repo: PRIVATE_REPO, sha: "3".repeat(40), state: "success" }),
  ]) {
    const fetch = countingFetch();
    await rejectsOnce(fetch, call(client({ token: TOKENS.stranger, fetch })), (e) => assertErrorBody(e, 404, "Not Found"));
  }
});

check("the owner sees the private repository", ["statuses/list"], async () => {
  const res = await client({ token: TOKENS.owner }).rest.repos.listCommitStatusesForRef({ owner: ORG, repo: PRIVATE_REPO, ref: "main" });
  assert.equal(res.status, 200);
});

check("an invalid state is a 422 RequestError with response.data.errors, not retried", ["statuses/create"], async () => {
  const c = await pushBranch();
  const fetch = countingFetch();
  const octokit = client({ token: TOKENS.owner, fetch });
  await rejectsOnce(fetch, octokit.rest.repos.createCommitStatus({ owner: ORG, repo: PUBLIC_REPO, sha: c.sha, state: "bogus" }), (e) => {
    assertErrorBody(e, 422, "Validation Failed");
    assert.ok(Array.isArray(e.response.data.errors) && e.response.data.errors.length > 0, "errors[]");
    const [err] = e.response.data.errors;
    assert.equal(typeof err, "object");
    assert.equal(err.field, "state");
    assert.match(e.message, /Validation Failed/);
  });
});

check("a bad token is a 401 RequestError 'Bad credentials', not retried", ["statuses/list", "rate-limit/get"], async () => {
  for (const call of [
    (o) => o.rest.repos.listCommitStatusesForRef({ owner: ORG, repo: PUBLIC_REPO, ref: "main" }),
    (o) => o.rest.rateLimit.get(),
  ]) {
    const fetch = countingFetch();
    await rejectsOnce(fetch, call(client({ token: "svp_thisisnotavalidtoken000000000000000000", fetch })), (e) => assertErrorBody(e, 401, "Bad credentials"));
  }
});

check("a 403 for missing push access is not retried", ["statuses/create"], async () => {
  const c = await pushBranch();
  const fetch = countingFetch();
  const octokit = client({ token: TOKENS.stranger, fetch });
  await rejectsOnce(fetch, octokit.rest.repos.createCommitStatus({ owner: ORG, repo: PUBLIC_REPO, sha: c.sha, state: "success" }), (e) => {
    assert.equal(e.status, 403);
    assert.equal(e.response.headers["retry-after"], undefined, "no retry-after on an ordinary 403");
    assert.notEqual(e.response.headers["x-ratelimit-remaining"], "0");
  });
});
