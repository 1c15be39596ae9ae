//! Target URLs: `http[s]://host[:port][/path][?query]`, parsed once before a run.
//!
//! Anything else is refused with a message that names the problem, so a typo
//! never turns into a run full of errors.

use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs};

/// A parsed `http://` or `https://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `https://`: speak TLS.
    pub tls: bool,
    /// Host as written (a name, an IPv4 address, or `[v6]` without brackets).
    pub host: String,
    pub port: u16,
    /// Value for the `Host` header (`host`, or `host:port` when not the scheme's default).
    pub authority: String,
    /// Path plus query, always starting with `/`.
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlError(pub String);

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn bad(url: &str, why: &str) -> UrlError {
    UrlError(format!("malformed URL '{url}': {why}"))
}

impl Target {
    pub fn parse(url: &str) -> Result<Target, UrlError> {
        let trimmed = url.trim();
        let (tls, rest) = match trimmed.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => (false, rest),
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("https") => (true, rest),
            _ => return Err(bad(url, "expected http[s]://host[:port]/path")),
        };
        let default_port = if tls { 443 } else { 80 };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
            Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
            None => (rest, "/".to_string()),
        };
        let path = match path.split_once('#') {
            Some((p, _)) => p.to_string(),
            None => path,
        };
        if path.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err(bad(url, "the path contains spaces or control characters"));
        }
        if authority.contains('@') {
            return Err(bad(url, "user:password@ is not supported"));
        }
        let (host, port) =
            split_host_port(authority, default_port).ok_or_else(|| bad(url, "bad host or port"))?;
        if host.is_empty() {
            return Err(bad(url, "no host"));
        }
        let authority_header = if port == default_port {
            authority
                .trim_end_matches(&format!(":{default_port}"))
                .to_string()
        } else {
            authority.to_string()
        };
        Ok(Target {
            tls,
            host,
            port,
            authority: authority_header,
            path,
        })
    }

    /// Resolve the host, preferring IPv4 (what a load test on loopback expects).
    pub fn resolve(&self) -> Result<SocketAddr, String> {
        let addrs: Vec<SocketAddr> = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve host '{}': {e}", self.host))?
            .collect();
        addrs
            .iter()
            .find(|a| a.is_ipv4())
            .or_else(|| addrs.first())
            .copied()
            .ok_or_else(|| format!("host '{}' has no address", self.host))
    }
}

fn split_host_port(authority: &str, default_port: u16) -> Option<(String, u16)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after {
            "" => default_port,
            p => p.strip_prefix(':')?.parse().ok()?,
        };
        return Some((host.to_string(), port));
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => {
            if host.contains(':') {
                return None;
            }
            let port: u16 = port.parse().ok()?;
            if port == 0 {
                return None;
            }
            Some((host.to_string(), port))
        }
        None => Some((authority.to_string(), default_port)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_host_port_path() {
        let t = Target::parse("http://127.0.0.1:8080/a/b?x=1").unwrap();
        assert_eq!(t.host, "127.0.0.1");
        assert_eq!(t.port, 8080);
        assert_eq!(t.authority, "127.0.0.1:8080");
        assert_eq!(t.path, "/a/b?x=1");
    }

    #[test]
    fn defaults_port_and_path() {
        let t = Target::parse("http://localhost").unwrap();
        assert_eq!(
            (t.port, t.path.as_str(), t.authority.as_str()),
            (80, "/", "localhost")
        );
        let t = Target::parse("http://localhost?q=1").unwrap();
        assert_eq!(t.path, "/?q=1");
        let t = Target::parse("http://[::1]:9000/x#frag").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("::1", 9000, "/x")
        );
    }

    #[test]
    fn https_defaults_to_443() {
        let t = Target::parse("HTTPS://example.org/x").unwrap();
        assert_eq!(
            (t.tls, t.port, t.authority.as_str()),
            (true, 443, "example.org")
        );
        let t = Target::parse("https://127.0.0.1:8443/").unwrap();
        assert_eq!((t.tls, t.authority.as_str()), (true, "127.0.0.1:8443"));
        assert!(!Target::parse("http://h/").unwrap().tls);
    }

    #[test]
    fn refuses_malformed() {
        for url in [
            "not a url",
            "127.0.0.1:8080/",
            "ftp://x/",
            "https://",
            "http://:80/",
            "http://host:99999/",
            "http://host:port/",
            "http://host:0/",
            "http://h/a b",
        ] {
            assert!(Target::parse(url).is_err(), "{url} should be refused");
        }
    }
}
