//! What the engine's tests share: run options and the request reading of their small
//! real HTTP servers (compiled for tests only).

use std::io::Read;
use std::net::TcpStream;

use crate::config::Options;

/// Closed-loop keep-alive GETs of `url`: 10 connections on 3 threads, 1001 requests.
pub fn options(url: &str) -> Options {
    Options {
        url: url.into(),
        connections: 10,
        threads: Some(3),
        requests: Some(1001),
        duration: None,
        keepalive: true,
        timeout: 5.0,
        method: "GET".into(),
        headers: vec![],
        body: vec![],
        rate: None,
        scenario_json: None,
        tls: Default::default(),
        http2: false,
        streams: 1,
        max_failures: None,
        min_duration: None,
    }
}

/// The next request head on `s` (bytes already read wait in `buf`), removed from
/// `buf`; None once the peer has closed or failed.
pub fn read_head(s: &mut TcpStream, buf: &mut Vec<u8>) -> Option<String> {
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_string();
    buf.drain(..end);
    Some(head)
}
