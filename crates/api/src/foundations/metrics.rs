//! Prometheus metrics: requests by route template and status, a latency histogram,
//! rate-limited requests, in-flight requests.
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

const BUCKETS_MS: [f64; 12] = [0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 5000.0];

#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(&'static str, &'static str, u16), u64>>,
    latency: [AtomicU64; BUCKETS_MS.len() + 1],
    latency_sum_us: AtomicU64,
    latency_count: AtomicU64,
    rate_limited: AtomicU64,
    in_flight: AtomicI64,
}

/// A request counted in flight until this is dropped — also when its future is (a client that
/// hangs up mid-request), so the gauge never leaks.
pub struct InFlight<'a>(&'a AtomicI64);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Metrics {
    /// Counts a request in flight for as long as the guard lives.
    pub fn enter(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(&self.in_flight)
    }

    /// Requests in flight now.
    pub fn in_flight(&self) -> i64 {
        self.in_flight.load(Ordering::Relaxed)
    }

    pub fn record(&self, method: &'static str, route: &'static str, status: u16, took: Duration, rate_limited: bool) {
        *self.requests.lock().unwrap_or_else(|e| e.into_inner()).entry((method, route, status)).or_insert(0) += 1;
        let ms = took.as_secs_f64() * 1000.0;
        let i = BUCKETS_MS.iter().position(|b| ms <= *b).unwrap_or(BUCKETS_MS.len());
        self.latency[i].fetch_add(1, Ordering::Relaxed);
        self.latency_sum_us.fetch_add(took.as_micros() as u64, Ordering::Relaxed);
        self.latency_count.fetch_add(1, Ordering::Relaxed);
        if rate_limited {
            self.rate_limited.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Prometheus text exposition. `gauges` are extra (name, help, value) triples such as queue depths.
    pub fn render(&self, gauges: &[(&str, &str, i64)]) -> String {
        let mut out = String::new();
        out.push_str("# HELP platform_http_requests_total Requests by route template and status.\n");
        out.push_str("# TYPE platform_http_requests_total counter\n");
        for ((method, route, status), n) in self.requests.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let _ = writeln!(out, "platform_http_requests_total{{method=\"{method}\",route=\"{route}\",status=\"{status}\"}} {n}");
        }
        out.push_str("# HELP platform_http_request_duration_seconds Request latency.\n");
        out.push_str("# TYPE platform_http_request_duration_seconds histogram\n");
        let mut cum = 0;
        for (i, b) in BUCKETS_MS.iter().enumerate() {
            cum += self.latency[i].load(Ordering::Relaxed);
            let _ = writeln!(out, "platform_http_request_duration_seconds_bucket{{le=\"{}\"}} {cum}", b / 1000.0);
        }
        cum += self.latency[BUCKETS_MS.len()].load(Ordering::Relaxed);
        let _ = writeln!(out, "platform_http_request_duration_seconds_bucket{{le=\"+Inf\"}} {cum}");
        let _ = writeln!(out, "platform_http_request_duration_seconds_sum {}", self.latency_sum_us.load(Ordering::Relaxed) as f64 / 1e6);
        let _ = writeln!(out, "platform_http_request_duration_seconds_count {}", self.latency_count.load(Ordering::Relaxed));
        out.push_str("# HELP platform_rate_limited_requests_total Requests refused by a rate limit.\n");
        out.push_str("# TYPE platform_rate_limited_requests_total counter\n");
        let _ = writeln!(out, "platform_rate_limited_requests_total {}", self.rate_limited.load(Ordering::Relaxed));
        let mut gauge = |name: &str, help: &str, v: i64| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}");
        };
        gauge("platform_http_requests_in_flight", "Requests being served.", self.in_flight.load(Ordering::Relaxed));
        for (name, help, v) in gauges {
            gauge(name, help, *v);
        }
        out
    }
}
