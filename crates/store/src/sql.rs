//! Backend-neutral SQL vocabulary: values, rows, errors and the `Conn` trait.
//!
//! Domain queries are written once with `?` placeholders. Portable-SQL notes:
//! booleans are INTEGER 0/1 on SQLite and BOOLEAN on PostgreSQL, so bind them
//! as parameters (or write `TRUE`/`FALSE`), never compare them with `= 1`;
//! use `INSERT … ON CONFLICT` for upserts and `RETURNING id` for new ids.

use std::any::Any;
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
    Bool(bool),
    Bytes(Vec<u8>),
}

impl Value {
    fn kind(&self) -> &'static str {
        match self {
            Value::Null => "Null",
            Value::Int(_) => "Int",
            Value::Float(_) => "Float",
            Value::Text(_) => "Text",
            Value::Bool(_) => "Bool",
            Value::Bytes(_) => "Bytes",
        }
    }
}

macro_rules! value_from {
    ($($t:ty => |$v:ident| $e:expr),* $(,)?) => {
        $(impl From<$t> for Value { fn from($v: $t) -> Value { $e } })*
    };
}

value_from! {
    i64 => |v| Value::Int(v),
    i32 => |v| Value::Int(v.into()),
    u32 => |v| Value::Int(v.into()),
    usize => |v| Value::Int(v as i64),
    bool => |v| Value::Bool(v),
    f64 => |v| Value::Float(v),
    &str => |v| Value::Text(v.to_owned()),
    String => |v| Value::Text(v),
    &String => |v| Value::Text(v.clone()),
    Vec<u8> => |v| Value::Bytes(v),
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

/// Builds a `&[Value]` parameter slice: `params![id, "x", None::<i64>]`.
#[macro_export]
macro_rules! params {
    ($($v:expr),* $(,)?) => { &[$($crate::Value::from($v)),*][..] as &[$crate::Value] };
}

/// One result row. Accessors panic on a type mismatch: the SQL and the code
/// reading it disagree, which is a programming bug, not a runtime condition.
#[derive(Clone, Debug)]
pub struct Row(pub Vec<Value>);

impl Row {
    #[track_caller]
    fn mismatch(&self, i: usize, want: &str) -> ! {
        panic!("row column {i}: expected {want}, found {:?} (row has {} columns)", self.0.get(i), self.0.len())
    }

    #[track_caller]
    pub fn value(&self, i: usize) -> &Value {
        match self.0.get(i) {
            Some(v) => v,
            None => panic!("row column {i} out of range (row has {} columns)", self.0.len()),
        }
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    #[track_caller]
    pub fn opt_i64(&self, i: usize) -> Option<i64> {
        match self.value(i) {
            Value::Null => None,
            Value::Int(v) => Some(*v),
            _ => self.mismatch(i, "Int"),
        }
    }

    #[track_caller]
    pub fn i64(&self, i: usize) -> i64 {
        self.opt_i64(i).unwrap_or_else(|| self.mismatch(i, "Int"))
    }

    #[track_caller]
    pub fn opt_str(&self, i: usize) -> Option<&str> {
        match self.value(i) {
            Value::Null => None,
            Value::Text(s) => Some(s),
            _ => self.mismatch(i, "Text"),
        }
    }

    #[track_caller]
    pub fn str(&self, i: usize) -> &str {
        self.opt_str(i).unwrap_or_else(|| self.mismatch(i, "Text"))
    }

    #[track_caller]
    pub fn opt_string(&self, i: usize) -> Option<String> {
        self.opt_str(i).map(str::to_owned)
    }

    #[track_caller]
    pub fn string(&self, i: usize) -> String {
        self.str(i).to_owned()
    }

    /// Accepts Bool, or Int 0/1 (SQLite stores booleans as integers).
    #[track_caller]
    pub fn bool(&self, i: usize) -> bool {
        match self.value(i) {
            Value::Bool(b) => *b,
            Value::Int(0) => false,
            Value::Int(1) => true,
            _ => self.mismatch(i, "Bool or Int 0/1"),
        }
    }

    #[track_caller]
    pub fn opt_f64(&self, i: usize) -> Option<f64> {
        match self.value(i) {
            Value::Null => None,
            Value::Float(v) => Some(*v),
            Value::Int(v) => Some(*v as f64),
            _ => self.mismatch(i, "Float or Int"),
        }
    }

    #[track_caller]
    pub fn f64(&self, i: usize) -> f64 {
        self.opt_f64(i).unwrap_or_else(|| self.mismatch(i, "Float or Int"))
    }

    #[track_caller]
    pub fn bytes(&self, i: usize) -> &[u8] {
        match self.value(i) {
            Value::Bytes(b) => b,
            _ => self.mismatch(i, "Bytes"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbErrorKind {
    /// A UNIQUE or PRIMARY KEY constraint was violated.
    Unique,
    /// The database cannot be reached (connection refused/lost, store closed).
    Unavailable,
    /// The database rolled the transaction back for a concurrent one (a deadlock or a
    /// serialization failure): running it again may succeed.
    Conflict,
    Other,
}

#[derive(Debug, Clone)]
pub struct DbError {
    pub kind: DbErrorKind,
    pub message: String,
}

impl DbError {
    pub fn new(kind: DbErrorKind, message: impl Into<String>) -> DbError {
        DbError { kind, message: message.into() }
    }

    pub fn other(message: impl Into<String>) -> DbError {
        DbError::new(DbErrorKind::Other, message)
    }

    pub fn unavailable(message: impl Into<String>) -> DbError {
        DbError::new(DbErrorKind::Unavailable, message)
    }

    pub fn is_unique(&self) -> bool {
        self.kind == DbErrorKind::Unique
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "database error ({:?}): {}", self.kind, self.message)
    }
}

impl std::error::Error for DbError {}

/// A connection as seen by domain code.
///
/// Inside `Store::write`, a failed statement dooms the whole closure: the write
/// returns that error even if the closure swallowed it. PostgreSQL aborts the
/// transaction on any error; the SQLite driver enforces the same rule so both
/// backends behave alike.
pub trait Conn {
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError>;
    /// Returns the number of rows affected.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError>;
    /// Several `;`-separated statements, without parameters.
    fn batch(&mut self, sql: &str) -> Result<(), DbError>;
    fn backend(&self) -> Backend;

    fn query_opt(&mut self, sql: &str, params: &[Value]) -> Result<Option<Row>, DbError> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    fn query_one(&mut self, sql: &str, params: &[Value]) -> Result<Row, DbError> {
        self.query_opt(sql, params)?.ok_or_else(|| DbError::other(format!("query returned no row: {sql}")))
    }

    fn query_i64(&mut self, sql: &str, params: &[Value]) -> Result<i64, DbError> {
        Ok(self.query_one(sql, params)?.i64(0))
    }
}

/// Driver-side connection: remembers the first failed statement of a write.
pub(crate) trait DriverConn: Conn {
    fn take_failure(&mut self) -> Option<DbError>;
}

/// Runs a user closure inside an already open transaction (or savepoint).
/// Err, panic, or a swallowed statement failure all yield Err: the caller
/// must then roll back.
pub(crate) fn run_guarded<C, T, E, F>(conn: &mut C, f: F) -> Result<T, E>
where
    C: DriverConn,
    E: From<DbError>,
    F: FnOnce(&mut dyn Conn) -> Result<T, E>,
{
    conn.take_failure();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(conn)));
    let failure = conn.take_failure();
    match result {
        Ok(Ok(v)) => match failure {
            None => Ok(v),
            Some(e) => Err(e.into()),
        },
        Ok(Err(e)) => Err(e),
        Err(panic) => Err(panic_error(panic).into()),
    }
}

pub(crate) fn panic_error(panic: Box<dyn Any + Send>) -> DbError {
    let msg = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic payload".into());
    tracing::error!(panic = %msg, "database closure panicked");
    DbError::other(format!("database closure panicked: {msg}"))
}

pub(crate) fn type_error(v: &Value, target: &str) -> DbError {
    DbError::other(format!("cannot bind {} value as {target}", v.kind()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_impls_and_params() {
        let s = String::from("s");
        let p = params![1i64, 2i32, 3u32, 4usize, true, 1.5, "a", s.clone(), &s, vec![1u8], None::<i64>, Some("x")];
        assert_eq!(
            p,
            &[
                Value::Int(1),
                Value::Int(2),
                Value::Int(3),
                Value::Int(4),
                Value::Bool(true),
                Value::Float(1.5),
                Value::Text("a".into()),
                Value::Text("s".into()),
                Value::Text("s".into()),
                Value::Bytes(vec![1]),
                Value::Null,
                Value::Text("x".into()),
            ]
        );
        assert!(params![].is_empty());
    }

    #[test]
    fn row_accessors() {
        let r = Row(vec![Value::Int(1), Value::Null, Value::Text("t".into()), Value::Bool(true), Value::Float(2.5)]);
        assert_eq!(r.i64(0), 1);
        assert_eq!(r.opt_i64(1), None);
        assert_eq!(r.opt_str(1), None);
        assert_eq!(r.str(2), "t");
        assert!(r.bool(3));
        assert!(r.bool(0));
        assert_eq!(r.f64(0), 1.0);
        assert_eq!(r.f64(4), 2.5);
        assert_eq!(r.len(), 5);
    }

    #[test]
    #[should_panic(expected = "row column 2: expected Int")]
    fn row_mismatch_panics() {
        Row(vec![Value::Null, Value::Null, Value::Text("x".into())]).i64(2);
    }
}
