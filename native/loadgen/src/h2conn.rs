//! HTTP/2 (the `h2` crate): h2 over TLS (ALPN "h2") or h2c with prior knowledge.
//!
//! Each connection carries `streams` requests at once, as h2load does: one
//! task per stream loops send -> full answer -> record, all over one shared
//! connection. A broken connection ends every stream's request on it as a
//! failure and is opened again; the handshake counts with the first answer
//! on the new connection.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Instant;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Uri};
use tokio::net::TcpStream;

use crate::conn::{Answer, Handshake};
use crate::stats::Failure;
use crate::worker::{Shared, Timer};

/// The run's one request, in HTTP/2's terms.
#[derive(Debug, Clone)]
pub struct H2Request {
    pub method: Method,
    pub uri: Uri,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// Concurrent streams per connection.
    pub streams: usize,
}

/// Headers HTTP/2 forbids or carries otherwise (`:authority` replaces Host).
const CONNECTION_HEADERS: [&str; 6] = [
    "host",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

impl H2Request {
    pub fn new(
        tls: bool,
        authority: &str,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        body: &[u8],
        streams: usize,
    ) -> Result<H2Request, String> {
        if streams == 0 || streams > 10_000 {
            return Err(format!("streams must be 1 to 10000 (got {streams})"));
        }
        let method = Method::from_bytes(method.as_bytes())
            .map_err(|_| format!("bad HTTP method '{method}'"))?;
        let scheme = if tls { "https" } else { "http" };
        let uri: Uri = format!("{scheme}://{authority}{path}")
            .parse()
            .map_err(|e| format!("bad URL for HTTP/2: {e}"))?;
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            let name = HeaderName::from_bytes(k.to_ascii_lowercase().as_bytes())
                .map_err(|_| format!("bad header name '{k}'"))?;
            if CONNECTION_HEADERS.contains(&name.as_str()) {
                continue;
            }
            let value =
                HeaderValue::from_str(v).map_err(|_| format!("bad value of header '{k}'"))?;
            map.append(name, value);
        }
        if !map.contains_key(http::header::USER_AGENT) {
            map.insert(
                http::header::USER_AGENT,
                HeaderValue::from_static(crate::http1::USER_AGENT),
            );
        }
        Ok(H2Request {
            method,
            uri,
            headers: map,
            body: Bytes::copy_from_slice(body),
            streams,
        })
    }

    fn build(&self) -> Request<()> {
        let mut req = Request::new(());
        *req.method_mut() = self.method.clone();
        *req.uri_mut() = self.uri.clone();
        *req.headers_mut() = self.headers.clone();
        req
    }
}

type Sender = h2::client::SendRequest<Bytes>;

/// Open one HTTP/2 connection (TCP, TLS with ALPN when https, h2 preface) and
/// start its driver task on this thread.
/// The handshake is None for h2c (no TLS).
async fn open(sh: &Shared) -> Result<(Sender, Option<Handshake>), Failure> {
    let began = Instant::now();
    let tcp = TcpStream::connect(sh.cfg.addr)
        .await
        .map_err(|_| Failure::Connect)?;
    let _ = tcp.set_nodelay(true);
    let mut builder = h2::client::Builder::new();
    builder
        .initial_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW);
    let (sender, resumed) = match &sh.cfg.tls {
        None => {
            let (s, conn) = builder.handshake(tcp).await.map_err(|_| Failure::Connect)?;
            tokio::task::spawn_local(async move {
                let _ = conn.await;
            });
            (s, None)
        }
        Some(tls) => {
            let io = tls
                .connector
                .connect(tls.server_name.clone(), tcp)
                .await
                .map_err(|_| Failure::Connect)?;
            let session = io.get_ref().1;
            if session.alpn_protocol() != Some(b"h2") {
                return Err(Failure::Connect);
            }
            let resumed = session.handshake_kind() == Some(rustls::HandshakeKind::Resumed);
            let (s, conn) = builder.handshake(io).await.map_err(|_| Failure::Connect)?;
            tokio::task::spawn_local(async move {
                let _ = conn.await;
            });
            (s, Some(resumed))
        }
    };
    let sender = sender.ready().await.map_err(|_| Failure::Connect)?;
    let handshake = resumed.map(|resumed| Handshake {
        time: began.elapsed(),
        resumed,
    });
    Ok((sender, handshake))
}

/// Open a stream for one request; None when the connection takes no more
/// streams (the server said GOAWAY, e.g. nginx after `keepalive_requests`, or
/// the connection broke): nothing was sent, so nothing failed.
/// The stream task's own handle is reused: a clone per request would take the
/// connection's lock twice more (h2 counts handles under it).
/// No `poll_ready` first (one lock of the connection fewer per request): it
/// only waits while this handle's previous request is still queued for a
/// stream slot (over the server's concurrent stream limit), and a stream task
/// sends its next request only once the previous one was answered.
fn send(sender: &mut Sender, req: &H2Request) -> Option<h2::client::ResponseFuture> {
    let no_body = req.body.is_empty();
    let (response, mut stream) = sender.send_request(req.build(), no_body).ok()?;
    if !no_body {
        stream.send_data(req.body.clone(), true).ok()?;
    }
    Some(response)
}

/// Receive windows announced to the server: per stream and per connection.
const STREAM_WINDOW: u32 = 1 << 20;
const CONNECTION_WINDOW: u32 = 1 << 24;

/// Received body bytes a stream gives back to the server's send windows at a
/// time: far below the stream window, and all streams together hold back at
/// most half the connection window, so no body ever waits for its own release.
fn release_step(streams: usize) -> usize {
    (CONNECTION_WINDOW as usize / (2 * streams.max(1))).min(64 * 1024)
}

/// Read one answer to its end.
/// `refused` is set when the server refused the stream unprocessed (GOAWAY
/// below its id, REFUSED_STREAM): the request may be sent again.
async fn answer(
    response: h2::client::ResponseFuture,
    server: Option<&mut Option<String>>,
    refused: &Cell<bool>,
    release_step: usize,
) -> Result<Answer, Failure> {
    let response = response.await.map_err(|e| {
        let unprocessed = e.reason() == Some(h2::Reason::REFUSED_STREAM)
            || (e.is_go_away() && e.reason() == Some(h2::Reason::NO_ERROR));
        refused.set(unprocessed);
        Failure::Read
    })?;
    let status = response.status().as_u16();
    if let Some(slot) = server {
        if slot.is_none() {
            *slot = Some(
                response
                    .headers()
                    .get("server")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string(),
            );
        }
    }
    let mut body = response.into_body();
    let mut body_bytes = 0u64;
    // Flow-control capacity is given back in large steps, not per DATA frame
    // (each release takes the connection's lock); h2 gives back the rest when
    // the stream ends.
    let mut unreleased = 0usize;
    while let Some(chunk) = body.data().await {
        let chunk = chunk.map_err(|_| Failure::Read)?;
        body_bytes += chunk.len() as u64;
        unreleased += chunk.len();
        if unreleased >= release_step {
            let _ = body.flow_control().release_capacity(unreleased);
            unreleased = 0;
        }
    }
    Ok(Answer {
        status,
        // HTTP/2 frames are decoded inside h2: the bytes counted are the bodies'.
        bytes: body_bytes,
        body_bytes,
        handshake: None,
    })
}

/// One connection of a closed-loop HTTP/2 run: `streams` requests in flight
/// until the budget, the deadline or a stop ends the run. A connection the
/// server ends (GOAWAY) or that breaks is opened again.
pub async fn closed_connection(sh: Rc<Shared>, probe: bool) {
    let req = sh.cfg.h2.clone().expect("an HTTP/2 run has its request");
    let probe = Rc::new(Cell::new(probe));
    loop {
        let start = Instant::now();
        if sh.over(start) {
            return;
        }
        let (sender, handshake) = match open(&sh).await {
            Ok(ok) => ok,
            Err(f) => {
                if !sh.take_ticket() {
                    return;
                }
                let r = Err(f);
                sh.record(&r, start, start.elapsed(), None);
                sh.backoff_after(&r).await;
                continue;
            }
        };
        let pending = Rc::new(Cell::new(handshake));
        let broken = Rc::new(Cell::new(false));
        let mut tasks = Vec::with_capacity(req.streams);
        for _ in 0..req.streams {
            let (sh, req, mut sender) = (sh.clone(), req.clone(), sender.clone());
            let (pending, broken, probe) = (pending.clone(), broken.clone(), probe.clone());
            tasks.push(tokio::task::spawn_local(async move {
                let mut timer = Timer::new(sh.cfg.timeout);
                let mut server: Option<String> = None;
                loop {
                    let start = Instant::now();
                    if broken.get() || sh.over(start) || !sh.take_ticket() {
                        return;
                    }
                    let Some(response) = send(&mut sender, &req) else {
                        sh.give_back_ticket();
                        broken.set(true);
                        return;
                    };
                    let probing = probe.get();
                    let mut unused = false;
                    let refused = Cell::new(false);
                    let mut result = timer
                        .run(
                            &mut unused,
                            start,
                            answer(
                                response,
                                probing.then_some(&mut server),
                                &refused,
                                release_step(req.streams),
                            ),
                        )
                        .await;
                    if refused.get() {
                        sh.give_back_ticket();
                        broken.set(true);
                        return;
                    }
                    if let Ok(a) = result.as_mut() {
                        a.handshake = pending.take();
                        if probing && (200..300).contains(&a.status) {
                            probe.set(false);
                            sh.note_info(server.take(), a.body_bytes);
                        }
                    }
                    sh.record(&result, start, start.elapsed(), None);
                    if matches!(result, Err(Failure::Read)) {
                        // The connection is gone: every stream stops, one reconnects.
                        broken.set(true);
                        return;
                    }
                }
            }));
        }
        drop(sender);
        for t in tasks {
            if let Err(e) = t.await {
                if e.is_panic() {
                    std::panic::resume_unwind(e.into_panic());
                }
            }
        }
        if !broken.get() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(headers: &[(&str, &str)]) -> H2Request {
        let headers: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        H2Request::new(true, "h:1", "GET", "/x", &headers, b"", 10).expect("a valid request")
    }

    #[test]
    fn requests_carry_the_engine_user_agent_unless_given_one() {
        assert_eq!(request(&[]).headers["user-agent"], "dbstand-loadgen");
        let own = request(&[("User-Agent", "mine"), ("Host", "h"), ("X-A", "1")]);
        assert_eq!(own.headers.get_all("user-agent").iter().count(), 1);
        assert_eq!(own.headers["user-agent"], "mine");
        assert!(
            own.headers.get("host").is_none(),
            "HTTP/2 carries :authority, not Host"
        );
        assert_eq!(own.headers["x-a"], "1");
    }

    #[test]
    fn release_steps_keep_all_streams_under_half_the_connection_window() {
        assert_eq!(release_step(10), 64 * 1024);
        for streams in [1, 10, 128, 1000, 10_000] {
            let step = release_step(streams);
            assert!(step > 0 && step <= 64 * 1024);
            assert!(step * streams <= CONNECTION_WINDOW as usize / 2);
        }
    }
}
