// Shared by every test file: servers and tokens from conformance/run, clients built the way our
// users build them (@octokit/rest + plugin-retry + plugin-throttling, only the base URL changed),
// control-plane calls, and the results file for conformance/matrix.py.
//
// node --test runs each file in its own process (in parallel), so results are merged into
// $CONFORMANCE_RESULTS/octokit.json under a lock by an `after` hook registered here, once per file.
import { after, test } from "node:test";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Octokit } from "@octokit/rest";
import { retry } from "@octokit/plugin-retry";
import { throttling } from "@octokit/plugin-throttling";

function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run the suite through conformance/run`);
  return v;
}

export const MAIN_URL = env("PLATFORM_URL");
export const TIGHT_URL = env("PLATFORM_TIGHT_URL");
export const ADMIN_TOKEN = env("PLATFORM_ADMIN_TOKEN");
export const TOKENS = JSON.parse(fs.readFileSync(env("PLATFORM_TOKENS"), "utf8"));
export const TIGHT_TOKENS = JSON.parse(fs.readFileSync(env("PLATFORM_TIGHT_TOKENS"), "utf8"));
export const ORG = "conf";
export const PUBLIC_REPO = "public-repo";
export const PRIVATE_REPO = "private-repo";

export const OCTOKIT_REST_VERSION = JSON.parse(
  fs.readFileSync(new URL("../node_modules/@octokit/rest/package.json", import.meta.url), "utf8"),
).version;

export const MyOctokit = Octokit.plugin(retry, throttling);
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** Counts the HTTP requests a client really sends (below every plugin). */
export function countingFetch() {
  const calls = [];
  const f = (url, init) => {
    calls.push({ method: init?.method ?? "GET", url: String(url) });
    return fetch(url, init);
  };
  f.calls = calls;
  return f;
}

/**
 * A client as users build it. By default the throttling handlers return false (surface the
 * error instead of waiting), so no test can hang on a limit it did not expect.
 */
export function client({ baseUrl = MAIN_URL, token, throttle = {}, retry = {}, fetch, ...rest } = {}) {
  return new MyOctokit({
    baseUrl,
    auth: token,
    userAgent: "platformd-conformance-js",
    log: quiet,
    throttle: { onRateLimit: () => false, onSecondaryRateLimit: () => false, ...throttle },
    retry,
    request: fetch ? { fetch } : {},
    ...rest,
  });
}

/**
 * A bare @octokit/rest client (no throttling): for bulk setup only, because the throttling
 * plugin spaces writes 1 s apart in a process-wide group.
 */
export function bareClient({ baseUrl = MAIN_URL, token } = {}) {
  return new Octokit({ baseUrl, auth: token, userAgent: "platformd-conformance-js", log: quiet });
}

// ---------------------------------------------------------------- control plane

export async function admin(method, route, body, baseUrl = MAIN_URL) {
  const res = await fetch(`${baseUrl}/_admin${route}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json", "user-agent": "conformance" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const data = text ? JSON.parse(text) : null;
  return { status: res.status, data };
}

async function adminOk(method, route, body, baseUrl) {
  const r = await admin(method, route, body, baseUrl);
  if (r.status >= 300) throw new Error(`control plane ${method} ${route}: ${r.status} ${JSON.stringify(r.data)}`);
  return r.data;
}

export const unique = (prefix) => `${prefix}-${randomBytes(4).toString("hex")}`;
export const randomSha = () => randomBytes(20).toString("hex");

/** A fresh user with a classic token: its own rate-limit bucket, untouched by other tests. */
export async function freshUser({ baseUrl = MAIN_URL, scopes = ["repo"] } = {}) {
  const login = unique("js");
  await adminOk("POST", "/users", { login }, baseUrl);
  const { token } = await adminOk("POST", "/tokens", { kind: "classic", login, scopes }, baseUrl);
  return { login, token };
}

/** Pushes a fresh commit to `refs/heads/<branch>` of repo; statuses can only be created on pushed commits. */
export async function pushBranch({ owner = ORG, repo = PUBLIC_REPO, branch = unique("js"), sha = randomSha(), baseUrl = MAIN_URL } = {}) {
  await adminOk("POST", `/repos/${owner}/${repo}/refs`, { ref: `refs/heads/${branch}`, sha }, baseUrl);
  return { owner, repo, branch, sha };
}

/** A fresh OAuth app owned by the org, with an OAuth token for octo: tests may revoke them freely. */
export async function oauthApp() {
  const app = await adminOk("POST", "/apps", { name: unique("Conformance JS"), owner: ORG, kind: "oauth" });
  return app; // {id, client_id, client_secret, ...}
}

export async function oauthToken(clientId, { login = "octo", scopes = ["repo"] } = {}) {
  const t = await adminOk("POST", "/tokens", { kind: "oauth", login, client_id: clientId, scopes });
  return t.token;
}

export async function adminCall(method, route, body, baseUrl) {
  return adminOk(method, route, body, baseUrl);
}

// ---------------------------------------------------------------- results

export const OPERATIONS = [
  "statuses/create",
  "statuses/list",
  "statuses/list-legacy",
  "statuses/get-combined",
  "authorizations/check-token",
  "authorizations/reset-token",
  "authorizations/delete-token",
  "authorizations/delete-grant",
  "rate-limit/get",
  "meta/root",
  "notifications/list",
  "notifications/mark-read",
  "notifications/get-thread",
  "notifications/mark-thread-read",
  "notifications/mark-thread-done",
  "notifications/get-thread-subscription",
  "notifications/set-thread-subscription",
  "notifications/delete-thread-subscription",
  "events/list-public",
  "events/list-for-network",
  "events/list-for-org",
  "events/list-for-repo",
  "events/list-for-user",
  "events/list-public-for-user",
  "events/list-org-for-user",
  "org-hooks/list",
  "org-hooks/create",
  "org-hooks/get",
  "org-hooks/update",
  "org-hooks/delete",
  "org-hooks/get-config",
  "org-hooks/update-config",
  "org-hooks/list-deliveries",
  "org-hooks/get-delivery",
  "org-hooks/redeliver",
  "org-hooks/ping",
  "security-managers/list-teams",
  "security-managers/add-team",
  "security-managers/remove-team",
  "depbot-alerts/list-for-enterprise",
  "depbot-alerts/list-for-org",
  "depbot-alerts/list-for-repo",
  "depbot-alerts/get",
  "depbot-alerts/update",
  "enterprise-teams/list-for-user",
  "enterprise-team-members/list",
  "enterprise-team-members/bulk-add",
  "enterprise-team-members/bulk-remove",
  "enterprise-team-members/get",
  "enterprise-team-members/add",
  "enterprise-team-members/remove",
  "devenv-secrets/list",
  "devenv-secrets/get-public-key",
  "devenv-secrets/get",
  "devenv-secrets/create-or-update",
  "devenv-secrets/delete",
  "private-registries/list",
  "private-registries/create",
  "private-registries/get-public-key",
  "private-registries/get",
  "private-registries/update",
  "private-registries/delete",
  "assistant-exclusions/get",
  "assistant-exclusions/set",
  "rules/list-for-branch",
  "rulesets/list",
  "rulesets/create",
  "rulesets/get",
  "rulesets/update",
  "rulesets/delete",
  "rulesets/list-history",
  "rulesets/get-version",
  "runs/list",
  "runs/list-for-workflow",
  "runs/get",
  "runs/delete",
  "runs/cancel",
  "runs/force-cancel",
  "runs/download-logs",
  "runs/delete-logs",
  "runs/list-pending-deployments",
  "runs/review-pending-deployments",
  "runs/rerun",
  "runs/rerun-failed-jobs",
  "runs/get-usage",
  "runs/rerun-job",
  "runs/get-attempt",
  "runs/download-attempt-logs",
  "runs/list-attempt-jobs",
  "runs/approve-fork-run",
  "runs/list-reviews",
  "jobs/list-for-run",
  "jobs/get",
  "jobs/download-logs",
  "artifacts/list-for-run",
  "workflows/list",
  "workflows/get",
  "environments/list",
  "environments/get",
  "branches/list",
  "branches/get",
  "commits/get",
  "git/get-ref",
  "git/list-matching-refs",
  "imports/get",
  "imports/start",
  "imports/update",
  "imports/cancel",
  "imports/list-authors",
  "imports/map-author",
  "imports/list-large-files",
  "imports/set-lfs-preference",
  "insights/get-route-stats-by-actor",
  "insights/get-subject-stats",
  "insights/get-summary-stats",
  "insights/get-summary-stats-by-user",
  "insights/get-summary-stats-by-actor",
  "insights/get-time-stats",
  "insights/get-time-stats-by-user",
  "insights/get-time-stats-by-actor",
  "insights/get-user-stats",
  "users/get-authenticated",
  "users/get-by-username",
  "orgs/list-for-authenticated-user",
  "orgs/get",
  "teams/list",
  "teams/get-by-name",
  "teams/get-by-id",
  "enterprise-teams/list",
  "enterprise-teams/get",
  "meta/get",
  "repos/get",
  "repos/list-for-org",
  "repos/list-for-authenticated-user",
  "repos/list-for-user",
  "repos/create-for-authenticated-user",
  "repos/create-in-org",
  "repos/update",
  "repos/delete",
];

const recorded = {}; // op -> {fail: bool, notes: Set}
const skipped = []; // {test, reason}

function record(ops, status, note) {
  for (const op of ops) {
    if (!OPERATIONS.includes(op)) throw new Error(`unknown operation id ${op}`);
    const r = (recorded[op] ??= { ran: false, fail: false, notes: new Set() });
    if (status === "pass" || status === "fail") r.ran = true;
    if (status === "fail") r.fail = true;
    if (note) r.notes.add(note);
  }
}

/** Notes attached to an operation whatever the outcome (e.g. how the client reaches it). */
export function note(op, text) {
  record([op], "note", text);
}

export class Skip {
  constructor(reason) {
    this.reason = reason;
  }
}

/**
 * A test that exercises `ops`: a passing body records pass, a failing assertion records fail
 * (with the test name and the first line of the error). A body returning `new Skip(reason)`
 * marks the test skipped and lists it under "skipped" in the results file.
 */
export function check(name, ops, fn, opts = {}) {
  return test(name, opts, async (t) => {
    let out;
    try {
      out = await fn(t);
    } catch (e) {
      record(ops, "fail", `${name}: ${String(e?.message ?? e).split("\n")[0]}`);
      throw e;
    }
    if (out instanceof Skip) {
      skipped.push({ test: name, operations: ops, reason: out.reason });
      t.skip(out.reason);
      return;
    }
    record(ops, "pass");
  });
}

function withLock(dir, fn) {
  const lock = path.join(dir, ".octokit.lock");
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (e) {
      if (e.code !== "EEXIST" || Date.now() > deadline) throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
  try {
    return fn();
  } finally {
    fs.rmdirSync(lock);
  }
}

// Results of an earlier run are replaced, results of this run's other test files are merged: the
// first file to write in a run leaves a marker in the run's own temp dir (where conformance/run
// put the tokens; it is removed with the servers).
const RUN_MARKER = path.join(path.dirname(env("PLATFORM_TOKENS")), "octokit-results.started");

function flush() {
  const dir = process.env.CONFORMANCE_RESULTS;
  if (!dir || (Object.keys(recorded).length === 0 && skipped.length === 0)) return;
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "octokit.json");
  withLock(dir, () => {
    let doc = null;
    if (fs.existsSync(RUN_MARKER)) doc = JSON.parse(fs.readFileSync(file, "utf8"));
    else fs.writeFileSync(RUN_MARKER, "");
    doc ??= { client: "octokit-rest", version: OCTOKIT_REST_VERSION, results: {}, skipped: [] };
    // notes of operations whose outcome no file has recorded yet wait in `pending_notes`
    const pending = doc.pending_notes ?? {};
    for (const [op, r] of Object.entries(recorded)) {
      for (const n of r.notes) (pending[op] ??= []).includes(n) || pending[op].push(n);
      if (r.ran || doc.results[op]) {
        const failed = r.fail || doc.results[op]?.status === "fail";
        doc.results[op] = { status: failed ? "fail" : "pass", note: doc.results[op]?.note };
      }
    }
    for (const [op, result] of Object.entries(doc.results)) {
      const notes = new Set([...(result.note ? result.note.split("; ") : []), ...(pending[op] ?? [])]);
      delete pending[op];
      doc.results[op] = { status: result.status, ...(notes.size ? { note: [...notes].sort().join("; ") } : {}) };
    }
    doc.results = Object.fromEntries(OPERATIONS.filter((op) => doc.results[op]).map((op) => [op, doc.results[op]]));
    doc.skipped = [...doc.skipped, ...skipped].sort((a, b) => a.test.localeCompare(b.test));
    if (Object.keys(pending).length) doc.pending_notes = pending;
    else delete doc.pending_notes;
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(doc, null, 2) + "\n");
    fs.renameSync(tmp, file);
  });
}

after(flush);
