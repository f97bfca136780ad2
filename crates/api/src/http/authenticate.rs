//! Authentication of `Authorization` headers into a [`Principal`]: tokens (cached by a keyed
//! hash under the access generation) and application basic credentials.
use crate::error::ApiError;
use crate::state::AppState;
use axum::http::HeaderMap;
use base64::Engine;
use platform_core::ids::sha256_hex;
use platform_core::TokenKind;
use platform_store::domain::accounts;
use platform_store::domain::apps;
use platform_store::domain::{repos, tokens};
use platform_store::{Conn, DbError};
use std::sync::Arc;

use crate::principal::{AppAuth, Principal, TokenAuth};

/// Reads the credentials of a request. Invalid credentials are `401 Bad credentials`; none is
/// [`Principal::Anonymous`].
pub async fn authenticate(state: &AppState, headers: &HeaderMap, observed: crate::state::Generation) -> Result<Principal, ApiError> {
    let Some(value) = headers.get(axum::http::header::AUTHORIZATION) else {
        return Ok(Principal::Anonymous);
    };
    let value = value.to_str().map_err(|_| ApiError::bad_credentials())?.trim();
    let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
    let rest = rest.trim();
    match scheme.to_ascii_lowercase().as_str() {
        "bearer" | "token" if !rest.is_empty() => authenticate_token(state, rest, observed).await,
        "basic" => authenticate_app(state, rest).await,
        _ => Err(ApiError::bad_credentials()),
    }
}

/// Authenticates a token's text (what git sends as a password, say): `401 Bad credentials` when
/// it is not a live token.
pub async fn token(state: &AppState, text: &str, observed: crate::state::Generation) -> Result<Principal, ApiError> {
    authenticate_token(state, text, observed).await
}

/// Keys of the token cache's hash, drawn at start-up.
static TOKEN_KEYS: std::sync::LazyLock<(u64, u64)> = std::sync::LazyLock::new(|| (rand::random(), rand::random()));

async fn authenticate_token(state: &AppState, text: &str, observed: crate::state::Generation) -> Result<Principal, ApiError> {
    if TokenKind::from_token(text).is_none() {
        return Err(ApiError::bad_credentials());
    }
    // The cache is keyed by a keyed 128-bit hash of the token (secret per process, so no
    // collision can be aimed at); SHA-256, which the store is keyed by, only on a miss.
    let key = crate::etag::sip128(TOKEN_KEYS.0, TOKEN_KEYS.1, text.as_bytes());
    let now = state.clock.now();
    let generation = state.access_generation(observed);
    let cached = generation.and_then(|g| state.caches.tokens.get(&key, g));
    let auth = match cached {
        Some(a) => Some(a),
        None => {
            let hash = sha256_hex(text.as_bytes());
            let loaded = state.store.read(move |c| load_token(c, &hash)).await?.map(Arc::new);
            if let (Some(g), Some(a)) = (generation, &loaded) {
                state.caches.tokens.put(key, g, a.clone());
            }
            loaded
        }
    };
    match auth {
        Some(a) if a.token.expires_at.is_none_or(|t| t > now) => Ok(Principal::Token(a)),
        _ => Err(ApiError::bad_credentials()),
    }
}

fn load_token(c: &mut dyn Conn, hash: &str) -> Result<Option<TokenAuth>, DbError> {
    let Some((token, user)) = tokens::by_hash(c, hash)? else { return Ok(None) };
    let app = match token.app_id {
        Some(id) => apps::by_id(c, id)?,
        None => None,
    };
    let installation = match token.installation_id {
        Some(id) => apps::installation(c, id)?,
        None => None,
    };
    let limit = match token.kind {
        TokenKind::Installation => match &installation {
            Some(i) => installation_limit(c, i.account_id)?,
            None => 5_000,
        },
        TokenKind::Workflow => {
            let owner = match token.repo_id {
                Some(id) => repos::by_id(c, id)?.map(|r| r.owner.id),
                None => None,
            };
            match owner {
                Some(o) if accounts::in_enterprise(c, o)? => 15_000,
                _ => 1_000,
            }
        }
        // Apps owned by an enterprise organization acting for a member of it: 15,000.
        TokenKind::Oauth | TokenKind::UserToServer => match (&app, &user) {
            (Some(a), Some(u)) if accounts::in_enterprise(c, a.owner_id)? && accounts::org_role(c, a.owner_id, u.id)?.is_some() => 15_000,
            _ => 5_000,
        },
        TokenKind::Classic | TokenKind::FineGrained => 5_000,
    };
    Ok(Some(TokenAuth { token, user, app, installation, limit }))
}

/// 5,000 plus 50 per repository beyond 20 and 50 per organization user beyond 20, at most
/// 12,500; 15,000 on an enterprise-owned organization.
fn installation_limit(c: &mut dyn Conn, account_id: i64) -> Result<i64, DbError> {
    if accounts::in_enterprise(c, account_id)? {
        return Ok(15_000);
    }
    let repos = repos::count_for_owner(c, account_id)?;
    let users = accounts::org_member_count(c, account_id)?;
    Ok(installation_formula(repos, users))
}

pub fn installation_formula(repos: i64, users: i64) -> i64 {
    (5_000 + 50 * (repos - 20).max(0) + 50 * (users - 20).max(0)).min(12_500)
}

async fn authenticate_app(state: &AppState, b64: &str) -> Result<Principal, ApiError> {
    let decoded = base64::engine::general_purpose::STANDARD.decode(b64).map_err(|_| ApiError::bad_credentials())?;
    let decoded = String::from_utf8(decoded).map_err(|_| ApiError::bad_credentials())?;
    let (client_id, secret) = decoded.split_once(':').ok_or_else(ApiError::bad_credentials)?;
    let (client_id, hash) = (client_id.to_string(), sha256_hex(secret.as_bytes()));
    let app = state
        .store
        .read(move |c| -> Result<_, DbError> {
            let Some(app) = apps::by_client_id(c, &client_id)? else { return Ok(None) };
            if !crate::secrets::constant_time_eq(app.secret_hash.as_bytes(), hash.as_bytes()) {
                return Ok(None);
            }
            let limit = if accounts::in_enterprise(c, app.owner_id)? { 15_000 } else { 5_000 };
            Ok(Some(AppAuth { app, limit }))
        })
        .await?;
    app.map(|a| Principal::App(Arc::new(a))).ok_or_else(ApiError::bad_credentials)
}

#[cfg(test)]
mod tests {
    #[test]
    fn installation_formula() {
        assert_eq!(super::installation_formula(20, 20), 5_000);
        assert_eq!(super::installation_formula(30, 25), 5_750);
        assert_eq!(super::installation_formula(1_000, 1_000), 12_500);
    }
}
