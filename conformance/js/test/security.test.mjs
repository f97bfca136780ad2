// Security managers through octokit.rest.orgs.* (deprecated there too), and dependency alerts:
// @octokit/rest's alert methods call the hosted platform's vendor path word, so those are driven
// through octokit.request with the spec's routes (the client's own request, pagination and
// error handling).
import assert from "node:assert/strict";
import { ORG, PUBLIC_REPO, TOKENS, check, client, note } from "../lib/helpers.mjs";

const owner = client({ token: TOKENS.owner });
const VIA = "octokit.request with the spec's path (the rest methods use the vendor path word)";
for (const op of ["depbot-alerts/list-for-enterprise", "depbot-alerts/list-for-org", "depbot-alerts/list-for-repo", "depbot-alerts/get", "depbot-alerts/update"]) {
  note(op, VIA);
}

check("security managers: add, list, remove (closing down: Deprecation and Sunset)", ["security-managers/add-team", "security-managers/list-teams", "security-managers/remove-team"], async () => {
  const add = await owner.rest.orgs.addSecurityManagerTeam({ org: ORG, team_slug: "security" });
  assert.equal(add.status, 204);
  assert.match(add.headers.sunset, /GMT$/);
  const list = await owner.rest.orgs.listSecurityManagerTeams({ org: ORG });
  assert.equal(list.status, 200);
  assert.ok(list.headers.deprecation);
  assert.ok(list.data.some((t) => t.slug === "security" && t.type === "organization" && typeof t.id === "number"));
  const del = await owner.rest.orgs.removeSecurityManagerTeam({ org: ORG, team_slug: "security" });
  assert.equal(del.status, 204);
  await assert.rejects(owner.rest.orgs.addSecurityManagerTeam({ org: ORG, team_slug: "nope" }), (e) => e.status === 404);
});

check("repository alerts: list with filters, paginate by cursor, get", ["depbot-alerts/list-for-repo", "depbot-alerts/get"], async () => {
  const all = await owner.paginate("GET /repos/{owner}/{repo}/depbot/alerts", { owner: ORG, repo: PUBLIC_REPO, per_page: 1 });
  assert.ok(all.length >= 2, `paginated ${all.length} alerts`);
  assert.equal(new Set(all.map((a) => a.number)).size, all.length, "each alert once");
  const npm = await owner.request("GET /repos/{owner}/{repo}/depbot/alerts", { owner: ORG, repo: PUBLIC_REPO, ecosystem: "npm", has: "patch" });
  assert.deepEqual(npm.data.map((a) => a.dependency.package.name), ["lodash"]);
  const one = await owner.request("GET /repos/{owner}/{repo}/depbot/alerts/{alert_number}", { owner: ORG, repo: PUBLIC_REPO, alert_number: 1 });
  assert.equal(one.data.number, 1);
  assert.equal(one.data.security_advisory.advisory_id, "SSA-conf-0001-lodash");
  await assert.rejects(owner.request("GET /repos/{owner}/{repo}/depbot/alerts", { owner: ORG, repo: PUBLIC_REPO, state: "closed" }), (e) => e.status === 422);
});

check("update: assign, dismiss with a reason, reopen; 422 without a reason", ["depbot-alerts/update"], async () => {
  const route = "PATCH /repos/{owner}/{repo}/depbot/alerts/{alert_number}";
  const base = { owner: ORG, repo: PUBLIC_REPO, alert_number: 2 };
  await assert.rejects(owner.request(route, { ...base, state: "dismissed" }), (e) => e.status === 422 && Array.isArray(e.response.data.errors));
  const d = await owner.request(route, { ...base, state: "dismissed", dismissed_reason: "not_used", dismissed_comment: "dev only", assignees: ["octo"] });
  assert.equal(d.data.state, "dismissed");
  assert.equal(d.data.dismissed_by.login, "octo");
  assert.deepEqual(d.data.assignees.map((u) => u.login), ["octo"]);
  const o = await owner.request(route, { ...base, state: "open", assignees: [] });
  assert.equal(o.data.state, "open");
  assert.equal(o.data.dismissed_reason, null);
  assert.deepEqual(o.data.assignees, []);
});

check("organization and enterprise lists carry the repository", ["depbot-alerts/list-for-org", "depbot-alerts/list-for-enterprise"], async () => {
  const org = await owner.paginate("GET /orgs/{org}/depbot/alerts", { org: ORG, per_page: 1 });
  assert.ok(org.length >= 2 && org.every((a) => a.repository.full_name === `${ORG}/${PUBLIC_REPO}`));
  const ent = await owner.request("GET /enterprises/{enterprise}/depbot/alerts", { enterprise: "conf-ent", severity: "critical" });
  assert.deepEqual(ent.data.map((a) => a.repository.full_name), ["conf-sec/app"]);
  const v2026 = await owner.request("GET /enterprises/{enterprise}/depbot/alerts", { enterprise: "conf-ent", headers: { "x-service-api-version": "2026-03-10" } });
  assert.equal(v2026.data[0].security_advisory.cvss, undefined);
});
