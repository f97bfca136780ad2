//! The caller's address behind load balancers: `X-Forwarded-For` is believed only as far as the
//! proxies the operator names wrote it.
//!
//! Each proxy appends the address it saw, so the list reads client-written entries first and
//! trusted hops last. Walking it from the right, past every trusted proxy, the first entry no
//! trusted proxy could have written is the caller (as nginx's `real_ip_recursive` and
//! Rails' `trusted_proxies` decide). Taking the first entry instead would let any client pick
//! its own address, and with it its rate limit and lockout bucket.
use std::net::IpAddr;

use ipnet::IpNet;

/// The proxies (addresses or CIDR ranges) whose `X-Forwarded-For` is believed; empty: none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// Comma- or space-separated addresses and ranges (`10.0.0.0/8, 127.0.0.1, ::1`).
    pub fn parse(list: &str) -> Result<TrustedProxies, String> {
        let nets = list
            .split([',', ' '])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse::<IpNet>()
                    .or_else(|_| s.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| format!("not an address or CIDR range: {s:?}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(TrustedProxies(nets))
    }

    /// Whether `ip` is one of the proxies.
    pub fn trusts(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.0.iter().any(|n| n.contains(&ip))
    }

    /// The caller's address: the connection's peer unless that peer is a trusted proxy, then the
    /// right-most `X-Forwarded-For` entry that is not one (or the last trusted hop when every entry
    /// is, or an entry is not an address).
    pub fn client_ip(&self, peer: IpAddr, forwarded_for: Option<&str>) -> IpAddr {
        let (Some(list), true) = (forwarded_for, self.trusts(peer)) else { return peer };
        let mut caller = peer;
        for entry in list.rsplit(',') {
            match entry.trim().parse::<IpAddr>() {
                Ok(ip) if self.trusts(ip) => caller = ip,
                Ok(ip) => return ip,
                Err(_) => break,
            }
        }
        caller
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn only_what_trusted_proxies_wrote_is_believed() {
        let none = TrustedProxies::default();
        assert_eq!(none.client_ip(ip("127.0.0.1"), Some("1.2.3.4")), ip("127.0.0.1"));
        let lb = TrustedProxies::parse("127.0.0.1, 10.0.0.0/8").unwrap();
        // A client talking to the node directly cannot name itself.
        assert_eq!(lb.client_ip(ip("192.0.2.7"), Some("1.2.3.4")), ip("192.0.2.7"));
        // Behind the balancer: the client's own header comes first, the balancer's entry last.
        assert_eq!(lb.client_ip(ip("127.0.0.1"), Some("1.2.3.4, 198.51.100.9")), ip("198.51.100.9"));
        // Two trusted hops.
        assert_eq!(lb.client_ip(ip("127.0.0.1"), Some("6.6.6.6, 198.51.100.9, 10.1.2.3")), ip("198.51.100.9"));
        assert_eq!(lb.client_ip(ip("::ffff:127.0.0.1"), Some("2001:db8::1")), ip("2001:db8::1"));
        // Nothing usable: the last trusted hop.
        assert_eq!(lb.client_ip(ip("127.0.0.1"), Some("10.9.9.9")), ip("10.9.9.9"));
        assert_eq!(lb.client_ip(ip("127.0.0.1"), Some("junk, 10.9.9.9")), ip("10.9.9.9"));
        assert_eq!(lb.client_ip(ip("127.0.0.1"), None), ip("127.0.0.1"));
    }

    #[test]
    fn lists_parse_or_say_what_is_wrong() {
        assert_eq!(TrustedProxies::parse(" ").unwrap(), TrustedProxies::default());
        assert_eq!(TrustedProxies::parse("::1 fd00::/8").unwrap().0.len(), 2);
        assert!(TrustedProxies::parse("10.0.0.0/8,nope").unwrap_err().contains("\"nope\""));
    }
}
