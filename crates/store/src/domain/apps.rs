//! OAuth applications and apps, and app installations.
use crate::{params, Conn, DbError, Row};

#[derive(Clone, Debug)]
pub struct App {
    pub id: i64,
    /// `oauth` or `app`.
    pub kind: String,
    pub name: String,
    pub slug: String,
    pub owner_id: i64,
    pub client_id: String,
    pub secret_hash: String,
    pub created_at: i64,
}

const COLS: &str = "id, kind, name, slug, owner_id, client_id, secret_hash, created_at";

fn from_row(r: &Row) -> App {
    App {
        id: r.i64(0),
        kind: r.string(1),
        name: r.string(2),
        slug: r.string(3),
        owner_id: r.i64(4),
        client_id: r.string(5),
        secret_hash: r.string(6),
        created_at: r.i64(7),
    }
}

pub fn by_client_id(c: &mut dyn Conn, client_id: &str) -> Result<Option<App>, DbError> {
    Ok(c.query_opt(&format!("SELECT {COLS} FROM apps WHERE client_id = ?"), params![client_id])?.map(|r| from_row(&r)))
}

pub fn by_id(c: &mut dyn Conn, id: i64) -> Result<Option<App>, DbError> {
    Ok(c.query_opt(&format!("SELECT {COLS} FROM apps WHERE id = ?"), params![id])?.map(|r| from_row(&r)))
}

pub fn by_name(c: &mut dyn Conn, name: &str) -> Result<Option<App>, DbError> {
    Ok(c.query_opt(&format!("SELECT {COLS} FROM apps WHERE name = ?"), params![name])?.map(|r| from_row(&r)))
}

pub struct NewApp<'a> {
    pub kind: &'a str,
    pub name: &'a str,
    pub slug: &'a str,
    pub owner_id: i64,
    pub client_id: &'a str,
    pub secret_hash: &'a str,
}

pub fn create(c: &mut dyn Conn, a: &NewApp, now: i64) -> Result<App, DbError> {
    let id = c.query_i64(
        "INSERT INTO apps (kind, name, slug, owner_id, client_id, secret_hash, created_at, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        params![a.kind, a.name, a.slug, a.owner_id, a.client_id, a.secret_hash, now, now],
    )?;
    Ok(App {
        id,
        kind: a.kind.into(),
        name: a.name.into(),
        slug: a.slug.into(),
        owner_id: a.owner_id,
        client_id: a.client_id.into(),
        secret_hash: a.secret_hash.into(),
        created_at: now,
    })
}

#[derive(Clone, Debug)]
pub struct Installation {
    pub id: i64,
    pub app_id: i64,
    pub account_id: i64,
}

pub fn create_installation(c: &mut dyn Conn, app_id: i64, account_id: i64, now: i64) -> Result<Installation, DbError> {
    let id = c.query_i64(
        "INSERT INTO installations (app_id, account_id, created_at) VALUES (?, ?, ?) RETURNING id",
        params![app_id, account_id, now],
    )?;
    Ok(Installation { id, app_id, account_id })
}

pub fn installation(c: &mut dyn Conn, id: i64) -> Result<Option<Installation>, DbError> {
    Ok(c.query_opt("SELECT id, app_id, account_id FROM installations WHERE id = ?", params![id])?.map(|r| Installation {
        id: r.i64(0),
        app_id: r.i64(1),
        account_id: r.i64(2),
    }))
}

pub fn installation_for(c: &mut dyn Conn, app_id: i64, account_id: i64) -> Result<Option<Installation>, DbError> {
    Ok(c.query_opt("SELECT id, app_id, account_id FROM installations WHERE app_id = ? AND account_id = ?", params![app_id, account_id])?
        .map(|r| Installation { id: r.i64(0), app_id: r.i64(1), account_id: r.i64(2) }))
}

/// Replaces the client secret (seeding again prints a fresh one).
pub fn set_secret(c: &mut dyn Conn, id: i64, secret_hash: &str, now: i64) -> Result<(), DbError> {
    c.execute("UPDATE apps SET secret_hash = ?, updated_at = ? WHERE id = ?", params![secret_hash, now, id])?;
    Ok(())
}
