// A base URL with a path prefix (self-hosted style, …/api/v3): a third server is started with
// PLATFORM_PUBLIC_URL=http://ADDR/api/v3 from the same binary as conformance/run's servers
// (PLATFORMD_BIN, else the cargo debug build); skipped when no binary is found.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";
import { ADMIN_TOKEN, ORG, PUBLIC_REPO, Skip, bareClient, check, client, countingFetch } from "../lib/helpers.mjs";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const BIN = [process.env.PLATFORMD_BIN, path.join(process.env.CARGO_TARGET_DIR ?? path.join(ROOT, "target"), "debug/platformd")]
  .find((p) => p && fs.existsSync(p));

let server; // {child, base, tokens}

async function freePort() {
  const s = net.createServer().listen(0, "127.0.0.1");
  await new Promise((r) => s.once("listening", r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

before(async () => {
  if (!BIN) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "platformd-js-prefix-"));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}/api/v3`;
  const child = spawn(BIN, ["serve", "--seed", path.join(ROOT, "conformance/seed.toml"), "--tokens-out", path.join(dir, "tokens.json")], {
    env: {
      ...process.env, PLATFORM_LISTEN: `127.0.0.1:${port}`, PLATFORM_PUBLIC_URL: base, PLATFORM_DATABASE_URL: path.join(dir, "db"),
      PLATFORM_ADMIN_TOKEN: ADMIN_TOKEN, PLATFORM_LOG: "warn",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  let timer;
  await new Promise((resolve, reject) => {
    child.stdout.on("data", (d) => (out += d) && /^listening on /m.test(out) && resolve());
    child.once("exit", (code) => reject(new Error(`platformd exited ${code}: ${out}`)));
    timer = setTimeout(() => reject(new Error(`platformd did not start: ${out}`)), 10_000);
  }).finally(() => clearTimeout(timer));
  server = { child, base, dir, tokens: JSON.parse(fs.readFileSync(path.join(dir, "tokens.json"), "utf8")) };
});

after(() => {
  if (!server) return;
  server.child.kill("SIGTERM");
  fs.rmSync(server.dir, { recursive: true, force: true });
});

check("baseUrl …/api/v3: paginate follows Links that keep the prefix; meta.root URLs carry it", ["statuses/list", "meta/root"], async () => {
  if (!server) return new Skip("no platformd binary (set PLATFORMD_BIN)");
  const setup = bareClient({ baseUrl: server.base, token: server.tokens.owner });
  // The statuses of main's head (a real commit of the seed).
  const { data: main } = await setup.rest.git.getRef({ owner: ORG, repo: PUBLIC_REPO, ref: "heads/main" });
  for (let i = 0; i < 5; i++) {
    await setup.rest.repos.createCommitStatus({ owner: ORG, repo: PUBLIC_REPO, sha: main.object.sha, state: "success", context: `p/${i}` });
  }
  const fetch = countingFetch();
  const octokit = client({ baseUrl: server.base, token: server.tokens.owner, fetch });
  const all = await octokit.paginate(octokit.rest.repos.listCommitStatusesForRef, { owner: ORG, repo: PUBLIC_REPO, ref: "main", per_page: 2 });
  assert.deepEqual(all.map((s) => s.context), ["p/4", "p/3", "p/2", "p/1", "p/0"]);
  assert.equal(fetch.calls.length, 3);
  for (const c of fetch.calls) assert.ok(c.url.startsWith(`${server.base}/repos/`), c.url);
  for (const s of all) assert.ok(s.url.startsWith(`${server.base}/`), s.url);

  const root = await octokit.rest.meta.root();
  assert.equal(root.data.rate_limit_url, `${server.base}/rate_limit`);
});
