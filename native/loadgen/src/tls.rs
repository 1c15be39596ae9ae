//! TLS for `https://` targets (rustls with the ring provider, on tokio).
//!
//! One client configuration per run, shared by every connection, so a session
//! ticket one connection got can resume another's handshake (when resumption is
//! on). io_uring keeps serving plain HTTP only; TLS connections run on the
//! epoll (tokio) path, where rustls drives the records.

use std::io;
use std::net::TcpStream as StdTcpStream;
use std::sync::Arc;
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::crypto::{ring, verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

/// The system's CA bundle (Debian's ca-certificates), used when no CA file is given.
pub const SYSTEM_CA_FILE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// TLS options as the caller gives them.
#[derive(Debug, Clone, Default)]
pub struct TlsOptions {
    /// Accept any server certificate (self-signed test servers).
    pub insecure: bool,
    /// PEM file of the CAs to trust (default: the system's bundle).
    pub ca_file: Option<String>,
    /// Resume sessions (tickets / PSK) on new connections.
    pub resume: bool,
    /// "1.2", "1.3" or None (both, 1.3 preferred).
    pub version: Option<String>,
    /// Server name to send (SNI) and check, instead of the URL's host.
    pub sni: Option<String>,
}

/// What every TLS connection of a run uses.
#[derive(Clone)]
pub struct Tls {
    pub connector: tokio_rustls::TlsConnector,
    pub config: Arc<ClientConfig>,
    pub server_name: ServerName<'static>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tls({:?})", self.server_name)
    }
}

/// Accepts any certificate but still checks the handshake's signatures, so the
/// cost of a handshake is the real one (`--insecure`).
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

fn roots(ca_file: &str) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(ca_file)
        .map_err(|e| format!("cannot read CA file '{ca_file}': {e}"))?;
    for cert in certs {
        let cert = cert.map_err(|e| format!("bad certificate in CA file '{ca_file}': {e}"))?;
        store
            .add(cert)
            .map_err(|e| format!("bad certificate in CA file '{ca_file}': {e}"))?;
    }
    if store.is_empty() {
        return Err(format!("CA file '{ca_file}' holds no certificate"));
    }
    Ok(store)
}

impl Tls {
    /// Build the run's client configuration; `host` is the URL's host.
    /// `alpn`: protocols to offer (empty: no ALPN, plain HTTP/1.1).
    pub fn new(o: &TlsOptions, host: &str, alpn: &[&[u8]]) -> Result<Tls, String> {
        let provider = Arc::new(ring::default_provider());
        let versions: &[&'static rustls::SupportedProtocolVersion] = match o.version.as_deref() {
            None => rustls::DEFAULT_VERSIONS,
            Some("1.2") => &[&rustls::version::TLS12],
            Some("1.3") => &[&rustls::version::TLS13],
            Some(v) => return Err(format!("TLS version must be 1.2 or 1.3 (got '{v}')")),
        };
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(versions)
            .map_err(|e| format!("TLS set-up failed: {e}"))?;
        let mut config = if o.insecure {
            if o.ca_file.is_some() {
                return Err("give a CA file or --insecure, not both".into());
            }
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
                .with_no_client_auth()
        } else {
            let file = o.ca_file.as_deref().unwrap_or(SYSTEM_CA_FILE);
            builder
                .with_root_certificates(roots(file)?)
                .with_no_client_auth()
        };
        config.resumption = if o.resume {
            Resumption::default()
        } else {
            Resumption::disabled()
        };
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        let name = o.sni.as_deref().unwrap_or(host).to_string();
        let server_name = ServerName::try_from(name.clone())
            .map_err(|_| format!("bad TLS server name '{name}'"))?;
        let config = Arc::new(config);
        Ok(Tls {
            connector: tokio_rustls::TlsConnector::from(config.clone()),
            config,
            server_name,
        })
    }

    /// Handshake on an already connected blocking socket (the preflight): a
    /// certificate or protocol problem becomes one clear message before the run.
    /// Returns the ALPN protocol the server chose.
    pub fn check(
        &self,
        tcp: &mut StdTcpStream,
        limit: Duration,
    ) -> Result<Option<Vec<u8>>, String> {
        let mut conn = ClientConnection::new(self.config.clone(), self.server_name.clone())
            .map_err(|e| e.to_string())?;
        let _ = tcp.set_read_timeout(Some(limit));
        let _ = tcp.set_write_timeout(Some(limit));
        while conn.is_handshaking() {
            conn.complete_io(tcp).map_err(|e| describe(&e))?;
        }
        Ok(conn.alpn_protocol().map(<[u8]>::to_vec))
    }
}

fn describe(e: &io::Error) -> String {
    match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        Some(tls) => tls.to_string(),
        None => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_bad_options() {
        let o = TlsOptions {
            version: Some("1.1".into()),
            insecure: true,
            ..Default::default()
        };
        assert!(Tls::new(&o, "h", &[]).unwrap_err().contains("1.2 or 1.3"));
        let o = TlsOptions {
            insecure: true,
            ca_file: Some("/x".into()),
            ..Default::default()
        };
        assert!(Tls::new(&o, "h", &[]).unwrap_err().contains("not both"));
        let o = TlsOptions {
            ca_file: Some("/nonexistent/ca.pem".into()),
            ..Default::default()
        };
        assert!(Tls::new(&o, "h", &[])
            .unwrap_err()
            .contains("cannot read CA file"));
    }
}
