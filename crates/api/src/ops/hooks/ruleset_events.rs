//! `repository_ruleset` (`created`, `edited`, `deleted`): the activity record
//! (`RepositoryRulesetEvent`) and what an edit changed, in the published `changes` shape.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::activity::{From, Stored};
use crate::ops::rulesets::FullRuleset;

/// `RepositoryRulesetEvent`: a ruleset (of a repository, or of an organization) was created,
/// edited or deleted, as it was then (the full ruleset, `rulesets::FullRuleset`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct RepositoryRulesetActivity {
    pub action: String,
    pub repository_ruleset: Stored<FullRuleset>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<RulesetChanges>,
}

/// What an edit changed: the name's and enforcement's values before, and the conditions and
/// rules added, deleted and updated (each with what it was before).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RulesetChanges {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<From<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enforcement: Option<From<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Changed<ConditionUpdate>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<Changed<RuleUpdate>>,
}

/// Items added, deleted and updated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub struct Changed<U> {
    #[schemars(with = "Vec<Map<String, Value>>")]
    pub added: Vec<Value>,
    #[schemars(with = "Vec<Map<String, Value>>")]
    pub deleted: Vec<Value>,
    pub updated: Vec<U>,
}

/// A condition (one key of the ruleset's `conditions`, e.g. `{"ref_name": {…}}`) as it is now,
/// and its patterns before.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConditionUpdate {
    #[schemars(with = "Map<String, Value>")]
    pub condition: Value,
    pub changes: ConditionChanges,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConditionChanges {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include: Option<From<Vec<String>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude: Option<From<Vec<String>>>,
}

/// A rule as it is now, and its parameters before (as JSON text, the published `configuration`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuleUpdate {
    #[schemars(with = "Map<String, Value>")]
    pub rule: Value,
    pub changes: RuleChanges,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuleChanges {
    pub configuration: From<String>,
}
