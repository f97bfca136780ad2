//! TEMPORARY stub of the store contract; replaced by the real drivers on merge.
#![allow(unused)]
pub mod domain;
#[derive(Clone, Debug, PartialEq)]
pub enum Value { Null, Int(i64), Float(f64), Text(String), Bool(bool), Bytes(Vec<u8>) }
impl From<i64> for Value { fn from(v: i64) -> Self { Value::Int(v) } }
impl From<i32> for Value { fn from(v: i32) -> Self { Value::Int(v as i64) } }
impl From<usize> for Value { fn from(v: usize) -> Self { Value::Int(v as i64) } }
impl From<bool> for Value { fn from(v: bool) -> Self { Value::Bool(v) } }
impl From<f64> for Value { fn from(v: f64) -> Self { Value::Float(v) } }
impl From<&str> for Value { fn from(v: &str) -> Self { Value::Text(v.into()) } }
impl From<String> for Value { fn from(v: String) -> Self { Value::Text(v) } }
impl From<&String> for Value { fn from(v: &String) -> Self { Value::Text(v.clone()) } }
impl From<Vec<u8>> for Value { fn from(v: Vec<u8>) -> Self { Value::Bytes(v) } }
impl<T: Into<Value>> From<Option<T>> for Value { fn from(v: Option<T>) -> Self { v.map(Into::into).unwrap_or(Value::Null) } }
#[derive(Clone, Debug)] pub struct Row(pub Vec<Value>);
impl Row {
  pub fn i64(&self, i: usize) -> i64 { todo!() } pub fn opt_i64(&self, i: usize) -> Option<i64> { todo!() }
  pub fn str(&self, i: usize) -> &str { todo!() } pub fn opt_str(&self, i: usize) -> Option<&str> { todo!() }
  pub fn string(&self, i: usize) -> String { todo!() } pub fn opt_string(&self, i: usize) -> Option<String> { todo!() }
  pub fn bool(&self, i: usize) -> bool { todo!() } pub fn f64(&self, i: usize) -> f64 { todo!() }
  pub fn opt_f64(&self, i: usize) -> Option<f64> { todo!() } pub fn bytes(&self, i: usize) -> &[u8] { todo!() }
  pub fn value(&self, i: usize) -> &Value { todo!() } pub fn len(&self) -> usize { todo!() }
}
#[derive(Clone, Copy, Debug, PartialEq, Eq)] pub enum Backend { Sqlite, Postgres }
#[derive(Clone, Copy, Debug, PartialEq, Eq)] pub enum DbErrorKind { Unique, Unavailable, Other }
#[derive(Debug, Clone)] pub struct DbError { pub kind: DbErrorKind, pub message: String }
impl std::fmt::Display for DbError { fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { f.write_str(&self.message) } }
impl std::error::Error for DbError {}
pub trait Conn {
  fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError>;
  fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError>;
  fn batch(&mut self, sql: &str) -> Result<(), DbError>;
  fn backend(&self) -> Backend;
  fn query_opt(&mut self, sql: &str, params: &[Value]) -> Result<Option<Row>, DbError> { todo!() }
  fn query_one(&mut self, sql: &str, params: &[Value]) -> Result<Row, DbError> { todo!() }
  fn query_i64(&mut self, sql: &str, params: &[Value]) -> Result<i64, DbError> { todo!() }
}
#[macro_export] macro_rules! params { ($($v:expr),* $(,)?) => { &[$($crate::Value::from($v)),*][..] } }
#[derive(Clone)] pub struct Store;
pub struct StoreOptions { pub url: String, pub sqlite_synchronous_full: bool, pub pool_size: usize }
impl Store {
  pub async fn open(opts: StoreOptions) -> Result<Store, DbError> { todo!() }
  pub fn backend(&self) -> Backend { todo!() }
  pub async fn read<T, E, F>(&self, f: F) -> Result<T, E> where F: FnOnce(&mut dyn Conn) -> Result<T, E> + Send + 'static, T: Send + 'static, E: From<DbError> + Send + 'static { todo!() }
  pub async fn write<T, E, F>(&self, f: F) -> Result<T, E> where F: FnOnce(&mut dyn Conn) -> Result<T, E> + Send + 'static, T: Send + 'static, E: From<DbError> + Send + 'static { todo!() }
  pub async fn ping(&self) -> Result<(), DbError> { todo!() }
  pub async fn reset(&self) -> Result<(), DbError> { todo!() }
  pub async fn migrate(&self) -> Result<Vec<String>, DbError> { todo!() }
  pub async fn close(&self) {}
}
pub mod testing {
  pub fn postgres_base_url() -> Option<String> { todo!() }
  pub struct TestDatabase { pub url: String }
  pub fn test_database(backend: super::Backend) -> Option<TestDatabase> { todo!() }
}
