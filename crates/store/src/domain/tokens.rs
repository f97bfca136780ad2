//! Tokens of every kind, stored as SHA-256 hashes of the token text.
use std::collections::BTreeMap;

use super::accounts::{self, Account};
use crate::{params, Conn, DbError, Row};
use platform_core::TokenKind;

#[derive(Clone, Debug)]
pub struct Token {
    pub id: i64,
    pub kind: TokenKind,
    pub token_hash: String,
    pub last_eight: String,
    pub user_id: Option<i64>,
    pub app_id: Option<i64>,
    pub installation_id: Option<i64>,
    pub repo_id: Option<i64>,
    pub scopes: Vec<String>,
    /// Fine-grained permission name → `read` | `write`.
    pub permissions: BTreeMap<String, String>,
    pub resource_owner_id: Option<i64>,
    /// `all` or `selected`.
    pub repository_selection: String,
    pub repository_ids: Vec<i64>,
    pub note: Option<String>,
    pub note_url: Option<String>,
    pub expires_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

const COLS: &str = "t.id, t.kind, t.token_hash, t.last_eight, t.user_id, t.app_id, t.installation_id, t.repo_id, \
    t.scopes, t.permissions, t.resource_owner_id, t.repository_selection, t.repository_ids, t.note, t.note_url, \
    t.expires_at, t.created_at, t.updated_at";
const NCOLS: usize = 18;

fn from_row(r: &Row) -> Token {
    Token {
        id: r.i64(0),
        kind: TokenKind::parse(r.str(1)).unwrap_or(TokenKind::Classic),
        token_hash: r.string(2),
        last_eight: r.string(3),
        user_id: r.opt_i64(4),
        app_id: r.opt_i64(5),
        installation_id: r.opt_i64(6),
        repo_id: r.opt_i64(7),
        scopes: r.str(8).split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect(),
        permissions: serde_json::from_str(r.str(9)).unwrap_or_default(),
        resource_owner_id: r.opt_i64(10),
        repository_selection: r.string(11),
        repository_ids: serde_json::from_str(r.str(12)).unwrap_or_default(),
        note: r.opt_string(13),
        note_url: r.opt_string(14),
        expires_at: r.opt_i64(15),
        created_at: r.i64(16),
        updated_at: r.i64(17),
    }
}

/// The token with this hash and the user it acts for (one query: this runs on every request).
pub fn by_hash(c: &mut dyn Conn, hash: &str) -> Result<Option<(Token, Option<Account>)>, DbError> {
    let sql = format!("SELECT {COLS}, {} FROM tokens t LEFT JOIN accounts a ON a.id = t.user_id WHERE t.token_hash = ?", accounts::COLS);
    Ok(c.query_opt(&sql, params![hash])?.map(|r| (from_row(&r), accounts::opt_from_row(&r, NCOLS))))
}

pub fn by_id(c: &mut dyn Conn, id: i64) -> Result<Option<Token>, DbError> {
    let sql = format!("SELECT {COLS} FROM tokens t WHERE t.id = ?");
    Ok(c.query_opt(&sql, params![id])?.map(|r| from_row(&r)))
}

pub struct NewToken<'a> {
    pub kind: TokenKind,
    pub token_hash: &'a str,
    pub last_eight: &'a str,
    pub user_id: Option<i64>,
    pub app_id: Option<i64>,
    pub installation_id: Option<i64>,
    pub repo_id: Option<i64>,
    pub scopes: &'a [String],
    pub permissions: &'a BTreeMap<String, String>,
    pub resource_owner_id: Option<i64>,
    pub repository_selection: &'a str,
    pub repository_ids: &'a [i64],
    pub note: Option<&'a str>,
    pub expires_at: Option<i64>,
}

pub fn create(c: &mut dyn Conn, t: &NewToken, now: i64) -> Result<Token, DbError> {
    let id = c.query_i64(
        "INSERT INTO tokens (kind, token_hash, last_eight, user_id, app_id, installation_id, repo_id, scopes, \
         permissions, resource_owner_id, repository_selection, repository_ids, note, expires_at, created_at, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        params![
            t.kind.as_str(),
            t.token_hash,
            t.last_eight,
            t.user_id,
            t.app_id,
            t.installation_id,
            t.repo_id,
            t.scopes.join(","),
            serde_json::to_string(t.permissions).unwrap_or_else(|_| "{}".into()),
            t.resource_owner_id,
            t.repository_selection,
            serde_json::to_string(t.repository_ids).unwrap_or_else(|_| "[]".into()),
            t.note,
            t.expires_at,
            now,
            now
        ],
    )?;
    by_id(c, id)?.ok_or_else(|| DbError { kind: crate::DbErrorKind::Other, message: "token vanished".into() })
}

/// Gives the token a new secret; the old text stops working in the same commit.
pub fn replace_secret(c: &mut dyn Conn, id: i64, hash: &str, last_eight: &str, now: i64) -> Result<(), DbError> {
    c.execute("UPDATE tokens SET token_hash = ?, last_eight = ?, updated_at = ? WHERE id = ?", params![hash, last_eight, now, id])?;
    Ok(())
}

pub fn delete(c: &mut dyn Conn, id: i64) -> Result<u64, DbError> {
    c.execute("DELETE FROM tokens WHERE id = ?", params![id])
}

/// Revokes the grant: every token of the application for that user.
pub fn delete_for_app_user(c: &mut dyn Conn, app_id: i64, user_id: i64) -> Result<u64, DbError> {
    c.execute("DELETE FROM tokens WHERE app_id = ? AND user_id = ?", params![app_id, user_id])
}
