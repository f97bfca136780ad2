//! The access log: one line per request, in the format of the other log lines (text or JSON).
//!
//! It does not go through tracing's formatter: at ~100k requests/s, formatting an event and
//! handing each line to the log thread on its own was the largest single cost of a cached 304.
//! Here a line is formatted straight into a shared buffer, which one thread writes out a few
//! times a second (or sooner when it fills). Without `install` (tests, embedders) lines go
//! through `tracing` as usual.
use std::cell::Cell;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub const TARGET: &str = "platformd::access";

/// Written out at least this often.
const FLUSH_EVERY: Duration = Duration::from_millis(200);
/// The writer is woken early past this size; a request waits (no line is dropped) past `MAX`.
const WAKE_AT: usize = 256 * 1024;
const MAX: usize = 16 * 1024 * 1024;

struct Sink {
    json: bool,
    buf: Mutex<Vec<u8>>,
    /// Signalled when the buffer fills (to the writer) and when it drains (to waiting requests).
    fill: Condvar,
    drained: Condvar,
    closed: AtomicBool,
}

static SINK: OnceLock<Arc<Sink>> = OnceLock::new();

/// Flushes and stops the writer when dropped.
pub struct Guard(Option<(Arc<Sink>, std::thread::JoinHandle<()>)>);

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some((sink, writer)) = self.0.take() {
            sink.closed.store(true, Ordering::Release);
            sink.fill.notify_all();
            let _ = writer.join();
        }
    }
}

/// Send access lines to `out` from now on (`enabled` false: no access lines at all).
pub fn install(json: bool, enabled: bool, mut out: impl Write + Send + 'static) -> Guard {
    if !enabled {
        let sink = Sink::new(json);
        sink.closed.store(true, Ordering::Release);
        let _ = SINK.set(Arc::new(sink));
        return Guard(None);
    }
    let sink = Arc::new(Sink::new(json));
    if SINK.set(sink.clone()).is_err() {
        return Guard(None);
    }
    let s = sink.clone();
    let writer = std::thread::Builder::new()
        .name("access-log".into())
        .spawn(move || {
            let mut spare = Vec::with_capacity(WAKE_AT);
            loop {
                let closed = s.closed.load(Ordering::Acquire);
                {
                    let mut buf = s.buf.lock().unwrap_or_else(|e| e.into_inner());
                    if buf.len() < WAKE_AT && !closed {
                        buf = s.fill.wait_timeout(buf, FLUSH_EVERY).unwrap_or_else(|e| e.into_inner()).0;
                    }
                    std::mem::swap(&mut *buf, &mut spare);
                }
                s.drained.notify_all();
                if !spare.is_empty() {
                    let _ = out.write_all(&spare).and_then(|_| out.flush());
                    spare.clear();
                }
                if closed {
                    return;
                }
            }
        })
        .expect("access-log thread");
    Guard(Some((sink, writer)))
}

impl Sink {
    fn new(json: bool) -> Self {
        Sink { json, buf: Mutex::new(Vec::new()), fill: Condvar::new(), drained: Condvar::new(), closed: AtomicBool::new(false) }
    }
}

pub fn record(request_id: &str, method: &str, route: &str, status: u16, took: Duration) {
    let Some(sink) = SINK.get() else {
        let ms = took.as_secs_f64() * 1000.0;
        tracing::info!(target: TARGET, request_id, method, route, status, duration_ms = ms);
        return;
    };
    if sink.closed.load(Ordering::Relaxed) {
        return;
    }
    let mut buf = sink.buf.lock().unwrap_or_else(|e| e.into_inner());
    while buf.len() >= MAX {
        buf = sink.drained.wait(buf).unwrap_or_else(|e| e.into_inner());
    }
    // Milliseconds with microsecond precision, from integers, and no formatting machinery: this
    // runs on every request.
    let us = took.as_micros().min(u64::MAX as u128) as u64;
    let line = &mut *buf;
    if sink.json {
        line.extend_from_slice(br#"{"timestamp":""#);
        timestamp(line);
        line.extend_from_slice(br#"","level":"INFO","fields":{"request_id":"#);
        json_str(line, request_id);
        line.extend_from_slice(br#","method":"#);
        json_str(line, method);
        line.extend_from_slice(br#","route":"#);
        json_str(line, route);
        line.extend_from_slice(br#","status":"#);
        push_u64(line, status.into());
        line.extend_from_slice(br#","duration_ms":"#);
        push_ms(line, us);
        line.extend_from_slice(br#"},"target":""#);
        line.extend_from_slice(TARGET.as_bytes());
        line.extend_from_slice(b"\"}\n");
    } else {
        timestamp(line);
        line.extend_from_slice(b"  INFO ");
        line.extend_from_slice(TARGET.as_bytes());
        line.extend_from_slice(b": request_id=");
        line.extend_from_slice(request_id.as_bytes());
        line.extend_from_slice(b" method=");
        line.extend_from_slice(method.as_bytes());
        line.extend_from_slice(b" route=\"");
        line.extend_from_slice(route.as_bytes());
        line.extend_from_slice(b"\" status=");
        push_u64(line, status.into());
        line.extend_from_slice(b" duration_ms=");
        push_ms(line, us);
        line.push(b'\n');
    }
    if buf.len() >= WAKE_AT {
        sink.fill.notify_one();
    }
}

/// Decimal digits of `n`.
fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// The last `width` decimal digits of `n`, zero-padded.
fn push_padded(out: &mut Vec<u8>, n: u64, width: u32) {
    for p in (0..width).rev() {
        out.push(b'0' + (n / 10u64.pow(p) % 10) as u8);
    }
}

/// Microseconds as milliseconds with three decimals (`1.025`).
fn push_ms(out: &mut Vec<u8>, us: u64) {
    push_u64(out, us / 1000);
    out.push(b'.');
    push_padded(out, us % 1000, 3);
}

fn json_str(out: &mut Vec<u8>, s: &str) {
    let _ = serde_json::to_writer(&mut *out, s);
}

thread_local! {
    /// The formatted date and time of the last second seen on this thread.
    static SECOND: Cell<(u64, [u8; 19])> = const { Cell::new((u64::MAX, [0; 19])) };
}

/// `2026-11-21T10:00:00.123456Z`, as the other log lines carry.
fn timestamp(out: &mut Vec<u8>) {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let (secs, mut prefix) = SECOND.get();
    if secs != now.as_secs() {
        prefix.copy_from_slice(&platform_core::time::format_ts(now.as_secs() as i64).as_bytes()[..19]);
        SECOND.set((now.as_secs(), prefix));
    }
    out.extend_from_slice(&prefix);
    out.push(b'.');
    push_padded(out, now.subsec_micros().into(), 6);
    out.push(b'Z');
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_are_written_as_decimals() {
        let mut out = Vec::new();
        super::push_u64(&mut out, 0);
        out.push(b' ');
        super::push_u64(&mut out, 18_446_744_073_709_551_615);
        out.push(b' ');
        super::push_ms(&mut out, 1_025);
        out.push(b' ');
        super::push_ms(&mut out, 7);
        assert_eq!(String::from_utf8(out).unwrap(), "0 18446744073709551615 1.025 0.007");
    }

    #[test]
    fn timestamps_have_microseconds() {
        let mut t = Vec::new();
        super::timestamp(&mut t);
        let t = String::from_utf8(t).unwrap();
        assert_eq!(t.len(), 27, "{t}");
        assert!(t.ends_with('Z') && t.as_bytes()[19] == b'.');
    }
}
