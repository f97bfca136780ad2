// Repositories through octokit.rest.repos.*: get, the lists, create, update (rename), delete.
import assert from "node:assert/strict";
import { ORG, PRIVATE_REPO, PUBLIC_REPO, TOKENS, adminCall, check, client, freshUser, unique } from "../lib/helpers.mjs";

const owner = client({ token: TOKENS.owner });
const stranger = client({ token: TOKENS.stranger });

function assertRepo(r, fullName) {
  assert.equal(r.full_name, fullName);
  assert.equal(typeof r.id, "number");
  for (const k of ["node_id", "html_url", "url", "default_branch", "visibility", "created_at", "updated_at"]) assert.equal(typeof r[k], "string", k);
  assert.equal(typeof r.private, "boolean");
  assert.equal(r.owner.login, fullName.split("/")[0]);
}

check("repos.get answers the full repository with the caller's permissions", ["repos/get"], async () => {
  const { status, data } = await owner.rest.repos.get({ owner: ORG, repo: PUBLIC_REPO });
  assert.equal(status, 200);
  assertRepo(data, `${ORG}/${PUBLIC_REPO}`);
  assert.equal(data.organization.login, ORG);
  assert.deepEqual(data.permissions, { admin: true, maintain: true, push: true, triage: true, pull: true });
  const other = await stranger.rest.repos.get({ owner: ORG, repo: PUBLIC_REPO });
  assert.equal(other.data.permissions.push, false);
  await assert.rejects(stranger.rest.repos.get({ owner: ORG, repo: PRIVATE_REPO }), (e) => e.status === 404);
});

check("repos.listForOrg shows private repositories to members only", ["repos/list-for-org"], async () => {
  const mine = (await owner.paginate(owner.rest.repos.listForOrg, { org: ORG, per_page: 1 })).map((r) => r.name);
  assert.ok(mine.includes(PUBLIC_REPO) && mine.includes(PRIVATE_REPO), mine.join());
  const theirs = (await stranger.paginate(stranger.rest.repos.listForOrg, { org: ORG })).map((r) => r.name);
  assert.ok(theirs.includes(PUBLIC_REPO) && !theirs.includes(PRIVATE_REPO), theirs.join());
});

check("create, list, rename (the old name redirects), delete a user's repository", [
  "repos/create-for-authenticated-user", "repos/list-for-authenticated-user", "repos/list-for-user", "repos/update", "repos/delete", "repos/get",
], async () => {
  const u = await freshUser({ scopes: ["repo", "delete_repo"] });
  const gh = client({ token: u.token });
  const name = unique("js-repo");
  const created = await gh.rest.repos.createForAuthenticatedUser({ name, description: "made by octokit", auto_init: true });
  assert.equal(created.status, 201);
  assertRepo(created.data, `${u.login}/${name}`);
  assert.equal(created.data.description, "made by octokit");
  // The initial commit makes the default branch usable at once.
  const st = await gh.rest.repos.createCommitStatus({ owner: u.login, repo: name, sha: "main", state: "success" });
  assert.equal(st.status, 201);

  await assert.rejects(gh.rest.repos.createForAuthenticatedUser({ name }), (e) =>
    e.status === 422 && e.response.data.errors[0].message === "name already exists on this account");

  const listed = (await gh.paginate(gh.rest.repos.listForAuthenticatedUser, {})).map((r) => r.full_name);
  assert.deepEqual(listed, [`${u.login}/${name}`]);
  const pub = await gh.rest.repos.listForUser({ username: u.login });
  assert.deepEqual(pub.data.map((r) => r.name), [name]);

  const renamed = `${name}-renamed`;
  const upd = await gh.rest.repos.update({ owner: u.login, repo: name, name: renamed, private: true });
  assert.equal(upd.status, 200);
  assert.equal(upd.data.name, renamed);
  assert.equal(upd.data.private, true);
  // The old name answers 301; fetch follows it to the repository.
  const old = await gh.rest.repos.get({ owner: u.login, repo: name });
  assert.equal(old.data.name, renamed);

  const del = await gh.rest.repos.delete({ owner: u.login, repo: renamed });
  assert.equal(del.status, 204);
  await assert.rejects(gh.rest.repos.get({ owner: u.login, repo: renamed }), (e) => e.status === 404);
});

check("createInOrg creates an organization repository; members without admin cannot delete it", ["repos/create-in-org", "repos/delete"], async () => {
  const { token } = await adminCall("POST", "/tokens", { kind: "classic", login: "octo", scopes: ["repo", "delete_repo"] });
  const gh = client({ token });
  const name = unique("js-org-repo");
  const { status, data } = await gh.rest.repos.createInOrg({ org: ORG, name, visibility: "private" });
  assert.equal(status, 201);
  assertRepo(data, `${ORG}/${name}`);
  assert.equal(data.visibility, "private");
  assert.equal(data.organization.login, ORG);
  const { token: memberToken } = await adminCall("POST", "/tokens", { kind: "classic", login: "member", scopes: ["repo", "delete_repo"] });
  await assert.rejects(client({ token: memberToken }).rest.repos.delete({ owner: ORG, repo: name }), (e) => e.status === 403);
  assert.equal((await gh.rest.repos.delete({ owner: ORG, repo: name })).status, 204);
});
