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
    let line = Line { request_id, method, route, status, us: took.as_micros().min(u64::MAX as u128) as u64 };
    if sink.json {
        line.json(&mut buf);
    } else {
        line.text(&mut buf);
    }
    if buf.len() >= WAKE_AT {
        sink.fill.notify_one();
    }
}

/// One access line, written straight into the shared buffer in the format of the other log
/// lines: integers through `itoa` and no formatting machinery, as this runs on every request.
struct Line<'a> {
    request_id: &'a str,
    method: &'a str,
    route: &'a str,
    status: u16,
    /// Duration in microseconds, written as milliseconds with three decimals.
    us: u64,
}

impl Line<'_> {
    /// As tracing's JSON formatter writes an event.
    fn json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(br#"{"timestamp":""#);
        timestamp(out);
        out.extend_from_slice(br#"","level":"INFO","fields":{"request_id":"#);
        json_str(out, self.request_id);
        out.extend_from_slice(br#","method":"#);
        json_str(out, self.method);
        out.extend_from_slice(br#","route":"#);
        json_str(out, self.route);
        out.extend_from_slice(br#","status":"#);
        push_u64(out, self.status.into());
        out.extend_from_slice(br#","duration_ms":"#);
        push_ms(out, self.us);
        out.extend_from_slice(br#"},"target":""#);
        out.extend_from_slice(TARGET.as_bytes());
        out.extend_from_slice(b"\"}\n");
    }

    /// As tracing's text formatter writes an event.
    fn text(&self, out: &mut Vec<u8>) {
        timestamp(out);
        for (part, value) in
            [(&b"  INFO "[..], TARGET), (b": request_id=", self.request_id), (b" method=", self.method), (b" route=\"", self.route)]
        {
            out.extend_from_slice(part);
            out.extend_from_slice(value.as_bytes());
        }
        out.extend_from_slice(b"\" status=");
        push_u64(out, self.status.into());
        out.extend_from_slice(b" duration_ms=");
        push_ms(out, self.us);
        out.push(b'\n');
    }
}

fn push_u64(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
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
    fn lines_in_both_formats() {
        let line = super::Line { request_id: "AB\"C", method: "GET", route: "/repos/{owner}/{repo}", status: 304, us: 1_025 };
        let mut json = Vec::new();
        line.json(&mut json);
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(v["fields"]["request_id"], "AB\"C");
        assert_eq!(v["fields"]["route"], "/repos/{owner}/{repo}");
        assert_eq!(v["fields"]["status"], 304);
        assert_eq!(v["fields"]["duration_ms"], 1.025);
        assert_eq!(v["target"], super::TARGET);
        let mut text = Vec::new();
        line.text(&mut text);
        let text = String::from_utf8(text).unwrap();
        assert!(
            text.ends_with(
                "  INFO platformd::access: request_id=AB\"C method=GET route=\"/repos/{owner}/{repo}\" status=304 duration_ms=1.025\n"
            ),
            "{text}"
        );
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
