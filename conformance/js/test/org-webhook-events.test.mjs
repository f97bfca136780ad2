// Organization-level webhook events — `team` created/edited/deleted, `membership` added/removed
// and `organization` member_added/member_removed — caused through the control plane in an
// organization of this file's own, received at a loopback receiver by hooks with `*` (json with a
// secret, and form) and validated against the published webhook schemas (lib/webhooks.mjs).
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { TOKENS, admin, adminCall, check, client, unique } from "../lib/helpers.mjs";
import { allEventHooks } from "../lib/webhooks.mjs";

const owner = client({ token: TOKENS.owner });
const org = unique("js-orgev");
let hooks;
let rx;

before(async () => {
  await adminCall("POST", "/orgs", { login: org, owners: ["octo"] });
  hooks = await allEventHooks(owner, org);
  rx = hooks.rx;
});

after(() => hooks.close());

/** Waits for the delivery of `event` and `action` matching `pred` at every hook; all validated. */
const delivered = (event, action, pred) => hooks.delivered(event, action, pred);

const user = async () => (await adminCall("POST", "/users", { login: unique("js-ev") })).login;

check("organization member_added and member_removed validate", [], async () => {
  const login = await user();
  const added = await adminCall("PUT", `/orgs/${org}/members/${login}`, {});
  assert.equal(added.role, "member");
  const p = await delivered("organization", "member_added", (x) => x.membership.user.login === login);
  assert.equal(p.organization.login, org);
  assert.equal(p.sender.login, org);
  assert.equal((await admin("DELETE", `/orgs/${org}/members/${login}`)).status, 204);
  const removed = await delivered("organization", "member_removed", (x) => x.membership.user.login === login);
  assert.equal(removed.membership.state, "active");
});

check("team created, edited and deleted and membership added and removed validate", [], async () => {
  const [a, b] = [await user(), await user()];
  for (const login of [a, b]) await adminCall("PUT", `/orgs/${org}/members/${login}`, {});
  const name = unique("Team");
  const team = await adminCall("POST", `/orgs/${org}/teams`, { name, description: "first", members: [a] });
  const ofTeam = (x) => x.team.id === team.id;
  const created = await delivered("team", "created", ofTeam);
  assert.equal(created.team.name, name);
  assert.equal(created.team.parent, null);
  const joined = await delivered("membership", "added", (x) => ofTeam(x) && x.member.login === a);
  assert.equal(joined.scope, "team");
  await adminCall("PATCH", `/orgs/${org}/teams/${team.slug}`, { description: "second", privacy: "secret" });
  const edited = await delivered("team", "edited", ofTeam);
  assert.deepEqual(edited.changes, { description: { from: "first" }, privacy: { from: "closed" } });
  await adminCall("PUT", `/orgs/${org}/teams/${team.slug}/members/${b}`, {});
  await delivered("membership", "added", (x) => ofTeam(x) && x.member.login === b);
  assert.equal((await admin("DELETE", `/orgs/${org}/teams/${team.slug}/members/${b}`)).status, 204);
  const left = await delivered("membership", "removed", (x) => ofTeam(x) && x.member.login === b);
  assert.equal(left.scope, "team");
  // Leaving the organization takes the user off its teams: `membership` removed, scope organization.
  assert.equal((await admin("DELETE", `/orgs/${org}/members/${a}`)).status, 204);
  const gone = await delivered("membership", "removed", (x) => ofTeam(x) && x.member.login === a);
  assert.equal(gone.scope, "organization");
  assert.equal((await admin("DELETE", `/orgs/${org}/teams/${team.slug}`)).status, 204);
  const deleted = await delivered("team", "deleted", ofTeam);
  assert.equal(deleted.team.privacy, "secret");
  rx.assertAllValid();
});
