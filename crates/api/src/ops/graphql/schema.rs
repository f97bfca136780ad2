//! The GraphQL schema answered: its types and fields, named and typed as the hosted schema
//! names them (a subset of it). A field is added by declaring it here; the library validates
//! documents against these declarations, answers introspection from them and resolves them.
//! Resolvers find the request's [`ReqInfo`] (the caller) and the application ([`Shared`]: the
//! store) in the context.
use std::sync::OnceLock;

use async_graphql::{
    Context, EmptyMutation, EmptySubscription, Error, ErrorExtensions, InputValueError, InputValueResult, Object, Scalar, ScalarType,
    Schema, Value, ID,
};
use platform_core::ids::node_id;
use platform_core::time::{format_ts, parse_ts};
use platform_store::domain::accounts::Account;

use super::limits::{MAX_COMPLEXITY, MAX_DEPTH, MAX_DIRECTIVES, MAX_NESTING};
use crate::request::ReqInfo;

pub type PlatformSchema = Schema<Query, EmptyMutation, EmptySubscription>;

/// The schema with its limits, built once per process.
pub fn schema() -> &'static PlatformSchema {
    static SCHEMA: OnceLock<PlatformSchema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        Schema::build(Query, EmptyMutation, EmptySubscription)
            .limit_depth(MAX_DEPTH)
            .limit_complexity(MAX_COMPLEXITY)
            .limit_recursive_depth(MAX_NESTING)
            .limit_directives(MAX_DIRECTIVES)
            .finish()
    })
}

/// The query root.
pub struct Query;

#[Object]
impl Query {
    /// The currently authenticated user.
    async fn viewer(&self, ctx: &Context<'_>) -> async_graphql::Result<User> {
        match ctx.data_unchecked::<ReqInfo>().principal.user() {
            Some(user) => Ok(User(user.clone())),
            // Installation, workflow and app credentials act for no user.
            None => Err(Error::new("Resource not accessible by integration").extend_with(|_, e| e.set("type", "FORBIDDEN"))),
        }
    }
}

/// A user account.
pub struct User(Account);

#[Object]
impl User {
    /// The node ID (the REST API's `node_id`).
    async fn id(&self) -> ID {
        ID(node_id("User", self.0.id))
    }

    /// The primary key from the database (the REST API's `id`).
    async fn database_id(&self) -> Option<i64> {
        Some(self.0.id)
    }

    /// The username used to login.
    async fn login(&self) -> &str {
        &self.0.login
    }

    /// The user's public profile name.
    async fn name(&self) -> Option<&str> {
        self.0.name.as_deref()
    }

    /// Whether this user is a site administrator.
    async fn is_site_admin(&self) -> bool {
        self.0.site_admin
    }

    /// When the account was created.
    async fn created_at(&self) -> DateTime {
        DateTime(self.0.created_at)
    }

    /// When the account was last updated.
    async fn updated_at(&self) -> DateTime {
        DateTime(self.0.updated_at)
    }
}

/// An ISO-8601 encoded UTC date string (`2026-11-21T10:00:00Z`).
pub struct DateTime(pub i64);

#[Scalar]
impl ScalarType for DateTime {
    fn parse(value: Value) -> InputValueResult<Self> {
        match &value {
            Value::String(s) => parse_ts(s).map(DateTime).ok_or_else(|| InputValueError::custom("not an ISO-8601 date and time")),
            _ => Err(InputValueError::expected_type(value)),
        }
    }

    fn to_value(&self) -> Value {
        Value::String(format_ts(self.0))
    }
}
