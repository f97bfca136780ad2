//! Rule enforcement: what the active and evaluate rulesets that apply to a ref change say of it.
//! Pure: the caller gathers the facts of a change once (from git: the commits it introduces,
//! whether it fast-forwards, the files it changes and their sizes; from the store: the head's
//! commit statuses, deployments and workflow runs) and the caller's bypass of each ruleset, and
//! this module judges every rule of every ruleset that applies, for the refusal shown to git and
//! for the rule suite recorded.
//!
//! What each rule checks (document 2's rule table, and the push rules of the hosted platform):
//! - `creation`, `update`, `deletion`: the ref may not be created, moved, deleted. The update
//!   rule's `update_allows_fetch_and_merge` admits only the hosted fork-sync operation, which this
//!   server has none of: a push or control-plane change is refused either way.
//! - `non_fast_forward`: an update whose old value is not an ancestor of the new one.
//! - `required_linear_history`: a new commit with more than one parent.
//! - `required_signatures`: a new commit without a signature header (`gpgsig`, `gpgsig-sha256`;
//!   SSH and X.509 signatures use them too). The signature itself is not verified: the server has
//!   no keys of its users to verify it with.
//! - `required_status_checks`: the new head needs a latest status of `success` for each context
//!   (`integration_id` is not checked); `do_not_enforce_on_create` skips creations.
//! - `commit_message_pattern`, `commit_author_email_pattern`, `committer_email_pattern`: every
//!   new commit's message (trailing newlines trimmed) or email; `branch_name_pattern` and
//!   `tag_name_pattern`: the short name of a branch or tag being created. Operators
//!   `starts_with`, `ends_with`, `contains`, `regex` (Rust regex syntax, as RE2's); with `negate`
//!   the rule fails when the pattern matches, otherwise when it does not.
//! - `pull_request`, `merge_queue`: an update is refused (changes go through a pull request or
//!   the merge queue; creating the ref is not an update).
//! - `required_deployments`: the new head must have a deployment to each environment.
//! - `workflows`: the new head must have a successful run of each workflow (`path` in the
//!   repository `repository_id`); `do_not_enforce_on_create` skips creations.
//! - `file_path_restriction` (fnmatch patterns, removals included), `max_file_path_length`
//!   (characters), `file_extension_restriction` (`.exe`, `*.exe`), `max_file_size` (MB): the
//!   files the new commits change.
//!
//! Other rule types (code scanning, reviews by an assistant, licence scanning) judge pull
//! requests: they pass here. Deletions are judged by `deletion` alone.
//!
//! A ruleset whose bypass actors exempt the actor is not evaluated at all (nothing recorded); one
//! they may bypass `always` is evaluated and recorded, its failures counting as `bypass`; the
//! `pull_request` bypass mode admits only pull requests, so a direct change is judged. `evaluate`
//! rulesets are judged and recorded but never block.
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::matching::{Condition, Pattern};

/// The code of the refusal git shows (the hosted platform has its own).
pub const CODE: &str = "PD013";

/// How the actor stands towards a ruleset's bypass list, for a direct ref change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bypass {
    Never,
    Always,
    Exempt,
}

impl Bypass {
    /// From what the bypass list allows the actor (`always`, `exempt`, `pull_requests_only`, `never`).
    pub fn of(can_bypass: &str) -> Bypass {
        match can_bypass {
            "always" => Bypass::Always,
            "exempt" => Bypass::Exempt,
            _ => Bypass::Never,
        }
    }
}

/// A ruleset that may apply to a repository's ref changes.
#[derive(Clone, Debug)]
pub struct Applicable {
    pub id: i64,
    pub name: String,
    /// `Repository` or `Organization`.
    pub source_type: &'static str,
    /// `owner/repo` or the organization's login.
    pub source: String,
    /// `branch`, `tag` or `push`.
    pub target: String,
    /// `active` or `evaluate` (disabled rulesets are never here).
    pub enforcement: String,
    pub ref_name: Condition,
    pub rules: Vec<Value>,
    pub bypass: Bypass,
}

impl Applicable {
    /// Does it apply to a change of `name` (a full ref name)? `default_ref`: the default branch.
    pub fn applies(&self, name: &str, default_ref: &str) -> bool {
        if self.bypass == Bypass::Exempt || !matches!(self.enforcement.as_str(), "active" | "evaluate") {
            return false;
        }
        match self.target.as_str() {
            "branch" => name.starts_with("refs/heads/") && self.ref_name.holds(name, Some(default_ref)),
            "tag" => name.starts_with("refs/tags/") && self.ref_name.holds(name, None),
            "push" => true,
            _ => false,
        }
    }

    /// Do the rules of a ruleset that applies need the files a change touches?
    pub fn needs_files(&self) -> bool {
        self.rules.iter().any(|r| FILE_RULES.contains(&r["type"].as_str().unwrap_or_default()))
    }

    /// The rule types of this ruleset.
    pub fn rule_types(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().filter_map(|r| r["type"].as_str())
    }
}

const FILE_RULES: [&str; 4] = ["file_path_restriction", "max_file_path_length", "file_extension_restriction", "max_file_size"];

/// A new commit, as the rules see it.
#[derive(Clone, Debug, Default)]
pub struct CommitFacts {
    pub oid: String,
    pub message: String,
    pub author_email: String,
    pub committer_email: String,
    pub signed: bool,
    pub parents: usize,
}

/// A file the new commits change (`size`: `None` when removed).
#[derive(Clone, Debug, Default)]
pub struct FileFacts {
    pub path: String,
    pub size: Option<u64>,
}

/// What is known of one ref change.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    pub name: String,
    pub old: String,
    pub new: String,
    /// The old value is an ancestor of the new one (creations and deletions: true).
    pub fast_forward: bool,
    /// The commits the change introduces.
    pub commits: Vec<CommitFacts>,
    pub files: Vec<FileFacts>,
    /// Contexts whose latest status on the new head is `success`.
    pub success_contexts: Vec<String>,
    /// Environments the new head was deployed to.
    pub deployed: Vec<String>,
    /// (repository id, workflow path) of successful runs on the new head.
    pub workflows_passed: Vec<(i64, String)>,
}

impl Facts {
    pub fn is_create(&self) -> bool {
        is_zero(&self.old)
    }
    pub fn is_delete(&self) -> bool {
        is_zero(&self.new)
    }
}

fn is_zero(s: &str) -> bool {
    s.bytes().all(|b| b == b'0')
}

/// One rule's outcome, as recorded and as the rule suite shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleEvaluation {
    pub ruleset_id: i64,
    pub ruleset_name: String,
    pub source_type: String,
    pub source: String,
    /// `active` or `evaluate`.
    pub enforcement: String,
    pub rule_type: String,
    /// `pass` or `fail`.
    pub result: String,
    pub details: Option<String>,
}

/// A violated rule, as git shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub message: String,
    pub rule_type: String,
    pub ruleset: String,
}

/// The outcome of one ref change.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub name: String,
    pub old: String,
    pub new: String,
    pub evaluations: Vec<RuleEvaluation>,
    /// `pass`, `fail` or `bypass`, over active rulesets.
    pub result: &'static str,
    /// The same, over active and evaluate rulesets.
    pub evaluation_result: &'static str,
    /// The failures that block the change (active rulesets the actor may not bypass).
    pub violations: Vec<Violation>,
}

impl Outcome {
    pub fn blocked(&self) -> bool {
        !self.violations.is_empty()
    }
}

/// Judges one ref change by every ruleset that applies to it; `None` when none does.
pub fn evaluate(rulesets: &[Applicable], f: &Facts, default_ref: &str) -> Option<Outcome> {
    let applying: Vec<&Applicable> = rulesets.iter().filter(|rs| rs.applies(&f.name, default_ref)).collect();
    if applying.is_empty() {
        return None;
    }
    let mut evaluations = Vec::new();
    let mut violations = Vec::new();
    // (failed, bypassed) over active rulesets, and over all.
    let (mut active, mut all) = ((false, false), (false, false));
    for rs in applying {
        for rule in &rs.rules {
            let kind = rule["type"].as_str().unwrap_or_default();
            let failures = check(kind, &rule["parameters"], f);
            let failed = !failures.is_empty();
            let details = (!failures.is_empty()).then(|| failures.join("\n"));
            evaluations.push(RuleEvaluation {
                ruleset_id: rs.id,
                ruleset_name: rs.name.clone(),
                source_type: rs.source_type.to_string(),
                source: rs.source.clone(),
                enforcement: rs.enforcement.clone(),
                rule_type: kind.to_string(),
                result: if failed { "fail" } else { "pass" }.to_string(),
                details,
            });
            if !failed {
                continue;
            }
            let bypassed = rs.bypass == Bypass::Always;
            let slot = |s: &mut (bool, bool)| {
                if bypassed {
                    s.1 = true
                } else {
                    s.0 = true
                }
            };
            slot(&mut all);
            if rs.enforcement == "active" {
                slot(&mut active);
                if !bypassed {
                    for m in failures {
                        violations.push(Violation { message: m, rule_type: kind.to_string(), ruleset: rs.name.clone() });
                    }
                }
            }
        }
    }
    let word = |(failed, bypassed): (bool, bool)| match (failed, bypassed) {
        (true, _) => "fail",
        (false, true) => "bypass",
        _ => "pass",
    };
    Some(Outcome {
        name: f.name.clone(),
        old: f.old.clone(),
        new: f.new.clone(),
        evaluations,
        result: word(active),
        evaluation_result: word(all),
        violations,
    })
}

/// The lines git shows for the refused changes among `outcomes` (nothing when none is refused).
pub fn refusal(outcomes: &[Outcome], rules_url: impl Fn(&str) -> String) -> Vec<String> {
    let mut lines = Vec::new();
    for o in outcomes.iter().filter(|o| o.blocked()) {
        lines.push(format!("error: {CODE}: Repository rule violations found for {}.", o.name));
        lines.push(format!("Review all repository rules at {}", rules_url(&o.name)));
        lines.push(String::new());
        for v in &o.violations {
            let mut first = true;
            for l in v.message.lines() {
                lines.push(if first { format!("- {l}") } else { format!("  {l}") });
                first = false;
            }
            lines.push(format!("  (rule `{}` of ruleset \"{}\")", v.rule_type, v.ruleset));
            lines.push(String::new());
        }
    }
    lines
}

/// The failures of one rule on a change (none: it passes).
fn check(kind: &str, p: &Value, f: &Facts) -> Vec<String> {
    let create = f.is_create();
    if f.is_delete() {
        return if kind == "deletion" { vec!["Cannot delete this protected ref.".into()] } else { vec![] };
    }
    let update = !create;
    let bool_param = |k: &str| p[k].as_bool().unwrap_or(false);
    let one = |cond: bool, m: &str| if cond { vec![m.to_string()] } else { vec![] };
    match kind {
        "creation" => one(create, "Cannot create ref due to creations being restricted."),
        "update" => one(update, "Cannot update this protected ref."),
        "non_fast_forward" => one(update && !f.fast_forward, "Cannot force-push to this ref."),
        "pull_request" => one(update, "Changes must be made through a pull request."),
        "merge_queue" => one(update, "Changes must be made through the merge queue."),
        "required_linear_history" => commit_failures(f, |c| c.parents > 1, "This ref must not contain merge commits."),
        "required_signatures" => commit_failures(f, |c| !c.signed, "Commits must have verified signatures."),
        "required_status_checks" => {
            if create && bool_param("do_not_enforce_on_create") {
                return vec![];
            }
            p["required_status_checks"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["context"].as_str())
                .filter(|c| !f.success_contexts.iter().any(|s| s == c))
                .map(|c| format!("Required status check \"{c}\" is expected."))
                .collect()
        }
        "required_deployments" => p["required_deployment_environments"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|e| !f.deployed.iter().any(|d| d == e))
            .map(|e| format!("Changes must be successfully deployed to \"{e}\" first."))
            .collect(),
        "workflows" => {
            if create && bool_param("do_not_enforce_on_create") {
                return vec![];
            }
            p["workflows"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|w| {
                    let (repo, path) = (w["repository_id"].as_i64().unwrap_or(0), w["path"].as_str().unwrap_or_default());
                    !f.workflows_passed.iter().any(|(r, x)| *r == repo && x == path)
                })
                .map(|w| format!("Required workflow \"{}\" must pass.", w["path"].as_str().unwrap_or_default()))
                .collect()
        }
        "commit_message_pattern" => pattern_failures(p, "Commit message", f.commits.iter().map(|c| (c.oid.as_str(), c.message.trim_end()))),
        "commit_author_email_pattern" => {
            pattern_failures(p, "Author email", f.commits.iter().map(|c| (c.oid.as_str(), c.author_email.as_str())))
        }
        "committer_email_pattern" => {
            pattern_failures(p, "Committer email", f.commits.iter().map(|c| (c.oid.as_str(), c.committer_email.as_str())))
        }
        "branch_name_pattern" => match f.name.strip_prefix("refs/heads/") {
            Some(short) if create => pattern_failures(p, "Branch name", std::iter::once(("", short))),
            _ => vec![],
        },
        "tag_name_pattern" => match f.name.strip_prefix("refs/tags/") {
            Some(short) if create => pattern_failures(p, "Tag name", std::iter::once(("", short))),
            _ => vec![],
        },
        "file_path_restriction" => {
            let patterns: Vec<Pattern> =
                p["restricted_file_paths"].as_array().into_iter().flatten().filter_map(Value::as_str).map(Pattern::compile).collect();
            file_failures(f, "Cannot change restricted file paths.", |x| patterns.iter().any(|pt| pt.matches(&x.path, None)))
        }
        "max_file_path_length" => {
            let max = p["max_file_path_length"].as_u64().unwrap_or(u64::MAX);
            let m = format!("File paths must be at most {max} characters long.");
            file_failures(f, &m, |x| x.size.is_some() && x.path.chars().count() as u64 > max)
        }
        "file_extension_restriction" => {
            let exts: Vec<String> = p["restricted_file_extensions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(|e| {
                    let e = e.trim_start_matches('*').to_lowercase();
                    if e.starts_with('.') {
                        e
                    } else {
                        format!(".{e}")
                    }
                })
                .collect();
            file_failures(f, "Cannot push files with restricted extensions.", |x| {
                x.size.is_some() && exts.iter().any(|e| x.path.to_lowercase().ends_with(e.as_str()))
            })
        }
        "max_file_size" => {
            let mb = p["max_file_size"].as_u64().unwrap_or(u64::MAX / (1 << 20));
            let m = format!("Files must be at most {mb} MB.");
            file_failures(f, &m, |x| x.size.is_some_and(|s| s > mb.saturating_mul(1 << 20)))
        }
        _ => vec![],
    }
}

/// Violations listed at most, per rule.
const LISTED: usize = 10;

fn listing(headline: &str, items: Vec<String>) -> Vec<String> {
    if items.is_empty() {
        return vec![];
    }
    let n = items.len();
    let mut m = format!("{headline}\nFound {n} violation{}:", if n == 1 { "" } else { "s" });
    for i in items.iter().take(LISTED) {
        m.push('\n');
        m.push_str(i);
    }
    vec![m]
}

fn commit_failures(f: &Facts, bad: impl Fn(&CommitFacts) -> bool, headline: &str) -> Vec<String> {
    listing(headline, f.commits.iter().filter(|c| bad(c)).map(|c| c.oid.clone()).collect())
}

fn file_failures(f: &Facts, headline: &str, bad: impl Fn(&FileFacts) -> bool) -> Vec<String> {
    let mut paths: Vec<String> = f.files.iter().filter(|x| bad(x)).map(|x| x.path.clone()).collect();
    paths.dedup();
    listing(headline, paths)
}

/// Does `value` satisfy a pattern rule's parameters?
pub fn pattern_holds(p: &Value, value: &str) -> bool {
    let pattern = p["pattern"].as_str().unwrap_or_default();
    let matched = match p["operator"].as_str().unwrap_or_default() {
        "starts_with" => value.starts_with(pattern),
        "ends_with" => value.ends_with(pattern),
        "contains" => value.contains(pattern),
        "regex" => regex::RegexBuilder::new(pattern).size_limit(1 << 20).build().is_ok_and(|r| r.is_match(value)),
        _ => false,
    };
    matched != p["negate"].as_bool().unwrap_or(false)
}

fn pattern_failures<'a>(p: &Value, what: &str, values: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let bad: Vec<(&str, &str)> = values.filter(|(_, v)| !pattern_holds(p, v)).collect();
    if bad.is_empty() {
        return vec![];
    }
    let pattern = p["pattern"].as_str().unwrap_or_default();
    let negate = p["negate"].as_bool().unwrap_or(false);
    let verb = match p["operator"].as_str().unwrap_or_default() {
        "starts_with" => "start with",
        "ends_with" => "end with",
        "contains" => "contain",
        _ => "match",
    };
    let headline = match p["name"].as_str().filter(|n| !n.is_empty()) {
        Some(n) => format!("{what} must follow the rule \"{n}\": {}{verb} \"{pattern}\".", if negate { "not " } else { "" }),
        None => format!("{what} must {}{verb} \"{pattern}\".", if negate { "not " } else { "" }),
    };
    if bad.iter().all(|(oid, _)| oid.is_empty()) {
        return vec![headline];
    }
    listing(&headline, bad.into_iter().map(|(oid, _)| oid.to_string()).collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const Z: &str = "0000000000000000000000000000000000000000";
    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    fn ruleset(target: &str, enforcement: &str, rules: Value, bypass: Bypass) -> Applicable {
        Applicable {
            id: 7,
            name: "protect".into(),
            source_type: "Repository",
            source: "o/r".into(),
            target: target.into(),
            enforcement: enforcement.into(),
            ref_name: Condition::compile(&json!({"include": ["~DEFAULT_BRANCH", "refs/tags/v*"]})),
            rules: rules.as_array().unwrap().clone(),
            bypass,
        }
    }

    fn change(name: &str, old: &str, new: &str) -> Facts {
        Facts { name: name.into(), old: old.into(), new: new.into(), fast_forward: true, ..Facts::default() }
    }

    fn commit(message: &str, email: &str) -> CommitFacts {
        CommitFacts {
            oid: B.into(),
            message: message.into(),
            author_email: email.into(),
            committer_email: email.into(),
            signed: false,
            parents: 1,
        }
    }

    fn types(o: &Outcome) -> Vec<&str> {
        o.violations.iter().map(|v| v.rule_type.as_str()).collect()
    }

    #[test]
    fn ref_rules_judge_creation_update_deletion_and_force() {
        let rules = json!([{"type": "creation"}, {"type": "update", "parameters": {"update_allows_fetch_and_merge": true}},
            {"type": "deletion"}, {"type": "non_fast_forward"}, {"type": "pull_request"}, {"type": "merge_queue"}]);
        let rs = [ruleset("branch", "active", rules, Bypass::Never)];
        let main = "refs/heads/main";
        let o = evaluate(&rs, &change(main, Z, A), main).unwrap();
        assert_eq!(types(&o), ["creation"]);
        let mut forced = change(main, A, B);
        forced.fast_forward = false;
        let o = evaluate(&rs, &forced, main).unwrap();
        assert_eq!(types(&o), ["update", "non_fast_forward", "pull_request", "merge_queue"]);
        let o = evaluate(&rs, &change(main, A, Z), main).unwrap();
        assert_eq!(types(&o), ["deletion"]);
        assert_eq!((o.result, o.evaluation_result), ("fail", "fail"));
        assert_eq!(o.evaluations.len(), 6, "every rule of the ruleset is recorded");
        // Another branch: the condition does not hold.
        assert!(evaluate(&rs, &change("refs/heads/topic", A, Z), main).is_none());
    }

    #[test]
    fn bypass_evaluate_and_exempt() {
        let rules = json!([{"type": "deletion"}]);
        let d = change("refs/heads/main", A, Z);
        let o = evaluate(&[ruleset("branch", "active", rules.clone(), Bypass::Always)], &d, "refs/heads/main").unwrap();
        assert!(!o.blocked());
        assert_eq!((o.result, o.evaluation_result), ("bypass", "bypass"));
        assert_eq!(o.evaluations[0].result, "fail");
        let o = evaluate(&[ruleset("branch", "evaluate", rules.clone(), Bypass::Never)], &d, "refs/heads/main").unwrap();
        assert!(!o.blocked());
        assert_eq!((o.result, o.evaluation_result), ("pass", "fail"));
        assert!(evaluate(&[ruleset("branch", "active", rules.clone(), Bypass::Exempt)], &d, "refs/heads/main").is_none());
        assert!(evaluate(&[ruleset("branch", "disabled", rules, Bypass::Never)], &d, "refs/heads/main").is_none());
    }

    #[test]
    fn commit_rules_list_the_commits_that_fail() {
        let rules = json!([
            {"type": "required_linear_history"},
            {"type": "required_signatures"},
            {"type": "commit_message_pattern", "parameters": {"operator": "starts_with", "pattern": "JIRA-"}},
            {"type": "commit_author_email_pattern", "parameters": {"operator": "ends_with", "pattern": "@example.com"}},
            {"type": "committer_email_pattern", "parameters": {"operator": "contains", "pattern": "bot", "negate": true}},
        ]);
        let rs = [ruleset("branch", "active", rules, Bypass::Never)];
        let mut f = change("refs/heads/main", A, B);
        f.commits = vec![CommitFacts { signed: true, ..commit("JIRA-1 fix\n", "ann@example.com") }];
        assert!(!evaluate(&rs, &f, "refs/heads/main").unwrap().blocked());
        f.commits = vec![CommitFacts { parents: 2, ..commit("fix\n", "bot@other.org") }];
        let o = evaluate(&rs, &f, "refs/heads/main").unwrap();
        assert_eq!(
            types(&o),
            [
                "required_linear_history",
                "required_signatures",
                "commit_message_pattern",
                "commit_author_email_pattern",
                "committer_email_pattern"
            ]
        );
        assert!(o.violations[2].message.contains(B), "{:?}", o.violations[2]);
    }

    #[test]
    fn pattern_operators_and_negation() {
        let p = |op: &str, pat: &str, negate: bool| json!({"operator": op, "pattern": pat, "negate": negate});
        assert!(pattern_holds(&p("starts_with", "feat/", false), "feat/x"));
        assert!(!pattern_holds(&p("starts_with", "feat/", true), "feat/x"));
        assert!(pattern_holds(&p("ends_with", "-fix", false), "a-fix"));
        assert!(pattern_holds(&p("contains", "wip", true), "ready"));
        assert!(pattern_holds(&p("regex", "^[a-z]+/[0-9]+$", false), "feat/12"));
        assert!(!pattern_holds(&p("regex", "^[a-z]+/[0-9]+$", false), "Feat/12"));
        assert!(!pattern_holds(&p("regex", "(", false), "x"), "an invalid expression matches nothing");
    }

    #[test]
    fn name_rules_judge_creations() {
        let rules = json!([
            {"type": "branch_name_pattern", "parameters": {"operator": "starts_with", "pattern": "feat/"}},
            {"type": "tag_name_pattern", "parameters": {"operator": "regex", "pattern": "^v[0-9]+$"}},
        ]);
        let mut rs = ruleset("branch", "active", rules.clone(), Bypass::Never);
        rs.ref_name = Condition::compile(&json!({"include": ["~ALL"]}));
        let mut tags = rs.clone();
        tags.target = "tag".into();
        let all = [rs, tags];
        let d = "refs/heads/main";
        assert_eq!(types(&evaluate(&all, &change("refs/heads/fix", Z, A), d).unwrap()), ["branch_name_pattern"]);
        assert!(!evaluate(&all, &change("refs/heads/feat/x", Z, A), d).unwrap().blocked());
        assert!(!evaluate(&all, &change("refs/heads/fix", A, B), d).unwrap().blocked(), "only creations");
        assert_eq!(types(&evaluate(&all, &change("refs/tags/release", Z, A), d).unwrap()), ["tag_name_pattern"]);
        assert!(!evaluate(&all, &change("refs/tags/v2", Z, A), d).unwrap().blocked());
    }

    #[test]
    fn head_rules_need_statuses_deployments_and_workflows() {
        let rules = json!([
            {"type": "required_status_checks", "parameters": {"do_not_enforce_on_create": true,
                "required_status_checks": [{"context": "ci"}], "strict_required_status_checks_policy": false}},
            {"type": "required_deployments", "parameters": {"required_deployment_environments": ["staging"]}},
            {"type": "workflows", "parameters": {"workflows": [{"path": ".workflows/ci.yml", "repository_id": 3}]}},
        ]);
        let rs = [ruleset("branch", "active", rules, Bypass::Never)];
        let mut f = change("refs/heads/main", A, B);
        let o = evaluate(&rs, &f, "refs/heads/main").unwrap();
        assert_eq!(types(&o), ["required_status_checks", "required_deployments", "workflows"]);
        assert_eq!(o.violations[0].message, "Required status check \"ci\" is expected.");
        f.success_contexts = vec!["ci".into()];
        f.deployed = vec!["staging".into()];
        f.workflows_passed = vec![(3, ".workflows/ci.yml".into())];
        assert!(!evaluate(&rs, &f, "refs/heads/main").unwrap().blocked());
        // A creation: status checks not enforced (do_not_enforce_on_create), the others are.
        let o = evaluate(&rs, &change("refs/heads/main", Z, B), "refs/heads/main").unwrap();
        assert_eq!(types(&o), ["required_deployments", "workflows"]);
    }

    #[test]
    fn push_rules_judge_the_files() {
        let rules = json!([
            {"type": "file_path_restriction", "parameters": {"restricted_file_paths": ["secrets/**"]}},
            {"type": "max_file_path_length", "parameters": {"max_file_path_length": 12}},
            {"type": "file_extension_restriction", "parameters": {"restricted_file_extensions": ["*.exe", "dll"]}},
            {"type": "max_file_size", "parameters": {"max_file_size": 1}},
        ]);
        let rs = [ruleset("push", "active", rules, Bypass::Never)];
        let mut f = change("refs/heads/anything", A, B);
        f.files = vec![FileFacts { path: "ok.txt".into(), size: Some(10) }];
        assert!(!evaluate(&rs, &f, "refs/heads/main").unwrap().blocked());
        f.files = vec![
            FileFacts { path: "secrets/key".into(), size: None },
            FileFacts { path: "a/very/long/path.txt".into(), size: Some(1) },
            FileFacts { path: "tool.EXE".into(), size: Some(1) },
            FileFacts { path: "big.bin".into(), size: Some(2 << 20) },
        ];
        let o = evaluate(&rs, &f, "refs/heads/main").unwrap();
        assert_eq!(types(&o), ["file_path_restriction", "max_file_path_length", "file_extension_restriction", "max_file_size"]);
        let lines = refusal(&[o], |r| format!("http://x/rules?ref={r}"));
        assert_eq!(lines[0], "error: PD013: Repository rule violations found for refs/heads/anything.");
        assert!(lines.iter().any(|l| l == "- Cannot change restricted file paths."), "{lines:#?}");
        assert!(lines.iter().any(|l| l == "  secrets/key"), "{lines:#?}");
        assert!(lines.iter().any(|l| l == "  (rule `max_file_size` of ruleset \"protect\")"), "{lines:#?}");
    }
}
