// octokit.paginate follows the server's `Link: <…>; rel="next"` across several pages.
import assert from "node:assert/strict";
import { before } from "node:test";
import { MAIN_URL, ORG, PUBLIC_REPO, TOKENS, bareClient, check, client, countingFetch, pushBranch } from "../lib/helpers.mjs";

const N = 75;
let commit;
let created; // ids, in creation order

before(async () => {
  commit = await pushBranch();
  const setup = bareClient({ token: TOKENS.owner }); // no throttling: it would space 75 writes 1 s apart
  created = [];
  for (let i = 0; i < N; i++) {
    const { data } = await setup.rest.repos.createCommitStatus({
      owner: ORG, repo: PUBLIC_REPO, sha: commit.sha, state: "success", context: `ctx/${i}`,
    });
    created.push(data.id);
  }
});

check(`paginate(listCommitStatusesForRef) returns all ${N} statuses, newest first, in 3 pages`, ["statuses/list"], async () => {
  const fetch = countingFetch();
  const octokit = client({ token: TOKENS.owner, fetch });
  const all = await octokit.paginate(octokit.rest.repos.listCommitStatusesForRef, {
    owner: ORG, repo: PUBLIC_REPO, ref: commit.branch, per_page: 30,
  });
  assert.deepEqual(all.map((s) => s.id), [...created].reverse());
  assert.equal(fetch.calls.length, 3);
  for (const [i, c] of fetch.calls.entries()) {
    assert.ok(c.url.startsWith(MAIN_URL + "/"), `request ${i} stays on the base URL: ${c.url}`);
    if (i > 0) assert.match(c.url, new RegExp(`[?&]page=${i + 1}(&|$)`));
  }
});

check("each page carries an absolute Link with quoted rel next/last; the last page has no next", ["statuses/list"], async () => {
  const octokit = client({ token: TOKENS.owner });
  const pages = [];
  for await (const res of octokit.paginate.iterator(octokit.rest.repos.listCommitStatusesForRef, {
    owner: ORG, repo: PUBLIC_REPO, ref: commit.sha, per_page: 40,
  })) pages.push(res);
  assert.deepEqual(pages.map((p) => p.data.length), [40, 35]);
  const first = pages[0].headers.link;
  assert.match(first, /<http:\/\/[^>]+[?&]page=2[^>]*>; rel="next"/);
  assert.match(first, /<http:\/\/[^>]+[?&]page=2[^>]*>; rel="last"/);
  assert.ok(!/rel="next"/.test(pages[1].headers.link ?? ""), "no next on the last page");
});

check("paginate with per_page=100 is one request", ["statuses/list"], async () => {
  const fetch = countingFetch();
  const octokit = client({ token: TOKENS.owner, fetch });
  const all = await octokit.paginate(octokit.rest.repos.listCommitStatusesForRef, {
    owner: ORG, repo: PUBLIC_REPO, ref: commit.sha, per_page: 100,
  });
  assert.equal(all.length, N);
  assert.equal(fetch.calls.length, 1);
});

check("paginate over the legacy route (generic request) returns the same list", ["statuses/list-legacy"], async () => {
  const octokit = client({ token: TOKENS.owner });
  const all = await octokit.paginate("GET /repos/{owner}/{repo}/statuses/{ref}", {
    owner: ORG, repo: PUBLIC_REPO, ref: commit.sha, per_page: 25,
  });
  assert.deepEqual(all.map((s) => s.id), [...created].reverse());
});

check("getCombinedStatusForRef pages its statuses with per_page/page", ["statuses/get-combined"], async () => {
  const octokit = client({ token: TOKENS.owner });
  const p1 = await octokit.rest.repos.getCombinedStatusForRef({ owner: ORG, repo: PUBLIC_REPO, ref: commit.sha, per_page: 50 });
  const p2 = await octokit.rest.repos.getCombinedStatusForRef({ owner: ORG, repo: PUBLIC_REPO, ref: commit.sha, per_page: 50, page: 2 });
  assert.equal(p1.data.total_count, N);
  assert.equal(p1.data.statuses.length, 50);
  assert.equal(p2.data.statuses.length, 25);
  const contexts = new Set([...p1.data.statuses, ...p2.data.statuses].map((s) => s.context));
  assert.equal(contexts.size, N);
});
