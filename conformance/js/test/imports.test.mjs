// Source imports (retired, still served): octokit 22 dropped the rest.migrations import methods
// with the hosted service, so they are driven through octokit.request with the spec's routes. A
// Git repository made here is imported from its local path (the server runs on this machine).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ORG, TOKENS, adminCall, check, client, note, unique } from "../lib/helpers.mjs";

const owner = client({ token: TOKENS.owner });
for (const op of ["imports/get", "imports/start", "imports/update", "imports/cancel", "imports/list-authors", "imports/map-author", "imports/list-large-files", "imports/set-lfs-preference"]) {
  note(op, "octokit.request with the spec's path (the rest.migrations import methods were removed from the client)");
}
const GIT_ENV = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "Grace", GIT_AUTHOR_EMAIL: "grace@example.com", GIT_COMMITTER_NAME: "Grace", GIT_COMMITTER_EMAIL: "grace@example.com" };
const git = (cwd, ...args) => execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" }).trim();

/** A bare repository with one commit on `main` and a tag; returns its path and head sha. */
function source() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "js-import-"));
  const work = path.join(dir, "work");
  fs.mkdirSync(work);
  git(work, "init", "-q", "-b", "main");
  fs.writeFileSync(path.join(work, "README"), "hello");
  git(work, "add", "README");
  git(work, "commit", "-q", "-m", "first");
  git(work, "tag", "v1");
  const head = git(work, "rev-parse", "HEAD");
  git(dir, "clone", "-q", "--bare", work, path.join(dir, "source.git"));
  return { url: path.join(dir, "source.git"), head };
}

async function freshRepo() {
  const name = unique("js-import");
  await adminCall("POST", "/repos", { owner: ORG, name, private: true });
  return name;
}

async function complete(repo) {
  for (let i = 0; i < 400; i++) {
    const { data } = await owner.request("GET /repos/{owner}/{repo}/import", { owner: ORG, repo });
    if (!["detecting", "importing", "mapping", "pushing"].includes(data.status)) return data;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("import did not finish");
}

check("start an import (vcs detected), follow it to complete; the branches and commits are the source's", ["imports/start", "imports/get"], async () => {
  const src = source();
  const repo = await freshRepo();
  const started = await owner.request("PUT /repos/{owner}/{repo}/import", { owner: ORG, repo, vcs_url: src.url });
  assert.equal(started.status, 201);
  assert.ok(started.headers.location.endsWith(`/repos/${ORG}/${repo}/import`));
  assert.match(started.headers.sunset, /GMT$/);
  const done = await complete(repo);
  assert.equal(done.status, "complete");
  assert.equal(done.vcs, "git");
  const status = await owner.rest.repos.createCommitStatus({ owner: ORG, repo, sha: src.head, state: "success", context: "js-import" });
  assert.equal(status.status, 201);
  await assert.rejects(owner.request("PUT /repos/{owner}/{repo}/import", { owner: ORG, repo, vcs_url: src.url }), (e) => e.status === 422);
});

check("authors, map an author, large files, LFS preference, restart, cancel", ["imports/list-authors", "imports/map-author", "imports/list-large-files", "imports/set-lfs-preference", "imports/update", "imports/cancel"], async () => {
  const src = source();
  const repo = await freshRepo();
  await owner.request("PUT /repos/{owner}/{repo}/import", { owner: ORG, repo, vcs: "git", vcs_url: src.url });
  await complete(repo);
  const authors = await owner.request("GET /repos/{owner}/{repo}/import/authors", { owner: ORG, repo });
  assert.deepEqual(authors.data.map((a) => a.remote_id), ["grace@example.com"]);
  const mapped = await owner.request("PATCH /repos/{owner}/{repo}/import/authors/{author_id}", { owner: ORG, repo, author_id: authors.data[0].id, email: "grace@conf.example", name: "Grace H." });
  assert.equal(mapped.data.email, "grace@conf.example");
  const files = await owner.request("GET /repos/{owner}/{repo}/import/large_files", { owner: ORG, repo });
  assert.deepEqual(files.data, []);
  const lfs = await owner.request("PATCH /repos/{owner}/{repo}/import/lfs", { owner: ORG, repo, use_lfs: "opt_out" });
  assert.equal(lfs.data.use_lfs, false);
  const restarted = await owner.request("PATCH /repos/{owner}/{repo}/import", { owner: ORG, repo });
  assert.equal(restarted.data.status, "importing");
  assert.equal((await complete(repo)).status, "complete");
  const cancel = await owner.request("DELETE /repos/{owner}/{repo}/import", { owner: ORG, repo });
  assert.equal(cancel.status, 204);
  await assert.rejects(owner.request("GET /repos/{owner}/{repo}/import", { owner: ORG, repo }), (e) => e.status === 404);
});
