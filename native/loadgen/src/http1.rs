//! HTTP/1.1 wire format: request serialization and incremental response parsing.
//!
//! The parser works on whatever bytes have arrived so far and never allocates on
//! the hot path: heads are parsed with `httparse` into a stack array of headers,
//! bodies are framed by Content-Length, chunked transfer coding, or connection
//! close, and are only copied out when a scenario step needs to read them.

use std::fmt;
use std::mem::MaybeUninit;

/// The User-Agent every request carries unless the caller gives its own
/// (HTTP/1.1, scenarios and HTTP/2 alike, as peers such as wrk and h2load send theirs).
pub const USER_AGENT: &str = "dbstand-loadgen";

/// At most this many response headers are accepted.
pub const MAX_HEADERS: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub &'static str);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// How the body of a response is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body (HEAD, 1xx, 204, 304, or Content-Length: 0).
    Empty,
    Length(u64),
    Chunked,
    /// Body runs until the server closes the connection.
    UntilClose,
}

/// A parsed response head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    pub status: u16,
    /// Bytes the head took (status line + headers + blank line).
    pub len: usize,
    pub framing: Framing,
    /// The server will close the connection after this response.
    pub close: bool,
}

fn ascii_contains_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|part| part.trim_ascii().eq_ignore_ascii_case(token))
}

/// Parse a response head from the start of `buf`.
///
/// Returns `Ok(None)` while the head is incomplete. `head_request` tells that the
/// request was a HEAD, whose answer never has a body.
pub fn parse_head(buf: &[u8], head_request: bool) -> Result<Option<Head>, ParseError> {
    // Uninitialized header slots: zeroing 64 of them per answer shows in profiles.
    let mut headers = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut []);
    let len = match httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut resp,
        buf,
        &mut headers,
    ) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(ParseError("too many response headers"))
        }
        Err(_) => return Err(ParseError("malformed response head")),
    };
    let status = resp.code.unwrap_or(0);
    let http10 = resp.version == Some(0);
    let mut content_length: Option<u64> = None;
    let mut chunked = false;
    let mut close = http10;
    for h in resp.headers.iter() {
        let name = h.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            let v = std::str::from_utf8(h.value)
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .ok_or(ParseError("bad Content-Length"))?;
            if content_length.is_some_and(|old| old != v) {
                return Err(ParseError("conflicting Content-Length headers"));
            }
            content_length = Some(v);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            // Chunked must be the last coding; anything else is read until close.
            let last = h.value.rsplit(|&b| b == b',').next().unwrap_or(b"");
            chunked = last.trim_ascii().eq_ignore_ascii_case(b"chunked");
            if !chunked {
                close = true;
            }
        } else if name.eq_ignore_ascii_case(b"connection") {
            if ascii_contains_token(h.value, b"close") {
                close = true;
            } else if ascii_contains_token(h.value, b"keep-alive") {
                close = false;
            }
        }
    }
    let no_body = head_request || (100..200).contains(&status) || status == 204 || status == 304;
    let framing = if no_body {
        Framing::Empty
    } else if chunked {
        Framing::Chunked
    } else if let Some(n) = content_length {
        if n == 0 {
            Framing::Empty
        } else {
            Framing::Length(n)
        }
    } else {
        close = true;
        Framing::UntilClose
    };
    Ok(Some(Head {
        status,
        len,
        framing,
        close,
    }))
}

/// Value of one header of a complete response head (used once per run, not per request).
pub fn header_value(buf: &[u8], name: &str) -> Option<String> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    resp.parse(buf).ok()?;
    resp.headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(name))
        .map(|h| String::from_utf8_lossy(h.value).into_owned())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    Size,
    Extension,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    TrailerLineStart,
    TrailerLine,
    FinalLf,
    Done,
}

/// Incremental decoder for the chunked transfer coding.
#[derive(Debug, Clone)]
pub struct ChunkedDecoder {
    state: ChunkState,
    size: u64,
    digits: u32,
}

impl Default for ChunkedDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl ChunkedDecoder {
    pub fn new() -> Self {
        ChunkedDecoder {
            state: ChunkState::Size,
            size: 0,
            digits: 0,
        }
    }

    pub fn is_done(&self) -> bool {
        self.state == ChunkState::Done
    }

    /// Feed bytes; data bytes are appended to `out` when given.
    ///
    /// Returns how many input bytes were consumed (fewer than `input.len()` only
    /// once the final chunk and trailers are complete) and the decoded data size.
    pub fn feed(
        &mut self,
        input: &[u8],
        mut out: Option<&mut Vec<u8>>,
    ) -> Result<(usize, u64), ParseError> {
        let mut i = 0;
        let mut data = 0u64;
        while i < input.len() {
            let b = input[i];
            match self.state {
                ChunkState::Size => {
                    let digit = match b {
                        b'0'..=b'9' => Some(b - b'0'),
                        b'a'..=b'f' => Some(b - b'a' + 10),
                        b'A'..=b'F' => Some(b - b'A' + 10),
                        _ => None,
                    };
                    if let Some(d) = digit {
                        if self.digits >= 15 {
                            return Err(ParseError("chunk size too large"));
                        }
                        self.size = self.size * 16 + u64::from(d);
                        self.digits += 1;
                    } else if self.digits == 0 {
                        return Err(ParseError("bad chunk size"));
                    } else {
                        match b {
                            b'\r' => self.state = ChunkState::SizeLf,
                            b'\n' => self.after_size_line(),
                            b';' | b' ' | b'\t' => self.state = ChunkState::Extension,
                            _ => return Err(ParseError("bad chunk size")),
                        }
                    }
                    i += 1;
                }
                ChunkState::Extension => {
                    match b {
                        b'\r' => self.state = ChunkState::SizeLf,
                        b'\n' => self.after_size_line(),
                        _ => {}
                    }
                    i += 1;
                }
                ChunkState::SizeLf => {
                    if b != b'\n' {
                        return Err(ParseError("bad chunk size line"));
                    }
                    self.after_size_line();
                    i += 1;
                }
                ChunkState::Data => {
                    let take =
                        (input.len() - i).min(usize::try_from(self.size).unwrap_or(usize::MAX));
                    if let Some(out) = out.as_deref_mut() {
                        out.extend_from_slice(&input[i..i + take]);
                    }
                    i += take;
                    data += take as u64;
                    self.size -= take as u64;
                    if self.size == 0 {
                        self.state = ChunkState::DataCr;
                    }
                }
                ChunkState::DataCr => {
                    match b {
                        b'\r' => self.state = ChunkState::DataLf,
                        b'\n' => self.next_chunk(),
                        _ => return Err(ParseError("missing CRLF after chunk data")),
                    }
                    i += 1;
                }
                ChunkState::DataLf => {
                    if b != b'\n' {
                        return Err(ParseError("missing CRLF after chunk data"));
                    }
                    self.next_chunk();
                    i += 1;
                }
                ChunkState::TrailerLineStart => {
                    match b {
                        b'\r' => self.state = ChunkState::FinalLf,
                        b'\n' => {
                            self.state = ChunkState::Done;
                            return Ok((i + 1, data));
                        }
                        _ => self.state = ChunkState::TrailerLine,
                    }
                    i += 1;
                }
                ChunkState::TrailerLine => {
                    if b == b'\n' {
                        self.state = ChunkState::TrailerLineStart;
                    }
                    i += 1;
                }
                ChunkState::FinalLf => {
                    if b != b'\n' {
                        return Err(ParseError("bad end of chunked body"));
                    }
                    self.state = ChunkState::Done;
                    return Ok((i + 1, data));
                }
                ChunkState::Done => return Ok((i, data)),
            }
        }
        Ok((i, data))
    }

    fn after_size_line(&mut self) {
        self.state = if self.size == 0 {
            ChunkState::TrailerLineStart
        } else {
            ChunkState::Data
        };
    }

    fn next_chunk(&mut self) {
        self.state = ChunkState::Size;
        self.size = 0;
        self.digits = 0;
    }
}

/// A request to send: method, path and headers, serialized once.
#[derive(Debug, Clone)]
pub struct RequestSpec {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// Append one `name: value` header line.
#[inline]
pub fn write_header(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// Serialize the fixed part of a request head (request line, Host, Connection and
/// user headers) into `out`, without Content-Length or the blank line.
pub fn write_head_start(
    out: &mut Vec<u8>,
    method: &str,
    path: &[u8],
    authority: &str,
    keepalive: bool,
    headers: &[(String, String)],
) {
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(path);
    out.extend_from_slice(b" HTTP/1.1\r\n");
    let user_has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    if !user_has("host") {
        write_header(out, b"Host", authority.as_bytes());
    }
    if !user_has("user-agent") {
        write_header(out, b"User-Agent", USER_AGENT.as_bytes());
    }
    if !keepalive {
        write_header(out, b"Connection", b"close");
    }
    for (k, v) in headers {
        write_header(out, k.as_bytes(), v.as_bytes());
    }
}

/// Finish a request head with Content-Length (when there is a body) and append it.
pub fn write_body(out: &mut Vec<u8>, method: &str, body: &[u8]) {
    if !body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH") {
        out.extend_from_slice(b"Content-Length: ");
        out.extend_from_slice(body.len().to_string().as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
}

/// Serialize a whole fixed request.
pub fn serialize(spec: &RequestSpec, authority: &str, keepalive: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(128 + spec.body.len());
    write_head_start(
        &mut out,
        &spec.method,
        spec.path.as_bytes(),
        authority,
        keepalive,
        &spec.headers,
    );
    write_body(&mut out, &spec.method, &spec.body);
    out
}

/// Validate a method and headers before they are put on the wire.
pub fn check_request(spec: &RequestSpec) -> Result<(), String> {
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    if !token(&spec.method) {
        return Err(format!("bad HTTP method '{}'", spec.method));
    }
    for (k, v) in &spec.headers {
        if !token(k) {
            return Err(format!("bad header name '{k}'"));
        }
        if v.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
            return Err(format!("bad value for header '{k}'"));
        }
        if k.eq_ignore_ascii_case("content-length") || k.eq_ignore_ascii_case("transfer-encoding") {
            return Err(format!("header '{k}' is set by the engine"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_with_content_length() {
        let raw = b"HTTP/1.1 200 OK\r\nServer: x\r\nContent-Length: 5\r\n\r\nhello";
        let h = parse_head(raw, false).unwrap().unwrap();
        assert_eq!(h.status, 200);
        assert_eq!(h.len, raw.len() - 5);
        assert_eq!(h.framing, Framing::Length(5));
        assert!(!h.close);
    }

    #[test]
    fn partial_head_is_none() {
        assert_eq!(
            parse_head(b"HTTP/1.1 200 OK\r\nContent-Le", false).unwrap(),
            None
        );
        assert_eq!(parse_head(b"", false).unwrap(), None);
    }

    #[test]
    fn malformed_head_is_error() {
        assert!(parse_head(b"HTTP/1.1 2x0 OK\r\n\r\n", false).is_err());
        assert!(parse_head(b"garbage\r\n\r\n", false).is_err());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n", false).is_err());
        assert!(parse_head(
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            false
        )
        .is_err());
    }

    #[test]
    fn framing_rules() {
        let h = parse_head(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            false,
        )
        .unwrap()
        .unwrap();
        assert_eq!(h.framing, Framing::Chunked);
        let h = parse_head(b"HTTP/1.1 204 No Content\r\n\r\n", false)
            .unwrap()
            .unwrap();
        assert_eq!(h.framing, Framing::Empty);
        let h = parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", true)
            .unwrap()
            .unwrap();
        assert_eq!(h.framing, Framing::Empty);
        let h = parse_head(b"HTTP/1.1 200 OK\r\n\r\n", false)
            .unwrap()
            .unwrap();
        assert_eq!(h.framing, Framing::UntilClose);
        assert!(h.close);
    }

    #[test]
    fn connection_semantics() {
        let h = parse_head(
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            false,
        )
        .unwrap()
        .unwrap();
        assert!(h.close);
        let h = parse_head(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false)
            .unwrap()
            .unwrap();
        assert!(h.close);
        let h = parse_head(
            b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n",
            false,
        )
        .unwrap()
        .unwrap();
        assert!(!h.close);
    }

    fn decode_all(pieces: &[&[u8]]) -> (Vec<u8>, bool, usize) {
        let mut d = ChunkedDecoder::new();
        let mut out = Vec::new();
        let mut leftover = 0;
        for p in pieces {
            let (used, _) = d.feed(p, Some(&mut out)).unwrap();
            leftover += p.len() - used;
        }
        (out, d.is_done(), leftover)
    }

    #[test]
    fn chunked_whole_and_split_at_every_byte() {
        let body: &[u8] =
            b"4\r\nWiki\r\n5;ext=1\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nX-T: 1\r\n\r\n";
        let (out, done, left) = decode_all(&[body]);
        assert_eq!(out, b"Wikipedia in\r\n\r\nchunks.");
        assert!(done);
        assert_eq!(left, 0);
        for cut in 0..body.len() {
            let (out, done, _) = decode_all(&[&body[..cut], &body[cut..]]);
            assert_eq!(out, b"Wikipedia in\r\n\r\nchunks.", "cut at {cut}");
            assert!(done);
        }
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        let (out, done, _) = decode_all(&bytes);
        assert_eq!(out, b"Wikipedia in\r\n\r\nchunks.");
        assert!(done);
    }

    #[test]
    fn chunked_stops_at_end_and_counts_data() {
        let mut d = ChunkedDecoder::new();
        let input = b"3\r\nabc\r\n0\r\n\r\nHTTP/1.1";
        let (used, data) = d.feed(input, None).unwrap();
        assert!(d.is_done());
        assert_eq!(data, 3);
        assert_eq!(&input[used..], b"HTTP/1.1");
    }

    #[test]
    fn chunked_rejects_garbage() {
        assert!(ChunkedDecoder::new().feed(b"zz\r\n", None).is_err());
        assert!(ChunkedDecoder::new().feed(b"3\r\nabcX", None).is_err());
        assert!(ChunkedDecoder::new()
            .feed(b"ffffffffffffffffff\r\n", None)
            .is_err());
    }

    #[test]
    fn serializes_requests() {
        let spec = RequestSpec {
            method: "POST".into(),
            path: "/t?a=1".into(),
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: b"{}".to_vec(),
        };
        let bytes = serialize(&spec, "127.0.0.1:8080", false);
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(
            text,
            "POST /t?a=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: dbstand-loadgen\r\n\
             Connection: close\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
        );
        let get = RequestSpec {
            method: "GET".into(),
            path: "/".into(),
            headers: vec![],
            body: vec![],
        };
        let text = String::from_utf8(serialize(&get, "h", true)).unwrap();
        assert_eq!(
            text,
            "GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: dbstand-loadgen\r\n\r\n"
        );
    }

    #[test]
    fn checks_request_parts() {
        let mut spec = RequestSpec {
            method: "G ET".into(),
            path: "/".into(),
            headers: vec![],
            body: vec![],
        };
        assert!(check_request(&spec).is_err());
        spec.method = "GET".into();
        spec.headers = vec![("X-A".into(), "1\r\nEvil: 1".into())];
        assert!(check_request(&spec).is_err());
        spec.headers = vec![("Content-Length".into(), "3".into())];
        assert!(check_request(&spec).is_err());
        spec.headers = vec![("X-A".into(), "ok".into())];
        assert!(check_request(&spec).is_ok());
    }
}
