//! Rulesets on ref changes: the facts of a change gathered once (git: the commits each ref
//! update introduces, fast-forwards, the files and sizes when a push rule asks; the store: the
//! new heads' statuses, deployments and workflow runs when a rule asks), judged by
//! [`crate::ops::rulesets::enforce`], and the rule suites to record. Pushes are judged in their
//! quarantine (the new objects are not in the repository yet); the control plane in the
//! repository itself, after it wrote its commit and before the ref moves.
use std::collections::HashMap;

use platform_git::{RefUpdate, ZERO};
use platform_store::domain::accounts::{self, Account};
use platform_store::domain::repos::Repo;
use platform_store::domain::rule_suites::NewSuite;
use platform_store::domain::statuses;
use platform_store::{params, DbError};

use super::git_error;
use crate::error::{ApiError, ApiResult};
use crate::ops::rulesets::enforce::{self, Applicable, CommitFacts, Facts, FileFacts, Outcome};
use crate::ops::rulesets::{applicable, enforced, ids_of};
use crate::principal::{Principal, Role};
use crate::state::AppState;

/// Who changes the refs.
pub enum Actor<'a> {
    /// A push (its caller).
    Principal(&'a Principal),
    /// The control plane, for this user (none: the organization itself).
    Account(Option<&'a Account>),
}

/// What the rulesets said of a change.
#[derive(Default)]
pub struct Judged {
    pub outcomes: Vec<Outcome>,
    /// One per evaluated ref update, to record.
    pub suites: Vec<NewSuite>,
}

impl Judged {
    pub fn refused(&self) -> bool {
        self.outcomes.iter().any(Outcome::blocked)
    }

    /// The lines git shows for a refused push.
    pub fn refusal(&self, app: &AppState, repo: &Repo) -> Vec<String> {
        let base = format!("{}/{}/rules", app.urls.web, repo.full_name());
        enforce::refusal(&self.outcomes, |r| format!("{base}?ref={}", r.replace('/', "%2F")))
    }

    /// The refusal as the API answers it (422, each violation an error).
    pub fn error(&self) -> ApiError {
        let mut lines = Vec::new();
        for o in self.outcomes.iter().filter(|o| o.blocked()) {
            for v in &o.violations {
                lines.push(format!("{} ({}: rule `{}` of ruleset \"{}\")", v.message.replace('\n', " "), o.name, v.rule_type, v.ruleset));
            }
        }
        ApiError::invalid_field("Ref", "ref", "invalid", Some(format!("Repository rule violations found: {}", lines.join("; "))))
    }
}

/// The actor's ids, name and role in `repo`.
async fn who(app: &AppState, repo: &Repo, actor: &Actor<'_>) -> ApiResult<((Option<i64>, Option<i64>), Option<String>, Role)> {
    match actor {
        Actor::Principal(p) => {
            let (p2, r2) = ((*p).clone(), repo.clone());
            let role = app.store.read(move |c| crate::authorize::role_of(c, &p2, &r2)).await?;
            let name = match p {
                Principal::Token(t) => match (&t.user, &t.app) {
                    (Some(u), _) => Some(u.login.clone()),
                    (None, Some(a)) => Some(format!("{}[bot]", a.slug)),
                    _ => None,
                },
                _ => None,
            };
            Ok((ids_of(p), name, role))
        }
        Actor::Account(None) => Ok(((None, None), None, Role::None)),
        Actor::Account(Some(a)) => {
            let (uid, r2) = (a.id, repo.clone());
            let role = if r2.owner.id == uid {
                Role::Admin
            } else if r2.owner.is_org() {
                match app.store.read(move |c| accounts::org_role(c, r2.owner.id, uid)).await?.as_deref() {
                    Some("owner") => Role::Admin,
                    Some(_) => Role::Write,
                    None => Role::None,
                }
            } else {
                Role::None
            };
            Ok(((Some(a.id), None), Some(a.login.clone()), role))
        }
    }
}

/// What the store has of a new head: contexts with a `success` status, environments deployed
/// to, (repository, workflow path) of successful runs.
type HeadFacts = (Vec<String>, Vec<String>, Vec<(i64, String)>);

/// The rules that read the commits a change introduces.
const COMMIT_RULES: [&str; 5] =
    ["required_linear_history", "required_signatures", "commit_message_pattern", "commit_author_email_pattern", "committer_email_pattern"];

/// Judges `updates` of `repo` (objects read through `git`: a push's quarantine, or the
/// repository) whose refs, before the change, point at `known`.
pub async fn judge(
    app: &AppState,
    repo: &Repo,
    git: &platform_git::Repo,
    actor: Actor<'_>,
    updates: &[RefUpdate],
    known: &[String],
) -> ApiResult<Judged> {
    if updates.is_empty() {
        return Ok(Judged::default());
    }
    let found = enforced(app, repo).await?;
    if found.is_empty() {
        return Ok(Judged::default());
    }
    let (ids, actor_name, role) = who(app, repo, &actor).await?;
    let rulesets = applicable(app, repo, &found, ids, role).await?;
    let default_ref = format!("refs/heads/{}", repo.default_branch);
    // The rulesets of each update, and what their rules need.
    let mut per_update: Vec<(&RefUpdate, Vec<&Applicable>)> = Vec::new();
    for u in updates {
        let applying: Vec<&Applicable> = rulesets.iter().filter(|rs| rs.applies(&u.name, &default_ref)).collect();
        if !applying.is_empty() {
            per_update.push((u, applying));
        }
    }
    if per_update.is_empty() {
        return Ok(Judged::default());
    }
    let wants = |kinds: &[&str]| per_update.iter().any(|(_, rs)| rs.iter().any(|r| r.rule_types().any(|t| kinds.contains(&t))));
    let (need_statuses, need_deploys, need_workflows) =
        (wants(&["required_status_checks"]), wants(&["required_deployments"]), wants(&["workflows"]));

    // Git: what each update introduces, once.
    let mut facts: Vec<Facts> = Vec::new();
    let mut introduced: HashMap<String, Vec<String>> = HashMap::new();
    for (u, applying) in &per_update {
        let mut f = Facts { name: u.name.clone(), old: u.old.clone(), new: u.new.clone(), fast_forward: true, ..Facts::default() };
        // Only what the rules that apply read: each is a git process.
        let needs = |kinds: &[&str]| applying.iter().any(|r| r.rule_types().any(|t| kinds.contains(&t)));
        if !u.is_delete() {
            if needs(&COMMIT_RULES) {
                let oids = git.rev_list(std::slice::from_ref(&u.new), known).await.map_err(git_error)?;
                introduced.insert(u.name.clone(), oids);
            }
            if !u.is_create() && needs(&["non_fast_forward"]) {
                f.fast_forward = git.is_ancestor(&u.old, &u.new).await.map_err(git_error)?;
            }
            if applying.iter().any(|r| r.needs_files()) {
                let files = git.files_changed(std::slice::from_ref(&u.new), known).await.map_err(git_error)?;
                f.files = files.into_iter().map(|x| FileFacts { path: x.path, size: x.size }).collect();
            }
        }
        facts.push(f);
    }
    let mut all: Vec<String> = introduced.values().flatten().cloned().collect();
    all.sort();
    all.dedup();
    let commits: HashMap<String, CommitFacts> = git
        .commits(&all)
        .await
        .map_err(git_error)?
        .into_iter()
        .map(|k| {
            let c = CommitFacts {
                oid: k.oid.clone(),
                message: k.message,
                author_email: k.author.email,
                committer_email: k.committer.email,
                signed: k.signature.is_some(),
                parents: k.parents.len(),
            };
            (k.oid, c)
        })
        .collect();
    for f in &mut facts {
        f.commits = introduced.get(&f.name).into_iter().flatten().filter_map(|o| commits.get(o).cloned()).collect();
    }

    // The store: what the new heads have.
    if need_statuses || need_deploys || need_workflows {
        let heads: Vec<String> = facts.iter().filter(|f| !f.is_delete()).map(|f| f.new.clone()).collect();
        let repo_id = repo.id;
        let found = app
            .store
            .read(move |c| -> Result<Vec<HeadFacts>, DbError> {
                let mut out = Vec::new();
                for sha in &heads {
                    let contexts = if need_statuses {
                        statuses::latest(c, repo_id, statuses::Target::Sha(sha), 0, 1000)?
                            .map_or_else(Vec::new, |l| l.page)
                            .into_iter()
                            .filter(|s| s.state == "success")
                            .map(|s| s.context)
                            .collect()
                    } else {
                        Vec::new()
                    };
                    let deployed = if need_deploys {
                        c.query(
                            "SELECT DISTINCT environment FROM deployments WHERE repo_id = ? AND sha = ?",
                            params![repo_id, sha.as_str()],
                        )?
                        .iter()
                        .map(|r| r.string(0))
                        .collect()
                    } else {
                        Vec::new()
                    };
                    let passed = if need_workflows {
                        c.query(
                            "SELECT w.repo_id, w.path FROM workflow_runs r JOIN workflows w ON w.id = r.workflow_id \
                             WHERE r.head_sha = ? AND r.conclusion = 'success'",
                            params![sha.as_str()],
                        )?
                        .iter()
                        .map(|r| (r.i64(0), r.string(1)))
                        .collect()
                    } else {
                        Vec::new()
                    };
                    out.push((contexts, deployed, passed));
                }
                Ok(out)
            })
            .await?;
        let mut found = found.into_iter();
        for f in facts.iter_mut().filter(|f| !f.is_delete()) {
            if let Some((contexts, deployed, passed)) = found.next() {
                f.success_contexts = contexts;
                f.deployed = deployed;
                f.workflows_passed = passed;
            }
        }
    }

    let mut judged = Judged::default();
    for f in &facts {
        let Some(o) = enforce::evaluate(&rulesets, f, &default_ref) else { continue };
        judged.suites.push(NewSuite {
            repo_id: repo.id,
            owner_id: repo.owner.id,
            repository_name: repo.name.clone(),
            actor_id: ids.0,
            actor_name: actor_name.clone(),
            ref_name: o.name.clone(),
            before_sha: if o.old.is_empty() { ZERO.into() } else { o.old.clone() },
            after_sha: o.new.clone(),
            result: o.result.into(),
            evaluation_result: o.evaluation_result.into(),
            evaluations: serde_json::to_string(&o.evaluations).unwrap_or_else(|_| "[]".into()),
        });
        judged.outcomes.push(o);
    }
    Ok(judged)
}

/// Records the suites of a change that moves nothing (refused, or nothing left to move).
pub async fn record(app: &AppState, suites: Vec<NewSuite>) -> ApiResult<()> {
    if suites.is_empty() {
        return Ok(());
    }
    let now = app.clock.now();
    app.store.write_unobserved(move |c| platform_store::domain::rule_suites::record(c, &suites, now)).await?;
    Ok(())
}
