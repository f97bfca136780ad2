// Branches, commits and refs through octokit.rest.repos.* and octokit.rest.git.*: branches
// pushed through the control plane (names with slashes), pagination, the 422 of an unknown ref.
import assert from "node:assert/strict";
import { before } from "node:test";
import { MAIN_URL, ORG, PUBLIC_REPO, TOKENS, check, client, pushBranch, unique } from "../lib/helpers.mjs";

const owner = client({ token: TOKENS.owner });
const repo = { owner: ORG, repo: PUBLIC_REPO };
let prefix; // a fresh branch prefix of this run: `<prefix>/a`, `<prefix>/b`
let a;
let b;

before(async () => {
  prefix = unique("js-git");
  a = await pushBranch({ branch: `${prefix}/a` });
  b = await pushBranch({ branch: `${prefix}/b` });
});

check("listBranches pages through branches by name", ["branches/list"], async () => {
  const all = await owner.paginate(owner.rest.repos.listBranches, { ...repo, per_page: 2 });
  const mine = all.filter((x) => x.name.startsWith(`${prefix}/`));
  assert.deepEqual(mine.map((x) => x.name), [a.branch, b.branch]);
  assert.equal(mine[0].commit.sha, a.sha);
  assert.equal(mine[0].commit.url, `${MAIN_URL}/repos/${ORG}/${PUBLIC_REPO}/commits/${a.sha}`);
  assert.equal(typeof mine[0].protected, "boolean");
  // Rulesets of other tests may protect every branch: the filter agrees with the flag.
  const same = await owner.paginate(owner.rest.repos.listBranches, { ...repo, protected: mine[1].protected, per_page: 100 });
  assert.ok(same.some((x) => x.name === b.branch));
  const other = await owner.paginate(owner.rest.repos.listBranches, { ...repo, protected: !mine[1].protected, per_page: 100 });
  assert.ok(!other.some((x) => x.name === b.branch));
});

check("getBranch takes a name with a slash", ["branches/get"], async () => {
  const res = await owner.rest.repos.getBranch({ ...repo, branch: a.branch });
  assert.equal(res.status, 200);
  assert.equal(res.data.name, a.branch);
  assert.equal(res.data.commit.sha, a.sha);
  assert.equal(typeof res.data._links.self, "string");
  assert.equal(typeof res.data.protection_url, "string");
  await assert.rejects(owner.rest.repos.getBranch({ ...repo, branch: `${prefix}/none` }), (e) => e.status === 404);
});

check("getCommit resolves a sha, a branch and heads/<branch>", ["commits/get"], async () => {
  for (const ref of [a.sha, a.branch, `heads/${a.branch}`]) {
    const res = await owner.rest.repos.getCommit({ ...repo, ref });
    assert.equal(res.data.sha, a.sha, ref);
    assert.equal(typeof res.data.commit.tree.sha, "string");
    assert.match(res.data.commit.author.date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.ok(Array.isArray(res.data.parents));
  }
  await assert.rejects(owner.rest.repos.getCommit({ ...repo, ref: `${prefix}-none` }), (e) => e.status === 422 && /No commit found for SHA/.test(e.message));
});

check("git.getRef and git.listMatchingRefs", ["git/get-ref", "git/list-matching-refs"], async () => {
  const ref = await owner.rest.git.getRef({ ...repo, ref: `heads/${b.branch}` });
  assert.equal(ref.data.ref, `refs/heads/${b.branch}`);
  assert.equal(ref.data.object.sha, b.sha);
  assert.equal(ref.data.object.type, "commit");
  await assert.rejects(owner.rest.git.getRef({ ...repo, ref: `heads/${prefix}` }), (e) => e.status === 404);
  const m = await owner.paginate(owner.rest.git.listMatchingRefs, { ...repo, ref: `heads/${prefix}/`, per_page: 1 });
  assert.deepEqual(m.map((r) => r.ref), [`refs/heads/${a.branch}`, `refs/heads/${b.branch}`]);
  const none = await owner.rest.git.listMatchingRefs({ ...repo, ref: `heads/${prefix}-none` });
  assert.deepEqual(none.data, []);
});
