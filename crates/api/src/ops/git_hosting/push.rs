//! The push gate: what the server decides when git's `pre-receive` hook hands it a push (the
//! ref updates, the new objects in quarantine), and what it records once git is done.
//!
//! Deciding takes the repository's lock (held until the push is recorded, so pushes to one
//! repository follow each other on every node), reads the refs as they are, refuses refs other
//! than branches and tags, refuses changes to workflow files without the `workflow` scope or
//! `workflows` permission, judges the rulesets that apply ([`super::rules`]; a refusal names each
//! violated rule and ruleset) and records the intent of what may move with the rule suites. After git exits, [`super::refs::settle`] records what actually moved.
use std::collections::HashMap;

use platform_core::TokenKind;
use platform_git::{Decision, Gate, Proposal, RefUpdate, ZERO};
use platform_store::domain::pushes::Intent;
use platform_store::domain::repos::Repo;

use super::refs::{self, Locked, Source};
use super::rules::{self, Actor};
use super::{git_error, WORKFLOWS_DIR};
use crate::authorize::{has_permission, has_scope};
use crate::error::ApiResult;
use crate::operation::Level;
use crate::principal::Principal;
use crate::state::Shared;

/// The gate of one push by `principal` (already allowed to push to `repo`).
pub struct PushGate {
    app: Shared,
    repo: Repo,
    principal: Principal,
    /// From an accepted decision until the push is recorded.
    accepted: Option<(Locked, Intent)>,
}

impl PushGate {
    pub fn new(app: Shared, repo: Repo, principal: Principal) -> PushGate {
        PushGate { app, repo, principal, accepted: None }
    }

    async fn try_decide(&mut self, p: Proposal) -> ApiResult<Decision> {
        let l = refs::lock(&self.app, &self.repo).await?;
        let refs_now = l.git.refs().await.map_err(git_error)?;
        let current: HashMap<&str, &str> = refs_now.iter().map(|r| (r.name.as_str(), r.oid.as_str())).collect();
        let outside: Vec<String> = p
            .updates
            .iter()
            .filter(|u| !(u.name.starts_with("refs/heads/") || u.name.starts_with("refs/tags/")))
            .map(|u| format!("error: refusing to update {}: only branches (refs/heads/) and tags (refs/tags/) are kept here", u.name))
            .collect();
        if !outside.is_empty() {
            return Ok(Decision::refuse(outside));
        }
        // What can move: git refuses the others itself (their old value is stale).
        let live: Vec<RefUpdate> =
            p.updates.iter().filter(|u| current.get(u.name.as_str()).copied().unwrap_or(ZERO) == u.old).cloned().collect();
        let wanted: Vec<String> = live.iter().filter(|u| !u.is_delete()).map(|u| u.new.clone()).collect();
        let known: Vec<String> = refs_now.iter().map(|r| r.oid.clone()).collect();
        let workflows = p.quarantine.paths_changed(&wanted, &known, WORKFLOWS_DIR).await.map_err(git_error)?;
        if let Some(refusal) = workflow_refusal(&self.principal, &workflows) {
            return Ok(Decision::refuse(refusal));
        }
        // Rulesets: branch, tag and push rules, with their bypass actors. A refusal refuses the
        // whole push (git's pre-receive hook answers for every ref at once), so nothing moves.
        let judged = rules::judge(&self.app, &self.repo, &p.quarantine, Actor::Principal(&self.principal), &live, &known).await?;
        if judged.refused() {
            let lines = judged.refusal(&self.app, &self.repo);
            rules::record(&self.app, judged.suites).await?;
            return Ok(Decision::refuse(lines));
        }
        if live.is_empty() {
            return Ok(Decision::accept());
        }
        let pusher = self.principal.user().map(|u| u.id);
        let intent = l.intend_judged(&self.app, pusher, Source::Push, &live, judged.suites).await?;
        self.accepted = Some((l, intent));
        Ok(Decision::accept())
    }
}

impl Gate for PushGate {
    async fn decide(&mut self, p: Proposal) -> Decision {
        match self.try_decide(p).await {
            Ok(d) => d,
            Err(e) => {
                tracing::error!(repo_id = self.repo.id, error = %e.message, "a push could not be decided");
                Decision::refuse(vec!["error: the server could not take this push now; try again".into()])
            }
        }
    }

    async fn finish(&mut self) -> Result<(), String> {
        let Some((l, intent)) = self.accepted.take() else { return Ok(()) };
        match refs::settle(&self.app, &l, &intent).await {
            Ok(_) => Ok(()),
            Err(e) => {
                // The intent stays: the next start, or the repository's next change, records it.
                tracing::error!(repo_id = self.repo.id, error = %e.message, "a push moved refs but could not be recorded yet");
                Err("the push could not be recorded".into())
            }
        }
    }
}

/// The refusal of a push changing workflow files (`paths`) without the grant the hosted
/// platform asks for: the `workflow` scope of classic and OAuth tokens, the `workflows`
/// permission (write) of every other token.
pub(crate) fn workflow_refusal(p: &Principal, paths: &[String]) -> Option<Vec<String>> {
    if paths.is_empty() {
        return None;
    }
    let (granted, who, what) = match p {
        Principal::Token(t) => match t.token.kind {
            TokenKind::Classic => (has_scope(&t.token.scopes, &["workflow"]), "a Personal Access Token", "`workflow` scope"),
            TokenKind::Oauth => (has_scope(&t.token.scopes, &["workflow"]), "an OAuth App", "`workflow` scope"),
            TokenKind::FineGrained => (has_permission(t, ("workflows", Level::Write)), "a Personal Access Token", "`workflows` permission"),
            _ => (has_permission(t, ("workflows", Level::Write)), "an App", "`workflows` permission"),
        },
        _ => (false, "an anonymous push", "credentials"),
    };
    if granted {
        return None;
    }
    Some(
        paths
            .iter()
            .take(10)
            .map(|f| format!("error: refusing to allow {who} to create or update workflow `{f}` without {what}"))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anonymous_pushes_never_change_workflows() {
        assert_eq!(workflow_refusal(&Principal::Anonymous, &[]), None);
        let r = workflow_refusal(&Principal::Anonymous, &[".workflows/ci.yml".into()]).unwrap();
        assert!(r[0].contains("`.workflows/ci.yml`"), "{r:?}");
    }
}
