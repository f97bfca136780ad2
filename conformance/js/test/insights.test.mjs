// API usage insights through octokit.request (@octokit/rest has no methods for them; its
// paginate plugin knows the list routes) and octokit.paginate over our Link headers. A token made
// for this file is the actor of a known number of requests on two routes.
import assert from "node:assert/strict";
import { before } from "node:test";
import { ORG, TOKENS, adminCall, check, client, note } from "../lib/helpers.mjs";

const VIA = "octokit.request (no @octokit/rest method; paginate knows the list routes)";
const API = "GET /orgs/{org}/insights/api";
const owner = client({ token: TOKENS.owner });
const since = () => new Date(Date.now() - 3600_000).toISOString().replace(/\.\d+Z$/, "Z");
let actor; // {id, user_id}

for (const op of ["route-stats-by-actor", "subject-stats", "summary-stats", "summary-stats-by-user", "summary-stats-by-actor", "time-stats", "time-stats-by-user", "time-stats-by-actor", "user-stats"]) {
  note(`insights/get-${op}`, VIA);
}

before(async () => {
  actor = await adminCall("POST", "/tokens", { kind: "classic", login: "octo", scopes: ["read:org", "admin:org"], note: "js-insights" });
  const t = client({ token: actor.token });
  for (let i = 0; i < 3; i++) await t.request("GET /orgs/{org}/security-managers", { org: ORG });
  await t.request("GET /orgs/{org}/private-registries", { org: ORG });
  // Each node flushes the requests it recorded every second; a node reading insights flushes
  // only its own first.
  if (process.env.PLATFORM_CLUSTER) await new Promise((r) => setTimeout(r, 1500));
});

check("summaries count the actor's requests exactly", ["insights/get-summary-stats", "insights/get-summary-stats-by-actor", "insights/get-summary-stats-by-user"], async () => {
  const one = await owner.request(`${API}/summary-stats/{actor_type}/{actor_id}`, { org: ORG, actor_type: "classic_pat", actor_id: actor.id, min_timestamp: since() });
  assert.deepEqual(one.data, { total_request_count: 4, rate_limited_request_count: 0 });
  const user = await owner.request(`${API}/summary-stats/users/{user_id}`, { org: ORG, user_id: String(actor.user_id), min_timestamp: since() });
  const org = await owner.request(`${API}/summary-stats`, { org: ORG, min_timestamp: since() });
  assert.ok(org.data.total_request_count >= user.data.total_request_count && user.data.total_request_count >= 4);
  await assert.rejects(owner.request(`${API}/summary-stats`, { org: ORG }), (e) => e.status === 422);
});

check("route stats: paginate one route per page, sort arrays, filters", ["insights/get-route-stats-by-actor"], async () => {
  const route = `${API}/route-stats/{actor_type}/{actor_id}`;
  const base = { org: ORG, actor_type: "classic_pat", actor_id: actor.id, min_timestamp: since() };
  const all = await owner.paginate(route, { ...base, per_page: 1 });
  assert.deepEqual(all.map((r) => [r.api_route, r.total_request_count]), [["/orgs/:org/security-managers", 3], ["/orgs/:org/private-registries", 1]]);
  const sorted = await owner.request(route, { ...base, sort: ["api_route", "total_request_count"], direction: "asc" });
  assert.deepEqual(sorted.data.map((r) => r.api_route), ["/orgs/:org/private-registries", "/orgs/:org/security-managers"]);
  const filtered = await owner.request(route, { ...base, api_route_substring: "Private" });
  assert.equal(filtered.data.length, 1);
  assert.equal(filtered.data[0].last_rate_limited_timestamp, null);
});

check("time stats: aligned buckets summing to the requests", ["insights/get-time-stats", "insights/get-time-stats-by-actor", "insights/get-time-stats-by-user"], async () => {
  const q = { org: ORG, min_timestamp: since(), timestamp_increment: "10m" };
  const mine = await owner.request(`${API}/time-stats/{actor_type}/{actor_id}`, { ...q, actor_type: "classic_pat", actor_id: actor.id });
  assert.ok(mine.data.length === 6 || mine.data.length === 7, `${mine.data.length} buckets`);
  assert.ok(mine.data.every((b) => /T\d\d:\d0:00Z$/.test(b.timestamp)));
  assert.equal(mine.data.reduce((n, b) => n + b.total_request_count, 0), 4);
  const user = await owner.request(`${API}/time-stats/users/{user_id}`, { ...q, user_id: String(actor.user_id) });
  const org = await owner.request(`${API}/time-stats`, q);
  assert.equal(user.data.length, mine.data.length);
  assert.ok(org.data.reduce((n, b) => n + b.total_request_count, 0) >= 4);
  await assert.rejects(owner.request(`${API}/time-stats`, { ...q, timestamp_increment: "5s" }), (e) => e.status === 422);
});

check("subject and user stats name octo and the token", ["insights/get-subject-stats", "insights/get-user-stats"], async () => {
  const subjects = await owner.paginate(`${API}/subject-stats`, { org: ORG, min_timestamp: since(), subject_name_substring: "OCTO" });
  assert.ok(subjects.some((s) => s.subject_type === "user" && s.subject_name === "octo" && s.total_request_count >= 4));
  const actors = await owner.paginate(`${API}/user-stats/{user_id}`, { org: ORG, user_id: String(actor.user_id), min_timestamp: since(), actor_name_substring: "js-insights" });
  assert.deepEqual(actors.map((a) => [a.actor_type, a.actor_id, a.total_request_count]), [["classic_pat", actor.id, 4]]);
});
