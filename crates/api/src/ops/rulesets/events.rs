//! Ruleset changes as activity: `repository_ruleset` `created`, `edited` (with what changed) and
//! `deleted`, recorded in the change's transaction by the API and the control plane alike. An
//! organization's ruleset is recorded too, without a repository (the published payload makes
//! `repository` optional and its ruleset's `source_type` may be `Organization`).
use platform_store::domain::accounts::Account;
use platform_store::domain::repos::Repo;
use platform_store::domain::rulesets::Ruleset;
use platform_store::{Conn, DbError};
use serde_json::{Map, Value};

use super::{definition_of, full, origin};
use crate::ops::hooks::activity::{self, stored, From, Record, Scope};
use crate::ops::hooks::ruleset_events::{
    Changed, ConditionChanges, ConditionUpdate, RepositoryRulesetActivity, RuleChanges, RuleUpdate, RulesetChanges,
};
use crate::shapes::Urls;

/// What a ruleset change is, with the ruleset before an edit.
pub enum Change<'a> {
    Created,
    Edited { before: &'a Ruleset },
    Deleted,
}

/// The ruleset's owner, and the repository of a repository ruleset.
pub type Owner<'a> = (&'a Account, Option<&'a Repo>);

/// Records `rs` (as it is after the change; a deleted one as it was) by `actor_id` (none: the
/// control plane, sent as the owner).
pub fn record(
    c: &mut dyn Conn,
    u: &Urls,
    (owner, repo): Owner,
    rs: &Ruleset,
    change: Change,
    actor_id: Option<i64>,
    now: i64,
) -> Result<(), DbError> {
    let def = definition_of(rs);
    let shape = full(&origin(u, rs, &owner.login, repo.map(|r| r.name.as_str())), rs, &def, None);
    let (action, changes) = match change {
        Change::Created => ("created", None),
        Change::Edited { before } => ("edited", Some(changes(&definition_of(before), &def))),
        Change::Deleted => ("deleted", None),
    };
    let r = Record::RepositoryRuleset(RepositoryRulesetActivity { action: action.into(), repository_ruleset: stored(&shape), changes });
    let at = match repo {
        Some(r) => Scope::repo(actor_id, r).private(),
        None => Scope::org(actor_id, owner.is_org().then_some(owner.id)),
    };
    activity::record(c, at, &r, now)?;
    Ok(())
}

/// What changed from definition `a` to `b`: name and enforcement, conditions by key, rules by type.
pub fn changes(a: &Value, b: &Value) -> RulesetChanges {
    let text = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().to_string();
    let was = |k: &str| (text(a, k) != text(b, k)).then(|| From { from: text(a, k) });
    RulesetChanges {
        name: was("name"),
        enforcement: was("enforcement"),
        conditions: conditions(a["conditions"].as_object(), b["conditions"].as_object()),
        rules: rules(a["rules"].as_array(), b["rules"].as_array()),
    }
}

fn none_if_empty<U>(c: Changed<U>) -> Option<Changed<U>> {
    (!(c.added.is_empty() && c.deleted.is_empty() && c.updated.is_empty())).then_some(c)
}

fn conditions(a: Option<&Map<String, Value>>, b: Option<&Map<String, Value>>) -> Option<Changed<ConditionUpdate>> {
    let empty = Map::new();
    let (a, b) = (a.unwrap_or(&empty), b.unwrap_or(&empty));
    let one = |k: &String, v: &Value| Value::Object(Map::from_iter([(k.clone(), v.clone())]));
    let patterns = |v: &Value, k: &str| -> Vec<String> {
        v[k].as_array().map(|l| l.iter().filter_map(|x| x.as_str().map(str::to_string)).collect()).unwrap_or_default()
    };
    let mut out = Changed { added: Vec::new(), deleted: Vec::new(), updated: Vec::new() };
    for (k, v) in b {
        match a.get(k) {
            None => out.added.push(one(k, v)),
            Some(old) if old != v => {
                let was = |p: &str| (patterns(old, p) != patterns(v, p)).then(|| From { from: patterns(old, p) });
                let changes = ConditionChanges { include: was("include"), exclude: was("exclude") };
                out.updated.push(ConditionUpdate { condition: one(k, v), changes });
            }
            Some(_) => {}
        }
    }
    out.deleted = a.iter().filter(|(k, _)| !b.contains_key(*k)).map(|(k, v)| one(k, v)).collect();
    none_if_empty(out)
}

fn rules(a: Option<&Vec<Value>>, b: Option<&Vec<Value>>) -> Option<Changed<RuleUpdate>> {
    let (a, b) = (a.map(Vec::as_slice).unwrap_or_default(), b.map(Vec::as_slice).unwrap_or_default());
    let find = |list: &[Value], t: &Value| list.iter().find(|r| r["type"] == *t).cloned();
    let mut out = Changed { added: Vec::new(), deleted: Vec::new(), updated: Vec::new() };
    for r in b {
        match find(a, &r["type"]) {
            None => out.added.push(r.clone()),
            Some(old) if old["parameters"] != r["parameters"] => {
                let from = if old["parameters"].is_null() { String::new() } else { old["parameters"].to_string() };
                out.updated.push(RuleUpdate { rule: r.clone(), changes: RuleChanges { configuration: From { from } } });
            }
            Some(_) => {}
        }
    }
    out.deleted = a.iter().filter(|r| find(b, &r["type"]).is_none()).cloned().collect();
    none_if_empty(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_edit_names_what_changed() {
        let a = json!({"name": "main", "enforcement": "active",
            "conditions": {"ref_name": {"include": ["~DEFAULT_BRANCH"], "exclude": []}},
            "rules": [{"type": "deletion"}, {"type": "pull_request", "parameters": {"required_approving_review_count": 1}}]});
        let b = json!({"name": "main", "enforcement": "evaluate",
            "conditions": {"ref_name": {"include": ["refs/heads/main"], "exclude": []}},
            "rules": [{"type": "pull_request", "parameters": {"required_approving_review_count": 2}}, {"type": "non_fast_forward"}]});
        let c = serde_json::to_value(changes(&a, &b)).unwrap();
        assert_eq!(
            c,
            json!({
                "enforcement": {"from": "active"},
                "conditions": {"added": [], "deleted": [], "updated": [{
                    "condition": {"ref_name": {"include": ["refs/heads/main"], "exclude": []}},
                    "changes": {"include": {"from": ["~DEFAULT_BRANCH"]}}}]},
                "rules": {"added": [{"type": "non_fast_forward"}], "deleted": [{"type": "deletion"}], "updated": [{
                    "rule": {"type": "pull_request", "parameters": {"required_approving_review_count": 2}},
                    "changes": {"configuration": {"from": "{\"required_approving_review_count\":1}"}}}]}
            })
        );
        assert_eq!(changes(&a, &a), RulesetChanges::default());
    }
}
