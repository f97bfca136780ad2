//! The PROXY protocol (versions 1 and 2, as HAProxy specifies them): a load balancer that
//! forwards TCP connections (a layer-4 balancer: HAProxy in `mode tcp`, cloud network balancers)
//! opens each one with a header naming the client's address, since it cannot add
//! `X-Forwarded-For` to requests it does not parse. Forwarding bytes costs a balancer a fraction
//! of parsing every request.
//!
//! The header is read before anything else on the connection (before a TLS handshake), exactly
//! as long as it is, so what follows is untouched. Only connections from trusted proxies are
//! looked at, and there a header is optional (the balancer's own requests, a health check or an
//! operator on its host, carry none: as `go-proxyproto`'s default `USE` policy and Caddy's
//! listener decide); a request never opens with either signature. The address a header names is
//! then the caller's, and
//! `X-Forwarded-For` is not read at all: a balancer that forwards bytes never wrote it, so
//! whatever it holds the client wrote.
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use tokio::io::{AsyncRead, AsyncReadExt};

/// Version 2's signature, the first 12 bytes of its header.
const V2_SIGNATURE: [u8; 12] = *b"\r\n\r\n\0\r\nQUIT\n";
/// A version 1 line is at most 107 bytes with its CRLF.
const V1_MAX: usize = 107;
/// The most a version 2 header may carry after its first 16 bytes (addresses and TLVs).
const V2_MAX_BODY: usize = 2048;

/// On a request whose connection's address a PROXY protocol header named (the caller's, final).
#[derive(Clone, Copy, Debug)]
pub struct NamedByBalancer;

/// The connection did not open with a valid header.
#[derive(Debug, PartialEq, Eq)]
pub struct Invalid(pub &'static str);

/// Whether a connection that opened with `first` bytes carries a header: `Some` once they
/// decide it (8 bytes do), `None` while they are a prefix of a signature.
pub fn opens_with_header(first: &[u8]) -> Option<bool> {
    let n = first.len().min(8);
    if first[..n] != V2_SIGNATURE[..n] && first[..n] != b"PROXY TC"[..n] && first[..n] != b"PROXY UN"[..n] {
        return Some(false);
    }
    (n == 8).then_some(true)
}

/// Reads the header that opens `stream`. `Ok(Some(addr))`: the client's address as the
/// balancer saw it; `Ok(None)`: the balancer's own connection (a health check: version 2
/// `LOCAL`) or one it could not name (`UNKNOWN`, another family), which stays the peer's.
pub async fn read_header<S: AsyncRead + Unpin>(stream: &mut S) -> Result<Option<SocketAddr>, Invalid> {
    let mut start = [0u8; 16];
    read(stream, &mut start[..8]).await?;
    if start[..8] == V2_SIGNATURE[..8] {
        read(stream, &mut start[8..]).await?;
        if start[..12] != V2_SIGNATURE {
            return Err(Invalid("not a PROXY protocol header"));
        }
        let len = u16::from_be_bytes([start[14], start[15]]) as usize;
        if len > V2_MAX_BODY {
            return Err(Invalid("PROXY protocol header too long"));
        }
        let mut body = vec![0u8; len];
        read(stream, &mut body).await?;
        return v2(start[12], start[13], &body);
    }
    if &start[..6] != b"PROXY " {
        return Err(Invalid("not a PROXY protocol header"));
    }
    // Byte by byte to the CRLF, so nothing after the line is consumed (once per connection).
    let mut line = start[..8].to_vec();
    while !line.ends_with(b"\r\n") {
        if line.len() >= V1_MAX {
            return Err(Invalid("PROXY protocol line too long"));
        }
        let mut b = [0u8; 1];
        read(stream, &mut b).await?;
        line.push(b[0]);
    }
    v1(&line[..line.len() - 2])
}

async fn read<S: AsyncRead + Unpin>(stream: &mut S, buf: &mut [u8]) -> Result<(), Invalid> {
    stream.read_exact(buf).await.map(drop).map_err(|_| Invalid("connection closed in the PROXY protocol header"))
}

/// `PROXY TCP4 <src> <dst> <sport> <dport>` (or `TCP6`), or `PROXY UNKNOWN …`.
fn v1(line: &[u8]) -> Result<Option<SocketAddr>, Invalid> {
    let line = std::str::from_utf8(line).map_err(|_| Invalid("PROXY protocol line is not text"))?;
    let mut parts = line.split(' ');
    let (Some("PROXY"), Some(family)) = (parts.next(), parts.next()) else { return Err(Invalid("malformed PROXY protocol line")) };
    if family == "UNKNOWN" {
        return Ok(None);
    }
    let fields: Vec<&str> = parts.collect();
    let [src, _dst, sport, _dport] = fields[..] else { return Err(Invalid("malformed PROXY protocol line")) };
    let ip: IpAddr = match family {
        "TCP4" => src.parse::<Ipv4Addr>().map(IpAddr::V4),
        "TCP6" => src.parse::<Ipv6Addr>().map(IpAddr::V6),
        _ => return Err(Invalid("malformed PROXY protocol line")),
    }
    .map_err(|_| Invalid("malformed PROXY protocol address"))?;
    let port = sport.parse::<u16>().map_err(|_| Invalid("malformed PROXY protocol port"))?;
    Ok(Some(SocketAddr::new(ip, port)))
}

/// Version 2's command (`LOCAL` 0x20, `PROXY` 0x21) and family, and the address block.
fn v2(version_command: u8, family: u8, body: &[u8]) -> Result<Option<SocketAddr>, Invalid> {
    match version_command {
        0x20 => return Ok(None),
        0x21 => {}
        _ => return Err(Invalid("unsupported PROXY protocol version or command")),
    }
    match family {
        // TCP over IPv4: source, destination, source port, destination port.
        0x11 if body.len() >= 12 => {
            let ip = Ipv4Addr::new(body[0], body[1], body[2], body[3]);
            Ok(Some(SocketAddr::new(IpAddr::V4(ip), u16::from_be_bytes([body[8], body[9]]))))
        }
        0x21 if body.len() >= 36 => {
            let octets: [u8; 16] = body[..16].try_into().expect("16 bytes");
            Ok(Some(SocketAddr::new(IpAddr::V6(Ipv6Addr::from(octets)), u16::from_be_bytes([body[32], body[33]]))))
        }
        0x11 | 0x21 => Err(Invalid("PROXY protocol address block too short")),
        // UNSPEC, UDP or unix sockets: nothing to name.
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn parse(bytes: &[u8]) -> (Result<Option<SocketAddr>, Invalid>, Vec<u8>) {
        let mut r = bytes;
        let got = read_header(&mut r).await;
        (got, r.to_vec())
    }

    #[test]
    fn a_header_is_told_from_a_request_by_its_first_bytes() {
        assert_eq!(opens_with_header(b"GET / HTTP/1.1\r\n"), Some(false));
        assert_eq!(opens_with_header(b"\x16\x03\x01"), Some(false));
        assert_eq!(opens_with_header(b"PROXY TCP4 1.2.3.4"), Some(true));
        assert_eq!(opens_with_header(&V2_SIGNATURE), Some(true));
        assert_eq!(opens_with_header(b"PROX"), None);
        assert_eq!(opens_with_header(b"\r\n\r"), None);
        assert_eq!(opens_with_header(b"PROXX"), Some(false));
    }

    #[tokio::test]
    async fn version_1_lines_and_what_follows_them() {
        let (got, rest) = parse(b"PROXY TCP4 192.0.2.7 10.0.0.1 51234 443\r\nGET / HTTP/1.1\r\n").await;
        assert_eq!(got, Ok(Some("192.0.2.7:51234".parse().unwrap())));
        assert_eq!(rest, b"GET / HTTP/1.1\r\n");
        let (got, _) = parse(b"PROXY TCP6 2001:db8::1 ::1 9 80\r\n").await;
        assert_eq!(got, Ok(Some("[2001:db8::1]:9".parse().unwrap())));
        assert_eq!(parse(b"PROXY UNKNOWN\r\nX").await, (Ok(None), b"X".to_vec()));
        assert!(parse(b"GET / HTTP/1.1\r\n\r\n").await.0.is_err());
        assert!(parse(b"PROXY TCP4 not-an-ip 10.0.0.1 1 2\r\n").await.0.is_err());
        assert!(parse(format!("PROXY TCP4 {}\r\n", "1".repeat(200)).as_bytes()).await.0.is_err());
        assert!(parse(b"PROXY TCP4 192.0.2.7").await.0.is_err());
    }

    fn v2_header(command: u8, family: u8, body: &[u8]) -> Vec<u8> {
        let mut h = V2_SIGNATURE.to_vec();
        h.extend([command, family]);
        h.extend((body.len() as u16).to_be_bytes());
        h.extend(body);
        h
    }

    #[tokio::test]
    async fn version_2_headers_and_what_follows_them() {
        let mut body = vec![192, 0, 2, 7, 10, 0, 0, 1];
        body.extend(51234u16.to_be_bytes());
        body.extend(443u16.to_be_bytes());
        body.extend([0x04, 0, 1, 0]); // a TLV (NOOP) is skipped with the rest of the block
        let mut bytes = v2_header(0x21, 0x11, &body);
        bytes.extend(b"\x16\x03\x01");
        assert_eq!(parse(&bytes).await, (Ok(Some("192.0.2.7:51234".parse().unwrap())), b"\x16\x03\x01".to_vec()));
        let mut six = [0u8; 36];
        six[..16].copy_from_slice(&"2001:db8::5".parse::<Ipv6Addr>().unwrap().octets());
        six[32..34].copy_from_slice(&7u16.to_be_bytes());
        assert_eq!(parse(&v2_header(0x21, 0x21, &six)).await.0, Ok(Some("[2001:db8::5]:7".parse().unwrap())));
        // The balancer's health check names no client.
        assert_eq!(parse(&v2_header(0x20, 0x00, &[])).await.0, Ok(None));
        assert!(parse(&v2_header(0x21, 0x11, &[1, 2, 3])).await.0.is_err());
        assert!(parse(&v2_header(0x31, 0x11, &body)).await.0.is_err());
        let mut long = V2_SIGNATURE.to_vec();
        long.extend([0x21, 0x11, 0xff, 0xff]);
        assert!(parse(&long).await.0.is_err());
    }
}
