// Event feeds through octokit's activity.* methods: octokit.paginate over the Link header,
// visibility of private events, and conditional polling (ETag → 304, not charged; X-Poll-Interval).
import assert from "node:assert/strict";
import { before } from "node:test";
import { ORG, PRIVATE_REPO, PUBLIC_REPO, TOKENS, adminCall, check, client, freshUser, randomSha, unique } from "../lib/helpers.mjs";

let user; // a fresh user who pushes once to the public and once to the private repository
let pub; // {sha, branch} of the public push
let priv;

async function pushAs(repo, login) {
  const branch = unique("feed");
  const sha = randomSha();
  await adminCall("POST", `/repos/${ORG}/${repo}/refs`, { ref: `refs/heads/${branch}`, sha, pusher: login });
  return { branch, sha };
}

const pushesOf = (events, sha) => events.filter((e) => e.type === "PushEvent" && e.payload.head === sha);

function assertEvent(e) {
  assert.equal(typeof e.id, "string");
  assert.equal(typeof e.type, "string");
  for (const k of ["id", "login", "display_login", "gravatar_id", "url", "avatar_url"]) assert.ok(k in e.actor, `actor.${k}`);
  assert.match(e.repo.name, /^[^/]+\/[^/]+$/);
  assert.equal(typeof e.repo.id, "number");
  assert.equal(typeof e.public, "boolean");
  assert.match(e.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  assert.equal(typeof e.payload, "object");
}

before(async () => {
  user = await freshUser();
  pub = await pushAs(PUBLIC_REPO, user.login);
  priv = await pushAs(PRIVATE_REPO, user.login);
});

check("activity.listPublicEvents: public events only, 15 per page by default, paginate follows Link", ["events/list-public"], async () => {
  const octokit = client({ token: user.token });
  const first = await octokit.rest.activity.listPublicEvents();
  assert.ok(first.data.length <= 15);
  assert.ok(first.headers["x-poll-interval"] > 0, "X-Poll-Interval");
  const all = await octokit.paginate(octokit.rest.activity.listPublicEvents, { per_page: 20 });
  assert.ok(all.length <= 300);
  all.forEach(assertEvent);
  assert.ok(all.every((e) => e.public === true));
  assert.equal(pushesOf(all, pub.sha).length, 1);
  assert.equal(pushesOf(all, priv.sha).length, 0);
});

check("activity.listRepoEvents: the push with its payload; paginate", ["events/list-for-repo"], async () => {
  const octokit = client({ token: user.token });
  const all = await octokit.paginate(octokit.rest.activity.listRepoEvents, { owner: ORG, repo: PUBLIC_REPO, per_page: 10 });
  const [push] = pushesOf(all, pub.sha);
  assert.ok(push, "the push is in the repository's feed");
  assertEvent(push);
  assert.equal(push.actor.login, user.login);
  assert.equal(push.repo.name, `${ORG}/${PUBLIC_REPO}`);
  assert.equal(push.payload.ref, `refs/heads/${pub.branch}`);
  assert.equal(push.payload.before, "0".repeat(40));
  assert.equal(typeof push.payload.push_id, "number");
  const create = all.find((e) => e.type === "CreateEvent" && e.payload.ref === pub.branch);
  assert.equal(create.payload.ref_type, "branch");
  assert.equal(create.payload.full_ref, `refs/heads/${pub.branch}`);
});

check("activity.listRepoEvents on a private repository: members only", ["events/list-for-repo"], async () => {
  const owner = client({ token: TOKENS.owner });
  const events = await owner.paginate(owner.rest.activity.listRepoEvents, { owner: ORG, repo: PRIVATE_REPO, per_page: 100 });
  assert.equal(pushesOf(events, priv.sha).length, 1);
  assert.ok(events.every((e) => e.public === false));
  const stranger = client({ token: TOKENS.stranger });
  const err = await stranger.rest.activity.listRepoEvents({ owner: ORG, repo: PRIVATE_REPO }).catch((e) => e);
  assert.equal(err.status, 404);
});

check("activity.listPublicEventsForRepoNetwork", ["events/list-for-network"], async () => {
  const octokit = client({ token: user.token });
  const all = await octokit.paginate(octokit.rest.activity.listPublicEventsForRepoNetwork, { owner: ORG, repo: PUBLIC_REPO, per_page: 50 });
  assert.equal(pushesOf(all, pub.sha).length, 1);
});

check("activity.listPublicOrgEvents: public events, each carrying org", ["events/list-for-org"], async () => {
  const octokit = client();
  const all = await octokit.paginate(octokit.rest.activity.listPublicOrgEvents, { org: ORG, per_page: 100 });
  assert.ok(all.length > 0);
  assert.ok(all.every((e) => e.public === true && e.org?.login === ORG));
  assert.equal(pushesOf(all, pub.sha).length, 1);
  assert.equal(pushesOf(all, priv.sha).length, 0);
});

check("activity.listEventsForAuthenticatedUser: private events only for the user themself", ["events/list-for-user"], async () => {
  const own = client({ token: user.token });
  const mine = await own.paginate(own.rest.activity.listEventsForAuthenticatedUser, { username: user.login });
  assert.equal(pushesOf(mine, pub.sha).length, 1);
  assert.equal(pushesOf(mine, priv.sha).length, 1);
  const other = client({ token: TOKENS.stranger });
  const theirs = await other.paginate(other.rest.activity.listEventsForAuthenticatedUser, { username: user.login });
  assert.equal(pushesOf(theirs, pub.sha).length, 1);
  assert.equal(pushesOf(theirs, priv.sha).length, 0);
});

check("activity.listPublicEventsForUser", ["events/list-public-for-user"], async () => {
  const own = client({ token: user.token });
  const all = await own.paginate(own.rest.activity.listPublicEventsForUser, { username: user.login });
  assert.deepEqual(all.map((e) => e.type).sort(), ["CreateEvent", "PushEvent"]);
  assert.ok(all.every((e) => e.public === true));
});

check("activity.listOrgEventsForAuthenticatedUser: a member's dashboard includes private repositories", ["events/list-org-for-user"], async () => {
  const octokit = client({ token: TOKENS.owner });
  const all = await octokit.paginate(octokit.rest.activity.listOrgEventsForAuthenticatedUser, { username: "octo", org: ORG, per_page: 100 });
  assert.equal(pushesOf(all, priv.sha).length, 1);
  assert.ok(all.every((e) => e.org?.login === ORG));
  const err = await client({ token: user.token }).rest.activity.listOrgEventsForAuthenticatedUser({ username: "octo", org: ORG }).catch((e) => e);
  assert.equal(err.status, 404, "only the user themself");
});

check("conditional polling: if-none-match gives 304 without charging; X-Poll-Interval", ["events/list-for-repo", "events/list-public"], async () => {
  const fresh = await freshUser();
  const octokit = client({ token: fresh.token });
  for (const [call, params] of [
    [octokit.rest.activity.listRepoEvents, { owner: ORG, repo: PUBLIC_REPO }],
    [octokit.rest.activity.listPublicEvents, {}],
  ]) {
    const first = await call(params);
    const etag = first.headers.etag;
    assert.match(etag, /^"[^"]+"$/);
    assert.ok(Number(first.headers["x-poll-interval"]) >= 1);
    const err = await call({ ...params, headers: { "if-none-match": etag } }).then(() => assert.fail("expected 304"), (e) => e);
    assert.equal(err.status, 304);
    assert.equal(err.response.headers["x-ratelimit-used"], first.headers["x-ratelimit-used"], "a 304 is not charged");
  }
});
