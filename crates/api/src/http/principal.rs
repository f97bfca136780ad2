//! Who is calling: the [`Principal`] that `authenticate.rs` makes of `Authorization` headers,
//! with the primary rate-limit class of document 1's table decided here, once.
use std::net::IpAddr;
use std::sync::Arc;

use platform_core::TokenKind;
use platform_store::domain::accounts::Account;
use platform_store::domain::apps::{App, Installation};
use platform_store::domain::tokens;

use crate::ratelimit::{Bucket, RateClass, Resource};

#[derive(Clone)]
pub enum Principal {
    Anonymous,
    Token(Arc<TokenAuth>),
    /// Application basic credentials (`client_id:client_secret`).
    App(Arc<AppAuth>),
}

pub struct AppAuth {
    pub app: App,
    /// 5,000/h for public data; 15,000 when an enterprise organization owns the app.
    pub limit: i64,
}

pub struct TokenAuth {
    pub token: tokens::Token,
    /// The user the token acts for (none for installation and workflow tokens).
    pub user: Option<Account>,
    pub app: Option<App>,
    pub installation: Option<Installation>,
    /// Limit of this requester kind (per hour, before the configured factor).
    pub limit: i64,
}

impl Principal {
    pub fn user(&self) -> Option<&Account> {
        match self {
            Principal::Token(t) => t.user.as_ref(),
            _ => None,
        }
    }

    /// Distinguishes callers whose repository roles may differ (for the repository cache).
    pub fn cache_key(&self) -> i64 {
        match self {
            Principal::Anonymous => 0,
            Principal::Token(t) => t.token.id,
            Principal::App(a) => -a.app.id,
        }
    }

    pub fn token(&self) -> Option<&TokenAuth> {
        match self {
            Principal::Token(t) => Some(t),
            _ => None,
        }
    }

    /// The primary rate-limit bucket of this caller (in `core`).
    pub fn rate_class(&self, ip: IpAddr) -> RateClass {
        match self {
            Principal::Anonymous => RateClass { bucket: Bucket::Ip(ip), limit: 60, resource: Resource::Core },
            Principal::App(a) => RateClass { bucket: Bucket::App(a.app.id), limit: a.limit, resource: Resource::Core },
            Principal::Token(t) => {
                let bucket = match (t.token.kind, &t.user) {
                    (TokenKind::Installation, _) => Bucket::Installation(t.token.installation_id.unwrap_or(0)),
                    (TokenKind::Workflow, _) => Bucket::Repo(t.token.repo_id.unwrap_or(0)),
                    (_, Some(u)) => Bucket::User(u.id),
                    (_, None) => Bucket::Token(t.token.id),
                };
                RateClass { bucket, limit: t.limit, resource: Resource::Core }
            }
        }
    }
}

/// What the caller's identity may do with a repository, before token restrictions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    None,
    Read,
    Write,
    Admin,
}
