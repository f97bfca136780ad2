//! Private registry configurations of an organization.
use crate::{params, Conn, DbError, Row};

#[derive(Clone, Debug, Default)]
pub struct Registry {
    pub name: String,
    pub registry_type: String,
    pub auth_type: String,
    pub url: String,
    pub username: Option<String>,
    pub replaces_base: bool,
    pub visibility: String,
    pub selected_repository_ids: Vec<i64>,
    /// The OIDC fields of the auth type, as a JSON object.
    pub oidc: serde_json::Map<String, serde_json::Value>,
    /// The opened secret value encrypted under the server key (token kinds).
    pub value_enc: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

const COLS: &str = "name, registry_type, auth_type, url, username, replaces_base, visibility, selected_repository_ids, oidc, value_enc, created_at, updated_at";

fn from_row(r: &Row) -> Registry {
    Registry {
        name: r.string(0),
        registry_type: r.string(1),
        auth_type: r.string(2),
        url: r.string(3),
        username: r.opt_string(4),
        replaces_base: r.bool(5),
        visibility: r.string(6),
        selected_repository_ids: serde_json::from_str(r.str(7)).unwrap_or_default(),
        oidc: serde_json::from_str(r.str(8)).unwrap_or_default(),
        value_enc: r.opt_string(9),
        created_at: r.i64(10),
        updated_at: r.i64(11),
    }
}

pub fn get(c: &mut dyn Conn, org_id: i64, name: &str) -> Result<Option<Registry>, DbError> {
    Ok(c.query_opt(&format!("SELECT {COLS} FROM private_registries WHERE org_id = ? AND name = ?"), params![org_id, name])?
        .map(|r| from_row(&r)))
}

/// The configuration as it is now, under its row lock ([`crate::lock::rows`]).
pub fn locked(c: &mut dyn Conn, org_id: i64, name: &str) -> Result<Option<Registry>, DbError> {
    crate::lock::rows(c, "private_registries", "org_id = ? AND name = ?", params![org_id, name])?;
    get(c, org_id, name)
}

/// One page of the organization's configurations by name, with the total.
pub fn list(c: &mut dyn Conn, org_id: i64, offset: i64, limit: i64) -> Result<(Vec<Registry>, i64), DbError> {
    let total = c.query_i64("SELECT COUNT(*) FROM private_registries WHERE org_id = ?", params![org_id])?;
    let rows = c.query(
        &format!("SELECT {COLS} FROM private_registries WHERE org_id = ? ORDER BY name LIMIT ? OFFSET ?"),
        params![org_id, limit, offset],
    )?;
    Ok((rows.iter().map(from_row).collect(), total))
}

/// Inserts a configuration; a taken name is a `Unique` error.
pub fn create(c: &mut dyn Conn, org_id: i64, r: &Registry) -> Result<(), DbError> {
    c.execute(
        &format!("INSERT INTO private_registries (org_id, {COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
        params![
            org_id,
            &r.name,
            &r.registry_type,
            &r.auth_type,
            &r.url,
            r.username.as_deref(),
            r.replaces_base,
            &r.visibility,
            serde_json::to_string(&r.selected_repository_ids).unwrap_or_default(),
            serde_json::to_string(&r.oidc).unwrap_or_default(),
            r.value_enc.as_deref(),
            r.created_at,
            r.updated_at
        ],
    )?;
    Ok(())
}

/// Writes every field of an existing configuration but its name, auth type and creation time.
pub fn update(c: &mut dyn Conn, org_id: i64, r: &Registry) -> Result<(), DbError> {
    c.execute(
        "UPDATE private_registries SET registry_type = ?, url = ?, username = ?, replaces_base = ?, visibility = ?, \
         selected_repository_ids = ?, oidc = ?, value_enc = ?, updated_at = ? WHERE org_id = ? AND name = ?",
        params![
            &r.registry_type,
            &r.url,
            r.username.as_deref(),
            r.replaces_base,
            &r.visibility,
            serde_json::to_string(&r.selected_repository_ids).unwrap_or_default(),
            serde_json::to_string(&r.oidc).unwrap_or_default(),
            r.value_enc.as_deref(),
            r.updated_at,
            org_id,
            &r.name
        ],
    )?;
    Ok(())
}

pub fn delete(c: &mut dyn Conn, org_id: i64, name: &str) -> Result<bool, DbError> {
    Ok(c.execute("DELETE FROM private_registries WHERE org_id = ? AND name = ?", params![org_id, name])? > 0)
}

/// Is the name taken in the organization?
pub fn exists(c: &mut dyn Conn, org_id: i64, name: &str) -> Result<bool, DbError> {
    Ok(c.query_opt("SELECT 1 FROM private_registries WHERE org_id = ? AND name = ?", params![org_id, name])?.is_some())
}
