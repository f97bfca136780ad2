// Enterprise team memberships and private registries through octokit.rest.enterpriseTeamMemberships.*
// and octokit.rest.privateRegistries.*; development-environment secrets, assistant content
// exclusion and the teams of an enterprise member through octokit.request (their octokit
// methods use the hosted path words, not the neutral ones, or do not exist).
import assert from "node:assert/strict";
import { ORG, TOKENS, check, client, note } from "../lib/helpers.mjs";

const owner = client({ token: TOKENS.owner });
const stranger = client({ token: TOKENS.stranger });
const ENT = { enterprise: "conf-ent", "enterprise-team": "ent:conformance" };
const REQUEST = "no octokit method for the neutral path: driven through octokit.request";

check("enterpriseTeamMemberships: add, get, list, remove", [
  "enterprise-team-members/add", "enterprise-team-members/get", "enterprise-team-members/list", "enterprise-team-members/remove",
], async () => {
  const added = await owner.rest.enterpriseTeamMemberships.add({ ...ENT, username: "member" });
  assert.equal(added.status, 201);
  assert.equal(added.data.login, "member");
  const got = await owner.rest.enterpriseTeamMemberships.get({ ...ENT, username: "member" });
  assert.equal(got.data.login, "member");
  const all = await owner.paginate(owner.rest.enterpriseTeamMemberships.list, { ...ENT, per_page: 1 });
  assert.ok(all.map((u) => u.login).includes("member"), JSON.stringify(all));
  const removed = await owner.rest.enterpriseTeamMemberships.remove({ ...ENT, username: "member" });
  assert.equal(removed.status, 204);
  await assert.rejects(owner.rest.enterpriseTeamMemberships.get({ ...ENT, username: "member" }), (e) => e.status === 404);
});

check("enterpriseTeamMemberships: bulk add and remove, all or nothing", [
  "enterprise-team-members/bulk-add", "enterprise-team-members/bulk-remove",
], async () => {
  const added = await owner.rest.enterpriseTeamMemberships.bulkAdd({ ...ENT, usernames: ["member"] });
  assert.deepEqual(added.data.map((u) => u.login), ["member"]);
  await assert.rejects(owner.rest.enterpriseTeamMemberships.bulkAdd({ ...ENT, usernames: ["ghost-user"] }), (e) => e.status === 422);
  const removed = await owner.rest.enterpriseTeamMemberships.bulkRemove({ ...ENT, usernames: ["member"] });
  assert.deepEqual(removed.data.map((u) => u.login), ["member"]);
});

note("enterprise-teams/list-for-user", REQUEST);
check("teams of an enterprise member (owners only)", ["enterprise-teams/list-for-user"], async () => {
  const res = await owner.request("GET /enterprises/{enterprise}/members/{username}/teams", { enterprise: "conf-ent", username: "octo" });
  assert.ok(res.data.some((t) => t.slug === "ent:conformance"));
  await assert.rejects(
    stranger.request("GET /enterprises/{enterprise}/members/{username}/teams", { enterprise: "conf-ent", username: "octo" }),
    (e) => e.status === 404,
  );
});

const devenv = { owner: ORG, repo: "public-repo" };
for (const op of ["devenv-secrets/list", "devenv-secrets/get-public-key", "devenv-secrets/get", "devenv-secrets/create-or-update", "devenv-secrets/delete"]) {
  note(op, REQUEST);
}

check("devenv secrets: public key, list, and unknown secrets", [
  "devenv-secrets/get-public-key", "devenv-secrets/list", "devenv-secrets/get", "devenv-secrets/delete",
], async () => {
  const key = await owner.request("GET /repos/{owner}/{repo}/devenvs/secrets/public-key", devenv);
  assert.equal(Buffer.from(key.data.key, "base64").length, 32);
  assert.ok(key.data.key_id);
  const list = await owner.request("GET /repos/{owner}/{repo}/devenvs/secrets", devenv);
  assert.equal(typeof list.data.total_count, "number");
  assert.ok(Array.isArray(list.data.secrets));
  await assert.rejects(owner.request("GET /repos/{owner}/{repo}/devenvs/secrets/{secret_name}", { ...devenv, secret_name: "JS_NONE" }), (e) => e.status === 404);
  await assert.rejects(owner.request("DELETE /repos/{owner}/{repo}/devenvs/secrets/{secret_name}", { ...devenv, secret_name: "JS_NONE" }), (e) => e.status === 404);
});

check("devenv secrets: values that are not sealed boxes are refused with 422", ["devenv-secrets/create-or-update"], async () => {
  const { data: key } = await owner.request("GET /repos/{owner}/{repo}/devenvs/secrets/public-key", devenv);
  const put = (body) => owner.request("PUT /repos/{owner}/{repo}/devenvs/secrets/{secret_name}", { ...devenv, secret_name: "JS_BAD", ...body });
  await assert.rejects(put({ encrypted_value: Buffer.from("plaintext").toString("base64"), key_id: key.key_id }), (e) => {
    assert.equal(e.status, 422);
    assert.match(e.response.data.errors[0].message, /could not be decrypted/);
    return true;
  });
  await assert.rejects(put({ encrypted_value: "AAAA", key_id: "stale" }), (e) => e.status === 422 && e.response.data.errors[0].field === "key_id");
});

check("privateRegistries: an OIDC configuration's whole life", [
  "private-registries/get-public-key", "private-registries/create", "private-registries/get", "private-registries/list",
  "private-registries/update", "private-registries/delete",
], async () => {
  const key = await owner.rest.privateRegistries.getOrgPublicKey({ org: ORG });
  assert.ok(key.data.key_id && key.data.key);
  // The body field `url` collides with octokit's own `url` request option, so the body goes in `data`.
  const created = await owner.rest.privateRegistries.createOrgPrivateRegistry({
    org: ORG,
    data: {
      registry_type: "cargo_registry", url: "https://crates.example.com/index", visibility: "all",
      auth_type: "oidc_cloud_c", workload_identity_provider: "projects/1/locations/global/workloadIdentityPools/p/providers/q",
    },
  });
  assert.equal(created.status, 201);
  const name = created.data.name;
  assert.deepEqual(created.data.selected_repository_ids, []);
  const got = await owner.rest.privateRegistries.getOrgPrivateRegistry({ org: ORG, secret_name: name });
  assert.equal(got.data.auth_type, "oidc_cloud_c");
  const all = await owner.paginate(owner.rest.privateRegistries.listOrgPrivateRegistries, { org: ORG });
  assert.ok(all.some((c) => c.name === name), JSON.stringify(all));
  const upd = await owner.rest.privateRegistries.updateOrgPrivateRegistry({ org: ORG, secret_name: name, service_account: "sa@example" });
  assert.equal(upd.status, 204);
  await assert.rejects(
    owner.rest.privateRegistries.updateOrgPrivateRegistry({ org: ORG, secret_name: name, auth_type: "token" }),
    (e) => e.status === 422,
  );
  await assert.rejects(
    owner.rest.privateRegistries.createOrgPrivateRegistry({ org: ORG, data: { registry_type: "npm_registry", url: "https://npm.example.com", visibility: "all" } }),
    (e) => e.status === 422 && e.response.data.errors[0].field === "encrypted_value",
  );
  assert.equal((await owner.rest.privateRegistries.deleteOrgPrivateRegistry({ org: ORG, secret_name: name })).status, 204);
});

note("private-registries/create", "the body field `url` collides with octokit's `url` request option: the body is sent as `data`");
note("assistant-exclusions/get", REQUEST);
note("assistant-exclusions/set", REQUEST);
check("assistant content exclusion: set replaces, get returns the rules", ["assistant-exclusions/set", "assistant-exclusions/get"], async () => {
  const set = await owner.request("PUT /orgs/{org}/assistant/content_exclusion", { org: ORG, data: { "public-repo": ["/vendor/**"] } });
  assert.equal(typeof set.data.message, "string");
  const got = await owner.request("GET /orgs/{org}/assistant/content_exclusion", { org: ORG });
  assert.deepEqual(got.data, { "public-repo": ["/vendor/**"] });
  await assert.rejects(owner.request("PUT /orgs/{org}/assistant/content_exclusion", { org: ORG, data: { x: 1 } }), (e) => e.status === 422);
});
