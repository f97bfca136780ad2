//! HTTPS for `serve`: the rustls configuration from the configured PEM files, or from a
//! certificate generated at start (`--tls-self-signed FILE`) that clients are told to trust.
use std::net::SocketAddr;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::ServerConfig;

use crate::config::Config;

/// What `serve` serves TLS with.
pub struct Tls {
    pub config: Arc<ServerConfig>,
    /// The generated certificate's file, when self-signed.
    pub self_signed: Option<String>,
}

/// The TLS configuration the settings ask for (`None`: plain HTTP). Unreadable or mismatched
/// files are an error naming the file, never a panic.
pub fn configure(c: &Config, listening: SocketAddr) -> Result<Option<Tls>, String> {
    if let Some(path) = &c.tls_self_signed {
        let (pem, cert, key) = self_signed(&names(c, listening))?;
        std::fs::write(path, pem).map_err(|e| format!("tls_self_signed: {path}: {e}"))?;
        return Ok(Some(Tls { config: server_config(vec![cert], key)?, self_signed: Some(path.clone()) }));
    }
    let (Some(cert_path), Some(key_path)) = (&c.tls_cert, &c.tls_key) else { return Ok(None) };
    let certs = CertificateDer::pem_file_iter(cert_path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("tls_cert: {cert_path}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("tls_cert: {cert_path}: no PEM certificate in the file"));
    }
    let key = PrivateKeyDer::from_pem_file(key_path).map_err(|e| format!("tls_key: {key_path}: {e}"))?;
    let config = server_config(certs, key).map_err(|e| format!("tls_cert {cert_path} with tls_key {key_path}: {e}"))?;
    Ok(Some(Tls { config, self_signed: None }))
}

/// HTTP/1.1 only (the listener serves no h2), ring as the provider (what reqwest builds already).
fn server_config(certs: Vec<CertificateDer<'static>>, key: PrivateKeyDer<'static>) -> Result<Arc<ServerConfig>, String> {
    let mut config = ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| e.to_string())?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The names a local client reaches this server by: loopback in both families, `localhost`, the
/// listening address when it is a specific one, and the public URL's host.
fn names(c: &Config, listening: SocketAddr) -> Vec<String> {
    let mut names = vec!["127.0.0.1".to_string(), "::1".to_string(), "localhost".to_string()];
    if !listening.ip().is_unspecified() {
        names.push(listening.ip().to_string());
    }
    if let Some(host) = c.public_url.as_deref().and_then(url_host) {
        names.push(host.to_string());
    }
    names.sort();
    names.dedup();
    names
}

/// `https://[::1]:8443/api/v3` → `::1`; `https://api.local/x` → `api.local`.
fn url_host(url: &str) -> Option<&str> {
    let authority = url.split_once("://")?.1.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?,
        None => authority.split(':').next()?,
    };
    (!host.is_empty()).then_some(host)
}

/// A certificate for `names` signed by its own key: its PEM, DER and key.
fn self_signed(names: &[String]) -> Result<(String, CertificateDer<'static>, PrivateKeyDer<'static>), String> {
    let key = rcgen::KeyPair::generate().map_err(|e| format!("tls_self_signed: {e}"))?;
    let mut params = rcgen::CertificateParams::new(names.to_vec()).map_err(|e| format!("tls_self_signed: {e}"))?;
    params.distinguished_name.push(rcgen::DnType::CommonName, "platformd self-signed");
    let cert = params.self_signed(&key).map_err(|e| format!("tls_self_signed: {e}"))?;
    Ok((cert.pem(), cert.der().clone(), PrivatePkcs8KeyDer::from(key.serialize_der()).into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_of_public_urls() {
        assert_eq!(url_host("https://[::1]:8443/api/v3"), Some("::1"));
        assert_eq!(url_host("https://api.local/x"), Some("api.local"));
        assert_eq!(url_host("http://u:p@10.0.0.2:80"), Some("10.0.0.2"));
        assert_eq!(url_host("https://"), None);
    }

    #[test]
    fn a_self_signed_certificate_parses_back() {
        let (pem, cert, key) = self_signed(&["127.0.0.1".into(), "localhost".into()]).unwrap();
        let back: Vec<_> = CertificateDer::pem_slice_iter(pem.as_bytes()).collect::<Result<_, _>>().unwrap();
        assert_eq!(back, vec![cert.clone()]);
        server_config(back, key).unwrap();
    }
}
