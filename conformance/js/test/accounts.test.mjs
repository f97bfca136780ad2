// Users, organizations and teams through octokit.rest.users.*, orgs.*, teams.*, enterpriseTeams.*
// and meta.get: the reads every client makes around the spec's operations.
import assert from "node:assert/strict";
import { ORG, TOKENS, adminCall, check, client, freshUser, note, unique } from "../lib/helpers.mjs";

const owner = client({ token: TOKENS.owner });

/** A fresh organization owned by a fresh user, with a closed and a secret team; and a member. */
async function world() {
  const boss = await freshUser({ scopes: ["read:org", "user"] });
  const member = await freshUser({ scopes: ["read:org"] });
  const org = unique("jsorg");
  await adminCall("POST", "/orgs", { login: org, owners: [boss.login], members: [member.login] });
  await adminCall("POST", `/orgs/${org}/teams`, { name: "Core", members: [member.login] });
  await adminCall("POST", `/orgs/${org}/teams`, { name: "Hidden", privacy: "secret", members: [boss.login] });
  return { boss, member, org };
}

check("users.getAuthenticated and users.getByUsername", ["users/get-authenticated", "users/get-by-username"], async () => {
  const { boss } = await world();
  const me = await client({ token: boss.token }).rest.users.getAuthenticated();
  assert.equal(me.data.login, boss.login);
  assert.equal(typeof me.data.total_private_repos, "number", "a user-scoped token sees the private profile");
  // The owner token has no user scope: the public profile.
  const octo = await owner.rest.users.getAuthenticated();
  assert.equal(octo.data.login, "octo");
  assert.equal(octo.data.total_private_repos, undefined);
  const byName = await client().rest.users.getByUsername({ username: "octo" });
  assert.equal(byName.data.name, "Octo Owner");
  const org = await client().rest.users.getByUsername({ username: ORG });
  assert.equal(org.data.type, "Organization");
  await assert.rejects(client().rest.users.getByUsername({ username: unique("nobody") }), (e) => e.status === 404);
  await assert.rejects(client().rest.users.getAuthenticated(), (e) => e.status === 401);
});

check("orgs.listForAuthenticatedUser (paginated) and orgs.get", ["orgs/list-for-authenticated-user", "orgs/get"], async () => {
  const { boss, org } = await world();
  await adminCall("POST", "/orgs", { login: unique("jsorg2"), members: [boss.login] });
  const gh = client({ token: boss.token });
  const all = await gh.paginate(gh.rest.orgs.listForAuthenticatedUser, { per_page: 1 });
  assert.equal(all.length, 2, JSON.stringify(all));
  assert.ok(all.some((o) => o.login === org));
  const got = await gh.rest.orgs.get({ org });
  assert.equal(got.data.login, org);
  assert.equal(got.data.type, "Organization");
  const conf = await owner.rest.orgs.get({ org: ORG });
  assert.equal(typeof conf.data.plan?.seats, "number", "an owner with admin:org sees the plan");
  await assert.rejects(owner.rest.orgs.get({ org: "octo" }), (e) => e.status === 404);
});

check("teams.list and teams.getByName: secret teams for their members only", ["teams/list", "teams/get-by-name"], async () => {
  const { boss, member, org } = await world();
  const b = client({ token: boss.token });
  const m = client({ token: member.token });
  assert.deepEqual((await b.paginate(b.rest.teams.list, { org, per_page: 1 })).map((t) => t.slug), ["core", "hidden"]);
  assert.deepEqual((await m.rest.teams.list({ org })).data.map((t) => t.slug), ["core"]);
  const core = await m.rest.teams.getByName({ org, team_slug: "core" });
  assert.equal(core.data.members_count, 1);
  assert.equal(core.data.organization.login, org);
  await assert.rejects(m.rest.teams.getByName({ org, team_slug: "hidden" }), (e) => e.status === 404);
  await assert.rejects(owner.rest.teams.list({ org }), (e) => e.status === 404, "octo is not in the organization");
  const seeded = await owner.rest.teams.getByName({ org: ORG, team_slug: "security" });
  assert.equal(seeded.data.slug, "security");
});

note("teams/get-by-id", "no octokit method: a team's url followed through octokit.request");
check("a team's url answers", ["teams/get-by-id"], async () => {
  const { member, org } = await world();
  const m = client({ token: member.token });
  const [core] = (await m.rest.teams.list({ org })).data;
  const full = await m.request(`GET ${core.url}`);
  assert.equal(full.data.slug, "core");
  assert.equal(full.data.members_count, 1);
});

check("enterpriseTeams.list and enterpriseTeams.get", ["enterprise-teams/list", "enterprise-teams/get"], async () => {
  const teams = await owner.paginate(owner.rest.enterpriseTeams.list, { enterprise: "conf-ent", per_page: 1 });
  assert.ok(teams.some((t) => t.slug === "ent:conformance"), JSON.stringify(teams));
  const team = await owner.rest.enterpriseTeams.get({ enterprise: "conf-ent", team_slug: "ent:conformance" });
  assert.equal(team.data.name, "Conformance");
  const byId = await owner.rest.enterpriseTeams.get({ enterprise: "conf-ent", team_slug: String(team.data.id) });
  assert.equal(byId.data.slug, "ent:conformance");
  await assert.rejects(client({ token: TOKENS.stranger }).rest.enterpriseTeams.list({ enterprise: "conf-ent" }), (e) => e.status === 404);
});

check("meta.get", ["meta/get"], async () => {
  const meta = await client().rest.meta.get();
  assert.equal(meta.data.verifiable_password_authentication, false);
  assert.ok(Array.isArray(meta.data.hooks));
});
