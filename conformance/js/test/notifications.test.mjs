// Notifications through octokit's activity.* methods: list (with paginate and conditional
// If-Modified-Since polling), mark read, threads, subscriptions. Each test uses a fresh user.
import assert from "node:assert/strict";
import { ORG, PUBLIC_REPO, adminCall, check, client, freshUser, unique } from "../lib/helpers.mjs";

async function userWithThreads(n, scopes = ["notifications"]) {
  const user = await freshUser({ scopes });
  const threads = [];
  for (let i = 0; i < n; i++) {
    threads.push(await adminCall("POST", "/notifications", {
      login: user.login, repo: `${ORG}/${PUBLIC_REPO}`, reason: i % 2 ? "mention" : "subscribed",
      subject: { title: unique("issue"), type: "Issue" },
    }));
  }
  return { user, threads, octokit: client({ token: user.token }) };
}

check("listNotificationsForAuthenticatedUser: shape, filters, paginate", ["notifications/list"], async () => {
  const { octokit, threads } = await userWithThreads(5);
  const { data, status, headers } = await octokit.rest.activity.listNotificationsForAuthenticatedUser();
  assert.equal(status, 200);
  assert.equal(data.length, 5);
  assert.equal(headers["x-poll-interval"], "60");
  assert.ok(headers["last-modified"]);
  const t = data[0];
  assert.equal(typeof t.id, "string");
  assert.equal(t.repository.full_name, `${ORG}/${PUBLIC_REPO}`);
  assert.equal(t.unread, true);
  assert.ok(t.subject.title && t.subject.type === "Issue");
  assert.deepEqual(new Set(data.map((x) => x.id)), new Set(threads.map((x) => x.id)));
  const part = await octokit.rest.activity.listNotificationsForAuthenticatedUser({ participating: true });
  assert.equal(part.data.length, 2);
  const all = await octokit.paginate(octokit.rest.activity.listNotificationsForAuthenticatedUser, { per_page: 2, all: true });
  assert.equal(all.length, 5);
});

check("listNotificationsForAuthenticatedUser: if-modified-since gives 304 without charging", ["notifications/list"], async () => {
  const { octokit } = await userWithThreads(1);
  const first = await octokit.rest.activity.listNotificationsForAuthenticatedUser();
  const lm = first.headers["last-modified"];
  const used = first.headers["x-ratelimit-used"];
  const err = await octokit.rest.activity
    .listNotificationsForAuthenticatedUser({ headers: { "if-modified-since": lm, "if-none-match": undefined } })
    .then(() => assert.fail("expected 304"), (e) => e);
  assert.equal(err.status, 304);
  assert.equal(err.response.headers["x-ratelimit-used"], used);
});

check("getThread, markThreadAsRead, markThreadAsDone", ["notifications/get-thread", "notifications/mark-thread-read", "notifications/mark-thread-done"], async () => {
  const { octokit, threads } = await userWithThreads(1);
  const id = Number(threads[0].id);
  const got = await octokit.rest.activity.getThread({ thread_id: id });
  assert.equal(got.data.id, threads[0].id);
  const read = await octokit.rest.activity.markThreadAsRead({ thread_id: id });
  assert.equal(read.status, 205);
  assert.equal((await octokit.rest.activity.getThread({ thread_id: id })).data.unread, false);
  const done = await octokit.rest.activity.markThreadAsDone({ thread_id: id });
  assert.equal(done.status, 204);
  const all = await octokit.rest.activity.listNotificationsForAuthenticatedUser({ all: true });
  assert.equal(all.data.length, 0);
  const other = await freshUser({ scopes: ["notifications"] });
  const e = await client({ token: other.token }).rest.activity.getThread({ thread_id: id }).then(() => assert.fail("404"), (x) => x);
  assert.equal(e.status, 404);
});

check("markNotificationsAsRead: 205 with last_read_at", ["notifications/mark-read"], async () => {
  const { octokit } = await userWithThreads(3);
  const r = await octokit.rest.activity.markNotificationsAsRead({ last_read_at: new Date(Date.now() + 1000).toISOString() });
  assert.equal(r.status, 205);
  const left = await octokit.rest.activity.listNotificationsForAuthenticatedUser();
  assert.equal(left.data.length, 0);
});

check("thread subscription: get, set, delete", ["notifications/get-thread-subscription", "notifications/set-thread-subscription", "notifications/delete-thread-subscription"], async () => {
  const { octokit, threads } = await userWithThreads(1);
  const thread_id = Number(threads[0].id);
  const g = await octokit.rest.activity.getThreadSubscriptionForAuthenticatedUser({ thread_id });
  assert.equal(g.data.subscribed, true);
  const s = await octokit.rest.activity.setThreadSubscription({ thread_id, ignored: true });
  assert.equal(s.data.ignored, true);
  assert.equal(s.data.subscribed, false);
  const d = await octokit.rest.activity.deleteThreadSubscription({ thread_id });
  assert.equal(d.status, 204);
  const after = await octokit.rest.activity.getThreadSubscriptionForAuthenticatedUser({ thread_id });
  assert.equal(after.data.subscribed, false);
  assert.equal(after.data.ignored, false);
});

check("fine-grained tokens are refused", ["notifications/list"], async () => {
  const user = await freshUser();
  const { token } = await adminCall("POST", "/tokens", { kind: "fine_grained", login: user.login, permissions: { statuses: "read" } });
  const e = await client({ token }).rest.activity.listNotificationsForAuthenticatedUser().then(() => assert.fail("403"), (x) => x);
  assert.equal(e.status, 403);
});
