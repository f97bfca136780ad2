//! Organization webhooks and their deliveries. The `hook_deliveries` table is the durable
//! delivery queue: rows are inserted by the webhook activity consumer in its transaction, claimed
//! with a lease by the sender, and finished with the record of the attempt.
use crate::{params, Backend, Conn, DbError, Row};

#[derive(Clone, Debug)]
pub struct Hook {
    pub id: i64,
    pub org_id: i64,
    pub created_by_app_id: Option<i64>,
    pub name: String,
    pub events: Vec<String>,
    pub active: bool,
    pub url: String,
    pub content_type: String,
    pub insecure_ssl: String,
    /// Encrypted secret (see the API's webhook module); `None` when no secret is set.
    pub secret_enc: Option<String>,
    pub consecutive_failures: i64,
    pub last_status: Option<String>,
    pub last_code: Option<i64>,
    pub last_message: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl Hook {
    /// Does this hook subscribe to `event`? (`*` selects all; `ping` always goes.)
    pub fn wants(&self, event: &str) -> bool {
        event == "ping" || self.events.iter().any(|e| e == "*" || e == event)
    }
}

const COLS: &str = "h.id, h.org_id, h.created_by_app_id, h.name, h.events, h.active, h.url, h.content_type, \
    h.insecure_ssl, h.secret_enc, h.consecutive_failures, h.last_status, h.last_code, h.last_message, h.created_at, h.updated_at";

fn hook_from_row(r: &Row) -> Hook {
    Hook {
        id: r.i64(0),
        org_id: r.i64(1),
        created_by_app_id: r.opt_i64(2),
        name: r.string(3),
        events: serde_json::from_str(r.str(4)).unwrap_or_default(),
        active: r.bool(5),
        url: r.string(6),
        content_type: r.string(7),
        insecure_ssl: r.string(8),
        secret_enc: r.opt_string(9),
        consecutive_failures: r.i64(10),
        last_status: r.opt_string(11),
        last_code: r.opt_i64(12),
        last_message: r.opt_string(13),
        created_at: r.i64(14),
        updated_at: r.i64(15),
    }
}

/// The value of a server key, created with `make` the first time.
pub fn key(c: &mut dyn Conn, name: &str, make: impl FnOnce() -> String) -> Result<String, DbError> {
    if let Some(r) = c.query_opt("SELECT value FROM webhook_keys WHERE name = ?", params![name])? {
        return Ok(r.string(0));
    }
    c.execute("INSERT INTO webhook_keys (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING", params![name, make()])?;
    Ok(c.query_opt("SELECT value FROM webhook_keys WHERE name = ?", params![name])?.map(|r| r.string(0)).unwrap_or_default())
}

pub struct HookFields<'a> {
    pub events: &'a [String],
    pub active: bool,
    pub url: &'a str,
    pub content_type: &'a str,
    pub insecure_ssl: &'a str,
    pub secret_enc: Option<&'a str>,
}

pub fn create(c: &mut dyn Conn, org_id: i64, app_id: Option<i64>, f: &HookFields, now: i64) -> Result<Hook, DbError> {
    let events = serde_json::to_string(f.events).unwrap_or_else(|_| "[]".into());
    let id = c.query_i64(
        "INSERT INTO hooks (org_id, created_by_app_id, name, events, active, url, content_type, insecure_ssl, secret_enc, \
         created_at, updated_at) VALUES (?, ?, 'web', ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        params![org_id, app_id, events, f.active, f.url, f.content_type, f.insecure_ssl, f.secret_enc, now, now],
    )?;
    Ok(by_id(c, org_id, id)?.expect("hook just created"))
}

pub fn update(c: &mut dyn Conn, id: i64, f: &HookFields, now: i64) -> Result<(), DbError> {
    let events = serde_json::to_string(f.events).unwrap_or_else(|_| "[]".into());
    c.execute(
        "UPDATE hooks SET events = ?, active = ?, url = ?, content_type = ?, insecure_ssl = ?, secret_enc = ?, \
         consecutive_failures = CASE WHEN ? THEN 0 ELSE consecutive_failures END, updated_at = ? WHERE id = ?",
        params![events, f.active, f.url, f.content_type, f.insecure_ssl, f.secret_enc, f.active, now, id],
    )?;
    Ok(())
}

pub fn by_id(c: &mut dyn Conn, org_id: i64, id: i64) -> Result<Option<Hook>, DbError> {
    let sql = format!("SELECT {COLS} FROM hooks h WHERE h.org_id = ? AND h.id = ? AND h.deleted_at IS NULL");
    Ok(c.query_opt(&sql, params![org_id, id])?.map(|r| hook_from_row(&r)))
}

pub fn get(c: &mut dyn Conn, id: i64) -> Result<Option<Hook>, DbError> {
    let sql = format!("SELECT {COLS} FROM hooks h WHERE h.id = ? AND h.deleted_at IS NULL");
    Ok(c.query_opt(&sql, params![id])?.map(|r| hook_from_row(&r)))
}

/// Hooks of an organization, oldest first; `app` restricts to those an OAuth application created.
pub fn list(c: &mut dyn Conn, org_id: i64, app: Option<i64>, offset: i64, limit: i64) -> Result<(Vec<Hook>, i64), DbError> {
    let (filter, args) = match app {
        Some(a) => (" AND h.created_by_app_id = ?", vec![crate::Value::from(a)]),
        None => ("", vec![]),
    };
    let mut count_args = vec![crate::Value::from(org_id)];
    count_args.extend(args.iter().cloned());
    let total = c.query_i64(&format!("SELECT COUNT(*) FROM hooks h WHERE h.org_id = ? AND h.deleted_at IS NULL{filter}"), &count_args)?;
    let mut list_args = count_args;
    list_args.push(limit.into());
    list_args.push(offset.into());
    let sql = format!("SELECT {COLS} FROM hooks h WHERE h.org_id = ? AND h.deleted_at IS NULL{filter} ORDER BY h.id LIMIT ? OFFSET ?");
    Ok((c.query(&sql, &list_args)?.iter().map(hook_from_row).collect(), total))
}

/// Active hooks of an organization (the consumer's fan-out).
pub fn active_for_org(c: &mut dyn Conn, org_id: i64) -> Result<Vec<Hook>, DbError> {
    let sql = format!("SELECT {COLS} FROM hooks h WHERE h.org_id = ? AND h.active = ? AND h.deleted_at IS NULL ORDER BY h.id");
    Ok(c.query(&sql, params![org_id, true])?.iter().map(hook_from_row).collect())
}

/// Deletes a hook the caller read under its row lock ([`locked`], so one request deletes it and
/// records the deletion): its deliveries go at once; the hook row too, unless `keep` (a last
/// delivery to it is queued: it stays, invisible, until that delivery is done, see
/// [`record_attempt`]).
pub fn delete(c: &mut dyn Conn, id: i64, keep: bool, now: i64) -> Result<(), DbError> {
    c.execute("DELETE FROM hook_deliveries WHERE hook_id = ?", params![id])?;
    if keep {
        c.execute("UPDATE hooks SET deleted_at = ? WHERE id = ?", params![now, id])?;
    } else {
        c.execute("DELETE FROM hooks WHERE id = ?", params![id])?;
    }
    Ok(())
}

/// The hook as it is now, under its row lock ([`crate::lock::rows`]).
pub fn locked(c: &mut dyn Conn, org_id: i64, id: i64) -> Result<Option<Hook>, DbError> {
    crate::lock::rows(c, "hooks", "id = ? AND deleted_at IS NULL", params![id])?;
    by_id(c, org_id, id)
}

/// A deleted hook whose last delivery is done goes, with its deliveries.
fn forget_if_done(c: &mut dyn Conn, id: i64) -> Result<(), DbError> {
    let gone = c.execute(
        "DELETE FROM hooks WHERE id = ? AND deleted_at IS NOT NULL \
         AND NOT EXISTS (SELECT 1 FROM hook_deliveries WHERE hook_id = ? AND state = 'pending')",
        params![id, id],
    )?;
    if gone > 0 {
        c.execute("DELETE FROM hook_deliveries WHERE hook_id = ?", params![id])?;
    }
    Ok(())
}

#[derive(Clone, Debug)]
pub struct Delivery {
    pub id: i64,
    pub guid: String,
    pub hook_id: i64,
    pub event: String,
    pub action: Option<String>,
    pub payload: String,
    pub state: String,
    pub redelivery: bool,
    pub attempts: i64,
    pub installation_id: Option<i64>,
    pub repository_id: Option<i64>,
    pub activity_at_ms: Option<i64>,
    pub url: Option<String>,
    pub status: Option<String>,
    pub status_code: i64,
    pub duration_ms: i64,
    pub request_headers: Option<String>,
    pub request_body: Option<String>,
    pub response_headers: Option<String>,
    pub response_body: Option<String>,
    pub delivered_at: Option<i64>,
    pub created_at: i64,
}

const DCOLS: &str = "d.id, d.guid, d.hook_id, d.event, d.action, d.payload, d.state, d.redelivery, d.attempts, \
    d.installation_id, d.repository_id, d.activity_at_ms, d.url, d.status, d.status_code, d.duration_ms, \
    d.request_headers, d.request_body, d.response_headers, d.response_body, d.delivered_at, d.created_at";

fn delivery_from_row(r: &Row) -> Delivery {
    Delivery {
        id: r.i64(0),
        guid: r.string(1),
        hook_id: r.i64(2),
        event: r.string(3),
        action: r.opt_string(4),
        payload: r.string(5),
        state: r.string(6),
        redelivery: r.bool(7),
        attempts: r.i64(8),
        installation_id: r.opt_i64(9),
        repository_id: r.opt_i64(10),
        activity_at_ms: r.opt_i64(11),
        url: r.opt_string(12),
        status: r.opt_string(13),
        status_code: r.i64(14),
        duration_ms: r.i64(15),
        request_headers: r.opt_string(16),
        request_body: r.opt_string(17),
        response_headers: r.opt_string(18),
        response_body: r.opt_string(19),
        delivered_at: r.opt_i64(20),
        created_at: r.i64(21),
    }
}

pub struct NewDelivery<'a> {
    pub guid: &'a str,
    pub hook_id: i64,
    pub event: &'a str,
    pub action: Option<&'a str>,
    pub payload: &'a str,
    pub redelivery: bool,
    pub installation_id: Option<i64>,
    pub repository_id: Option<i64>,
    pub activity_at_ms: Option<i64>,
}

/// Queues a delivery, due now.
pub fn enqueue(c: &mut dyn Conn, d: &NewDelivery, now: i64) -> Result<i64, DbError> {
    c.query_i64(
        "INSERT INTO hook_deliveries (guid, hook_id, event, action, payload, state, redelivery, next_attempt_at, \
         installation_id, repository_id, activity_at_ms, created_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?) RETURNING id",
        params![
            d.guid,
            d.hook_id,
            d.event,
            d.action,
            d.payload,
            d.redelivery,
            now,
            d.installation_id,
            d.repository_id,
            d.activity_at_ms,
            now
        ],
    )
}

pub fn delivery(c: &mut dyn Conn, hook_id: i64, id: i64) -> Result<Option<Delivery>, DbError> {
    let sql = format!("SELECT {DCOLS} FROM hook_deliveries d WHERE d.hook_id = ? AND d.id = ?");
    Ok(c.query_opt(&sql, params![hook_id, id])?.map(|r| delivery_from_row(&r)))
}

/// Deliveries of a hook, newest first, with ids below `before` (a cursor), filtered by outcome
/// (`Some(true)`: status code 200–399; `Some(false)`: anything else).
pub fn deliveries(
    c: &mut dyn Conn,
    hook_id: i64,
    before: Option<i64>,
    success: Option<bool>,
    limit: i64,
) -> Result<Vec<Delivery>, DbError> {
    let filter = match success {
        Some(true) => " AND d.status_code BETWEEN 200 AND 399",
        Some(false) => " AND NOT (d.status_code BETWEEN 200 AND 399)",
        None => "",
    };
    let sql = format!("SELECT {DCOLS} FROM hook_deliveries d WHERE d.hook_id = ? AND d.id < ?{filter} ORDER BY d.id DESC LIMIT ?");
    Ok(c.query(&sql, params![hook_id, before.unwrap_or(i64::MAX), limit])?.iter().map(delivery_from_row).collect())
}

/// Is any delivery due at `now` (cheap read before a claim)?
pub fn any_due(c: &mut dyn Conn, now: i64) -> Result<bool, DbError> {
    Ok(c.query_opt(
        "SELECT 1 FROM hook_deliveries WHERE state = 'pending' AND next_attempt_at <= ? \
             AND (claimed_until IS NULL OR claimed_until <= ?) LIMIT 1",
        params![now, now],
    )?
    .is_some())
}

/// The earliest time a pending delivery becomes due (for the sender's sleep).
pub fn next_due(c: &mut dyn Conn) -> Result<Option<i64>, DbError> {
    Ok(c.query_opt(
        "SELECT MIN(CASE WHEN claimed_until IS NOT NULL AND claimed_until > next_attempt_at THEN claimed_until \
             ELSE next_attempt_at END) FROM hook_deliveries WHERE state = 'pending'",
        &[],
    )?
    .and_then(|r| r.opt_i64(0)))
}

/// Claims up to `limit` due deliveries until `lease_until` (PostgreSQL: rows other nodes hold are
/// skipped), returning them with their hooks.
pub fn claim(c: &mut dyn Conn, now: i64, lease_until: i64, limit: i64) -> Result<Vec<(Delivery, Hook)>, DbError> {
    let lock = if c.backend() == Backend::Postgres { " FOR UPDATE SKIP LOCKED" } else { "" };
    let ids: Vec<i64> = c
        .query(
            &format!(
                "SELECT id FROM hook_deliveries WHERE state = 'pending' AND next_attempt_at <= ? \
                 AND (claimed_until IS NULL OR claimed_until <= ?) ORDER BY id LIMIT ?{lock}"
            ),
            params![now, now, limit],
        )?
        .iter()
        .map(|r| r.i64(0))
        .collect();
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        c.execute("UPDATE hook_deliveries SET claimed_until = ? WHERE id = ?", params![lease_until, id])?;
        let sql = format!("SELECT {DCOLS}, {COLS} FROM hook_deliveries d JOIN hooks h ON h.id = d.hook_id WHERE d.id = ?");
        if let Some(r) = c.query_opt(&sql, params![id])? {
            let d = delivery_from_row(&r);
            let tail = Row(r.0[22..].to_vec());
            out.push((d, hook_from_row(&tail)));
        }
    }
    Ok(out)
}

/// Releases every claim (SQLite at startup: the only process, so every claim is stale).
pub fn release_claims(c: &mut dyn Conn) -> Result<(), DbError> {
    c.execute("UPDATE hook_deliveries SET claimed_until = NULL WHERE state = 'pending' AND claimed_until IS NOT NULL", &[])?;
    Ok(())
}

/// The record of one attempt.
pub struct Attempt<'a> {
    /// `delivered`, `failed`, `refused`, or `pending` (a retry is scheduled at `next_attempt_at`).
    pub state: &'a str,
    pub next_attempt_at: i64,
    pub url: &'a str,
    pub status: &'a str,
    pub status_code: i64,
    pub duration_ms: i64,
    pub request_headers: &'a str,
    pub request_body: Option<&'a str>,
    pub response_headers: &'a str,
    pub response_body: Option<&'a str>,
    pub delivered_at: i64,
}

/// Records an attempt and the hook's last response; `disable_after` consecutive failures (when
/// non-zero) deactivate the hook. Returns whether the hook was disabled now.
pub fn record_attempt(c: &mut dyn Conn, d: &Delivery, a: &Attempt, success: bool, disable_after: i64) -> Result<bool, DbError> {
    // The hook's row first, as a delete takes it before the hook's deliveries: the other order
    // deadlocks with a delete made meanwhile (PostgreSQL then rolls one of them back).
    let last_status = if success { "active" } else { "failed" };
    c.execute(
        "UPDATE hooks SET last_status = ?, last_code = ?, last_message = ?, \
         consecutive_failures = CASE WHEN ? THEN 0 ELSE consecutive_failures + 1 END WHERE id = ?",
        params![last_status, a.status_code, a.status, success, d.hook_id],
    )?;
    c.execute(
        "UPDATE hook_deliveries SET state = ?, next_attempt_at = ?, claimed_until = NULL, attempts = attempts + 1, url = ?, \
         status = ?, status_code = ?, duration_ms = ?, request_headers = ?, request_body = ?, response_headers = ?, \
         response_body = ?, delivered_at = ? WHERE id = ?",
        params![
            a.state,
            a.next_attempt_at,
            a.url,
            a.status,
            a.status_code,
            a.duration_ms,
            a.request_headers,
            a.request_body,
            a.response_headers,
            a.response_body,
            a.delivered_at,
            d.id
        ],
    )?;
    forget_if_done(c, d.hook_id)?;
    if !success && disable_after > 0 {
        let n = c.execute(
            "UPDATE hooks SET active = ? WHERE id = ? AND active = ? AND consecutive_failures >= ?",
            params![false, d.hook_id, true, disable_after],
        )?;
        return Ok(n > 0);
    }
    Ok(false)
}
