//! Every operation is declared once: method, path, access rule and docs. The same declaration
//! wires the route, enforces authentication/authorization, fills the `X-Accepted-*` headers and
//! (later) feeds the OpenAPI document, so none of them can drift.
use axum::http::Method;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Read,
    Write,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Read => "read",
            Level::Write => "write",
        }
    }
}

/// How callers authenticate to an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthKind {
    /// Tokens (and, for public data, none or application credentials).
    Token,
    /// Application basic credentials only (OAuth authorizations).
    AppBasic,
    /// Meta operations: any caller.
    Any,
}

#[derive(Clone, Copy, Debug)]
pub struct Access {
    pub auth: AuthKind,
    /// Public resources readable without credentials.
    pub public: bool,
    /// Accepted classic/OAuth scopes (any one suffices); empty: none needed.
    pub scopes: &'static [&'static str],
    /// Fine-grained permission name and level.
    pub permission: Option<(&'static str, Level)>,
    /// Level of access to the resource the caller's identity needs (push access for writes).
    pub role: Level,
}

impl Access {
    pub const fn read(scopes: &'static [&'static str], permission: &'static str) -> Access {
        Access { auth: AuthKind::Token, public: true, scopes, permission: Some((permission, Level::Read)), role: Level::Read }
    }
    pub const fn write(scopes: &'static [&'static str], permission: &'static str) -> Access {
        Access { auth: AuthKind::Token, public: false, scopes, permission: Some((permission, Level::Write)), role: Level::Write }
    }
    pub const fn app_basic() -> Access {
        Access { auth: AuthKind::AppBasic, public: false, scopes: &[], permission: None, role: Level::Read }
    }
    pub const fn any() -> Access {
        Access { auth: AuthKind::Any, public: true, scopes: &[], permission: None, role: Level::Read }
    }
}

pub struct Operation {
    /// `area/operation`, e.g. `statuses/get-combined`.
    pub id: &'static str,
    pub method: Method,
    /// Path as the spec writes it, e.g. `/repos/{owner}/{repo}/commits/{ref}/status`.
    pub path: &'static str,
    pub summary: &'static str,
    pub docs: &'static str,
    pub access: Access,
}

impl Operation {
    /// `X-Accepted-OAuth-Scopes` value.
    pub fn accepted_scopes(&self) -> String {
        self.access.scopes.join(", ")
    }
    /// `X-Accepted-Service-Permissions` value (`name=level`).
    pub fn accepted_permissions(&self) -> Option<String> {
        self.access.permission.map(|(n, l)| format!("{n}={}", l.as_str()))
    }
}
