// Repository rulesets and rules for a branch through octokit.rest.repos.*: the seeded world has a
// ruleset on conf/public-repo (protecting the default branch) and an organization ruleset that
// applies to every repository of conf.
import assert from "node:assert/strict";
import {
  MAIN_URL, ORG, PUBLIC_REPO, PRIVATE_REPO, TOKENS, check, client, unique,
} from "../lib/helpers.mjs";

const TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const owner = client({ token: TOKENS.owner });
const anonymous = client({});
const repo = { owner: ORG, repo: PUBLIC_REPO };

function body(name) {
  return {
    ...repo, name, enforcement: "active", target: "branch",
    bypass_actors: [{ actor_type: "OrganizationAdmin", actor_id: 1, bypass_mode: "always" }],
    conditions: { ref_name: { include: [`refs/heads/${name}/**`], exclude: [] } },
    rules: [{ type: "required_linear_history" }, { type: "pull_request", parameters: {
      dismiss_stale_reviews_on_push: true, require_code_owner_review: false, require_last_push_approval: false,
      required_approving_review_count: 2, required_review_thread_resolution: true } }],
  };
}

function assertRuleset(r, name) {
  assert.equal(typeof r.id, "number");
  assert.equal(r.name, name);
  assert.equal(r.source_type, "Repository");
  assert.equal(r.source, `${ORG}/${PUBLIC_REPO}`);
  assert.equal(r._links.self.href, `${MAIN_URL}/repos/${ORG}/${PUBLIC_REPO}/rulesets/${r.id}`);
  assert.match(r.created_at, TS);
  assert.match(r.updated_at, TS);
}

check("createRepoRuleset answers 201 with the full ruleset; getRepoRuleset reads it back", ["rulesets/create", "rulesets/get"], async () => {
  const name = unique("js");
  const res = await owner.rest.repos.createRepoRuleset(body(name));
  assert.equal(res.status, 201);
  assertRuleset(res.data, name);
  assert.equal(res.data.target, "branch");
  assert.equal(res.data.current_user_can_bypass, "always");
  assert.equal(res.data.rules[1].parameters.required_approving_review_count, 2);
  const got = await owner.rest.repos.getRepoRuleset({ ...repo, ruleset_id: res.data.id });
  assert.deepEqual(got.data, res.data);
});

check("createRepoRuleset with an invalid parameter is a 422 RequestError", ["rulesets/create"], async () => {
  const b = body(unique("js"));
  b.rules = [{ type: "max_file_size", parameters: { max_file_size: 101 } }];
  await assert.rejects(owner.rest.repos.createRepoRuleset(b), (e) => e.status === 422 && e.response.data.message === "Validation Failed");
});

check("getRepoRulesets lists summaries with parents and filters by targets", ["rulesets/list"], async () => {
  const { data } = await anonymous.rest.repos.getRepoRulesets({ ...repo, per_page: 100 });
  assert.ok(data.some((r) => r.source_type === "Organization" && r.source === ORG), "the organization's ruleset is a parent");
  for (const r of data) assert.equal(r.rules, undefined, "list elements are summaries");
  const own = await anonymous.rest.repos.getRepoRulesets({ ...repo, includes_parents: false, per_page: 100 });
  assert.ok(own.data.every((r) => r.source_type === "Repository"));
  const tags = await anonymous.rest.repos.getRepoRulesets({ ...repo, targets: "tag" });
  assert.ok(!tags.data.some((r) => r.source_type === "Organization" || r.name === "protect main"), "only tag rulesets");
});

check("paginate walks every ruleset through Link headers", ["rulesets/list"], async () => {
  const all = await anonymous.paginate(anonymous.rest.repos.getRepoRulesets, { ...repo, per_page: 1 });
  const once = await anonymous.rest.repos.getRepoRulesets({ ...repo, per_page: 100 });
  assert.deepEqual(all.map((r) => r.id), once.data.map((r) => r.id));
});

check("updateRepoRuleset keeps what is not sent; history and versions follow", ["rulesets/update", "rulesets/list-history", "rulesets/get-version"], async () => {
  const name = unique("js");
  const { data: made } = await owner.rest.repos.createRepoRuleset(body(name));
  const { data: up } = await owner.rest.repos.updateRepoRuleset({ ...repo, ruleset_id: made.id, enforcement: "evaluate" });
  assert.equal(up.enforcement, "evaluate");
  assert.equal(up.name, name);
  assert.deepEqual(up.rules, made.rules);
  const { data: history } = await owner.rest.repos.getRepoRulesetHistory({ ...repo, ruleset_id: made.id });
  assert.equal(history.length, 2);
  assert.equal(history[0].actor.type, "User");
  assert.match(history[0].updated_at, TS);
  const first = history[history.length - 1].version_id;
  const { data: version } = await owner.rest.repos.getRepoRulesetVersion({ ...repo, ruleset_id: made.id, version_id: first });
  assert.equal(version.version_id, first);
  assert.equal(version.state.enforcement, "active");
});

check("deleteRepoRuleset answers 204; the ruleset is then 404", ["rulesets/delete", "rulesets/get"], async () => {
  const { data: made } = await owner.rest.repos.createRepoRuleset(body(unique("js")));
  const res = await owner.rest.repos.deleteRepoRuleset({ ...repo, ruleset_id: made.id });
  assert.equal(res.status, 204);
  await assert.rejects(owner.rest.repos.getRepoRuleset({ ...repo, ruleset_id: made.id }), (e) => e.status === 404);
});

check("getBranchRules returns the active rules whose conditions match, repository and organization", ["rules/list-for-branch"], async () => {
  const name = unique("js");
  const { data: made } = await owner.rest.repos.createRepoRuleset(body(name));
  const { data } = await anonymous.rest.repos.getBranchRules({ ...repo, branch: `${name}/not-pushed` });
  assert.deepEqual(data.map((r) => [r.type, r.ruleset_source_type]),
    [["required_linear_history", "Repository"], ["pull_request", "Repository"], ["required_signatures", "Organization"]]);
  assert.equal(data[0].ruleset_id, made.id);
  assert.equal(data[2].ruleset_source, ORG);
  const main = await anonymous.rest.repos.getBranchRules({ ...repo, branch: "main" });
  assert.deepEqual(main.data.map((r) => r.type), ["deletion", "non_fast_forward", "required_signatures"]);
});

check("private repositories are 404 to anonymous callers", ["rulesets/list", "rules/list-for-branch"], async () => {
  await assert.rejects(anonymous.rest.repos.getRepoRulesets({ owner: ORG, repo: PRIVATE_REPO }), (e) => e.status === 404);
  await assert.rejects(anonymous.rest.repos.getBranchRules({ owner: ORG, repo: PRIVATE_REPO, branch: "main" }), (e) => e.status === 404);
});
