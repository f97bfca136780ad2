//! Outbound requests' guard, for every request the server makes on a caller's behalf (webhook
//! deliveries, source imports, configuration checks): targets resolving to internal addresses
//! (loopback, private, link-local, metadata ranges) are refused after DNS resolution, unless
//! allow-listed (`PLATFORM_WEBHOOK_ALLOWED_HOSTS`).
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// The parsed allow-list.
#[derive(Clone, Debug, Default)]
pub struct AllowList {
    hosts: Vec<String>,
    nets: Vec<(IpAddr, u8)>,
}

impl AllowList {
    pub fn parse(text: &str) -> Result<AllowList, String> {
        let mut a = AllowList::default();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if item.eq_ignore_ascii_case("loopback") {
                a.nets.push(("127.0.0.0".parse().unwrap(), 8));
                a.nets.push(("::1".parse().unwrap(), 128));
            } else if let Some((ip, bits)) = item.split_once('/') {
                let ip: IpAddr = ip.parse().map_err(|_| format!("webhook allow-list: bad CIDR {item:?}"))?;
                let bits: u8 = bits.parse().map_err(|_| format!("webhook allow-list: bad CIDR {item:?}"))?;
                let max = if ip.is_ipv4() { 32 } else { 128 };
                if bits > max {
                    return Err(format!("webhook allow-list: bad CIDR {item:?}"));
                }
                a.nets.push((ip, bits));
            } else if let Ok(ip) = item.parse::<IpAddr>() {
                a.nets.push((ip, if ip.is_ipv4() { 32 } else { 128 }));
            } else {
                a.hosts.push(item.to_ascii_lowercase());
            }
        }
        Ok(a)
    }

    pub fn host_allowed(&self, host: &str) -> bool {
        let h = host.trim_end_matches('.').to_ascii_lowercase();
        self.hosts.contains(&h)
    }

    /// May a delivery connect to `ip`? Public addresses yes; internal ones only when listed.
    pub fn ip_allowed(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        !is_internal(ip) || self.nets.iter().any(|(net, bits)| in_net(ip, *net, *bits))
    }
}

fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => ip,
        },
        v4 => v4,
    }
}

fn in_net(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (canonical(ip), canonical(net)) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits.min(32)) };
            (u32::from(a) & mask) == (u32::from(n) & mask)
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = if bits == 0 { 0 } else { u128::MAX << (128 - bits.min(128)) };
            (u128::from(a) & mask) == (u128::from(n) & mask)
        }
        _ => false,
    }
}

/// Loopback, private, shared, link-local (cloud metadata), unspecified, multicast, reserved.
pub fn is_internal(ip: IpAddr) -> bool {
    const V4: &[(&str, u8)] = &[
        ("0.0.0.0", 8),
        ("10.0.0.0", 8),
        ("100.64.0.0", 10),
        ("127.0.0.0", 8),
        ("169.254.0.0", 16),
        ("172.16.0.0", 12),
        ("192.0.0.0", 24),
        ("192.168.0.0", 16),
        ("198.18.0.0", 15),
        ("224.0.0.0", 4),
        ("240.0.0.0", 4),
    ];
    const V6: &[(&str, u8)] = &[("::", 128), ("::1", 128), ("fc00::", 7), ("fe80::", 10), ("ff00::", 8), ("64:ff9b::", 96)];
    let ip = canonical(ip);
    let table = if ip.is_ipv4() { V4 } else { V6 };
    table.iter().any(|(n, b)| in_net(ip, n.parse().unwrap(), *b))
}

/// The error a refused target produces (found in the request error's source chain).
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Refused {}

pub fn refusal(host: &str, ip: IpAddr) -> String {
    format!("refused: {host} resolves to {ip}, an internal address (allow it with PLATFORM_WEBHOOK_ALLOWED_HOSTS)")
}

/// Resolves names, then refuses internal addresses: the check runs on the addresses the
/// connection will use, for every attempt (no rebinding window).
pub struct GuardResolver {
    allow: Arc<AllowList>,
}

impl GuardResolver {
    pub fn new(allow: Arc<AllowList>) -> GuardResolver {
        GuardResolver { allow }
    }
}

impl reqwest::dns::Resolve for GuardResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow = self.allow.clone();
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !allow.host_allowed(&host) {
                if let Some(bad) = addrs.iter().find(|a| !allow.ip_allowed(a.ip())) {
                    return Err(Box::new(Refused(refusal(&host, bad.ip()))) as Box<dyn std::error::Error + Send + Sync>);
                }
            }
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The refusal in a request error's source chain, if the guard refused its target.
pub fn find_refused(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(r) = err.downcast_ref::<Refused>() {
            return Some(r.0.clone());
        }
        cur = err.source();
    }
    let text = format!("{e:?}");
    text.find("refused: ").map(|i| text[i..].split('"').next().unwrap_or("refused").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn guard() {
        let none = AllowList::parse("").unwrap();
        for ip in [
            "127.0.0.1",
            "10.0.0.1",
            "169.254.169.254",
            "192.168.1.1",
            "172.16.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "0.0.0.0",
        ] {
            assert!(!none.ip_allowed(ip.parse().unwrap()), "{ip}");
        }
        assert!(none.ip_allowed("93.184.216.34".parse().unwrap()));
        let lb = AllowList::parse("loopback, 10.1.0.0/16, hooks.internal").unwrap();
        assert!(lb.ip_allowed("127.0.0.5".parse().unwrap()));
        assert!(lb.ip_allowed("::1".parse().unwrap()));
        assert!(lb.ip_allowed("10.1.2.3".parse().unwrap()));
        assert!(!lb.ip_allowed("10.2.0.1".parse().unwrap()));
        assert!(lb.host_allowed("Hooks.Internal"));
        assert!(AllowList::parse("10.0.0.0/33").is_err());
    }
}
