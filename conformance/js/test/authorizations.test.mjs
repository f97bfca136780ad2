// OAuth application authorizations through octokit.rest.apps.* with createOAuthAppAuth (basic
// credentials). Each test uses a fresh app and fresh tokens: the seeded ones stay intact for the
// other client suites that run against the same servers.
import assert from "node:assert/strict";
import { createOAuthAppAuth } from "@octokit/auth-oauth-app";
import { MAIN_URL, ORG, check, client, countingFetch, oauthApp, oauthToken } from "../lib/helpers.mjs";

const TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

function appClient(app, extra = {}) {
  return client({
    authStrategy: createOAuthAppAuth,
    auth: { clientType: "oauth-app", clientId: app.client_id, clientSecret: app.client_secret },
    ...extra,
  });
}

function assertAuthorization(a, { app, token }) {
  assert.equal(typeof a.id, "number");
  assert.equal(typeof a.url, "string");
  assert.ok(a.url.startsWith(MAIN_URL + "/"), a.url);
  assert.deepEqual(a.scopes, ["repo"]);
  assert.equal(a.token, token);
  assert.equal(a.token_last_eight, token.slice(-8));
  assert.equal(typeof a.hashed_token, "string");
  assert.equal(a.app.client_id, app.client_id);
  assert.equal(a.app.name, app.name);
  assert.equal(typeof a.app.url, "string");
  for (const k of ["note", "note_url", "fingerprint", "expires_at"]) assert.ok(k in a, `${k} present (nullable)`);
  assert.match(a.created_at, TS);
  assert.match(a.updated_at, TS);
  assert.equal(a.user.login, "octo");
}

const userCan = async (token) => {
  try {
    await client({ token }).rest.repos.getCombinedStatusForRef({ owner: ORG, repo: "private-repo", ref: "main" });
    return true;
  } catch (e) {
    if (e.status === 401) return false;
    throw e;
  }
};

check("checkToken answers the authorization of a live token", ["authorizations/check-token"], async () => {
  const app = await oauthApp();
  const token = await oauthToken(app.client_id);
  const fetch = countingFetch();
  const res = await appClient(app, { fetch }).rest.apps.checkToken({ client_id: app.client_id, access_token: token });
  assert.equal(res.status, 200);
  assertAuthorization(res.data, { app, token });
  assert.match(fetch.calls[0].method, /^POST$/);
});

check("checkToken on an unknown token is a 404 RequestError", ["authorizations/check-token"], async () => {
  const app = await oauthApp();
  await assert.rejects(
    appClient(app).rest.apps.checkToken({ client_id: app.client_id, access_token: "svo_doesnotexist0000000000000000000000" }),
    (e) => e.status === 404,
  );
});

check("checkToken with a wrong client secret is a 401 RequestError", ["authorizations/check-token"], async () => {
  const app = await oauthApp();
  const token = await oauthToken(app.client_id);
  await assert.rejects(
    appClient({ ...app, client_secret: "0".repeat(40) }).rest.apps.checkToken({ client_id: app.client_id, access_token: token }),
    (e) => e.status === 401,
  );
});

check("checkToken for another app's client_id is a 404", ["authorizations/check-token"], async () => {
  const [a, b] = [await oauthApp(), await oauthApp()];
  const token = await oauthToken(b.client_id);
  await assert.rejects(appClient(a).rest.apps.checkToken({ client_id: b.client_id, access_token: token }), (e) => e.status === 404);
});

check("resetToken returns a new token that works at once; the old one is dead", ["authorizations/reset-token", "authorizations/check-token"], async () => {
  const app = await oauthApp();
  const old = await oauthToken(app.client_id);
  const octokit = appClient(app);
  const res = await octokit.rest.apps.resetToken({ client_id: app.client_id, access_token: old });
  assert.equal(res.status, 200);
  const fresh = res.data.token;
  assert.notEqual(fresh, old);
  assertAuthorization(res.data, { app, token: fresh });
  assert.equal(await userCan(fresh), true);
  assert.equal(await userCan(old), false);
  await assert.rejects(octokit.rest.apps.checkToken({ client_id: app.client_id, access_token: old }), (e) => e.status === 404);
  const checked = await octokit.rest.apps.checkToken({ client_id: app.client_id, access_token: fresh });
  assert.equal(checked.data.id, res.data.id);
});

check("deleteToken answers 204 and revokes only that token", ["authorizations/delete-token", "authorizations/check-token"], async () => {
  const app = await oauthApp();
  const [t1, t2] = [await oauthToken(app.client_id), await oauthToken(app.client_id)];
  const octokit = appClient(app);
  const res = await octokit.rest.apps.deleteToken({ client_id: app.client_id, access_token: t1 });
  assert.equal(res.status, 204);
  assert.equal(await userCan(t1), false);
  assert.equal(await userCan(t2), true);
  await assert.rejects(octokit.rest.apps.checkToken({ client_id: app.client_id, access_token: t1 }), (e) => e.status === 404);
});

check("deleteAuthorization answers 204 and revokes every token of the app for that user", ["authorizations/delete-grant"], async () => {
  const [app, other] = [await oauthApp(), await oauthApp()];
  const [t1, t2] = [await oauthToken(app.client_id), await oauthToken(app.client_id)];
  const otherToken = await oauthToken(other.client_id);
  const res = await appClient(app).rest.apps.deleteAuthorization({ client_id: app.client_id, access_token: t1 });
  assert.equal(res.status, 204);
  assert.equal(await userCan(t1), false);
  assert.equal(await userCan(t2), false);
  assert.equal(await userCan(otherToken), true, "other apps' grants are untouched");
});

check("the authorization operations refuse a missing access_token with a 422 'Invalid request.'", ["authorizations/check-token", "authorizations/reset-token", "authorizations/delete-token", "authorizations/delete-grant"], async () => {
  const app = await oauthApp();
  const octokit = appClient(app);
  for (const call of [octokit.rest.apps.checkToken, octokit.rest.apps.resetToken, octokit.rest.apps.deleteToken, octokit.rest.apps.deleteAuthorization]) {
    await assert.rejects(call({ client_id: app.client_id }), (e) => {
      assert.equal(e.status, 422);
      assert.match(e.response.data.message, /^Invalid request\.\n\n"access_token" wasn't supplied\.$/);
      return true;
    });
  }
});

check("the authorization operations without credentials are a 401", ["authorizations/check-token"], async () => {
  const app = await oauthApp();
  const token = await oauthToken(app.client_id);
  await assert.rejects(
    client().rest.apps.checkToken({ client_id: app.client_id, access_token: token }),
    (e) => e.status === 401 && e.response.data.message === "Requires authentication",
  );
});
