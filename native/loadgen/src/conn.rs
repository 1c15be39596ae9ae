//! One client connection: send a request, read exactly one response, keep the
//! socket for the next request when both sides allow it.
//!
//! The read buffer lives as long as the connection slot and is reused for every
//! request; bytes are read straight from the socket with `try_read` after a
//! readiness wait, so a request costs one write and (usually) one read syscall.

use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use crate::http1::{self, ChunkedDecoder, Framing};
use crate::stats::Failure;
use crate::tls::Tls;

const INITIAL_BUFFER: usize = 16 * 1024;
const MAX_HEAD: usize = 1024 * 1024;

/// What one request/response exchange produced.
#[derive(Debug, Clone, Copy)]
pub struct Answer {
    pub status: u16,
    /// Socket bytes read for this answer.
    pub bytes: u64,
    pub body_bytes: u64,
    /// This exchange opened a TLS connection: its set-up (TCP connect plus
    /// handshake) time and whether the session was resumed.
    pub handshake: Option<Handshake>,
}

#[derive(Debug, Clone, Copy)]
pub struct Handshake {
    pub time: Duration,
    pub resumed: bool,
}

/// A connection's socket: plain, or TLS over it.
pub(crate) enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// Open a connection to `addr`: TCP with Nagle off, then for a TLS run the
/// handshake, whose set-up time (connect included) and resumption come back
/// with it. A failure of either step is a failed connection set-up. HTTP/1.1
/// and HTTP/2 connections are all opened here (HTTP/2's run offers ALPN "h2").
pub(crate) async fn open(
    addr: SocketAddr,
    tls: Option<&Tls>,
) -> Result<(Stream, Option<Handshake>), Failure> {
    let began = Instant::now();
    let tcp = TcpStream::connect(addr)
        .await
        .map_err(|_| Failure::Connect)?;
    let _ = tcp.set_nodelay(true);
    let Some(tls) = tls else {
        return Ok((Stream::Plain(tcp), None));
    };
    let s = tls
        .connector
        .connect(tls.server_name.clone(), tcp)
        .await
        .map_err(|_| Failure::Connect)?;
    let handshake = Handshake {
        time: began.elapsed(),
        resumed: s.get_ref().1.handshake_kind() == Some(rustls::HandshakeKind::Resumed),
    };
    Ok((Stream::Tls(Box::new(s)), Some(handshake)))
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => s.get_ref().0,
        }
    }

    async fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => read_some(s, buf).await,
            Stream::Tls(s) => s.read(buf).await,
        }
    }

    async fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        match self {
            Stream::Plain(s) => write_all(s, data).await,
            Stream::Tls(s) => {
                s.write_all(data).await?;
                s.flush().await
            }
        }
    }

    /// Between answers: has the server closed (or spoken) while idle? Costs no
    /// syscall while the socket's read readiness is clear, the usual case.
    fn idle_activity(&mut self, buf: &mut [u8]) -> bool {
        match self {
            Stream::Plain(s) => {
                !matches!(s.try_read(buf), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
            }
            Stream::Tls(s) => {
                // Peek, so TLS records (a close_notify) stay for rustls.
                let tcp = s.get_ref().0;
                let fd = tcp.as_raw_fd();
                let peeked = tcp.try_io(Interest::READABLE, || {
                    let mut b = 0u8;
                    // SAFETY: recv into one byte we own, without blocking.
                    let n = unsafe {
                        libc::recv(
                            fd,
                            (&mut b as *mut u8).cast(),
                            1,
                            libc::MSG_PEEK | libc::MSG_DONTWAIT,
                        )
                    };
                    if n < 0 {
                        Err(io::Error::last_os_error())
                    } else {
                        Ok(n)
                    }
                });
                !matches!(peeked, Err(e) if e.kind() == io::ErrorKind::WouldBlock)
            }
        }
    }
}

/// Optional extras a caller may want from an answer.
#[derive(Default)]
pub struct Want<'a> {
    /// Collect the decoded body here (scenario captures and checks).
    pub body: Option<&'a mut Vec<u8>>,
    /// Collect the `Server` header here, if not yet known.
    pub server: Option<&'a mut Option<String>>,
}

pub struct Conn {
    addr: SocketAddr,
    tls: Option<Tls>,
    stream: Option<Stream>,
    buf: Vec<u8>,
    filled: usize,
    /// The last read of this answer left the socket empty, so the cached read
    /// readiness is stale and can be dropped without a syscall.
    drained: bool,
}

async fn read_some(stream: &TcpStream, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match stream.try_read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => stream.readable().await?,
            Err(e) => return Err(e),
        }
    }
}

async fn write_all(stream: &TcpStream, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        match stream.try_write(data) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => stream.writable().await?,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Read the next bytes of an answer into `buf`, counting them in `bytes`. The
/// server closing mid-answer is a read failure; a read shorter than `buf` leaves
/// the socket empty, which `drained` records.
async fn read_more(
    stream: &mut Stream,
    buf: &mut [u8],
    drained: &mut bool,
    bytes: &mut u64,
) -> Result<usize, Failure> {
    let n = stream.read_some(buf).await.map_err(|_| Failure::Read)?;
    if n == 0 {
        return Err(Failure::Read);
    }
    *drained = n < buf.len();
    *bytes += n as u64;
    Ok(n)
}

impl Conn {
    pub fn new(addr: SocketAddr, tls: Option<Tls>) -> Self {
        Conn {
            addr,
            tls,
            stream: None,
            buf: vec![0; INITIAL_BUFFER],
            filled: 0,
            drained: false,
        }
    }

    /// Start from an already connected socket (the preflight's). A TLS run's
    /// preflight socket has had its handshake already and is not adopted.
    pub fn adopt(addr: SocketAddr, tls: Option<Tls>, stream: Option<std::net::TcpStream>) -> Self {
        let mut conn = Conn::new(addr, tls);
        if conn.tls.is_some() {
            return conn;
        }
        if let Some(s) = stream {
            if s.set_nonblocking(true).is_ok() {
                if let Ok(s) = TcpStream::from_std(s) {
                    let _ = s.set_nodelay(true);
                    conn.stream = Some(Stream::Plain(s));
                }
            }
        }
        conn
    }

    /// Drop the socket (after an error, a timeout, or `Connection: close`).
    pub fn reset(&mut self) {
        self.stream = None;
        self.filled = 0;
        self.drained = false;
    }

    /// Send `request` and read one full response. On any failure the socket is
    /// dropped, so the next call starts on a fresh connection.
    pub async fn exchange(
        &mut self,
        request: &[u8],
        head_request: bool,
        want: Want<'_>,
    ) -> Result<Answer, Failure> {
        let result = self.exchange_inner(request, head_request, want).await;
        if result.is_err() {
            self.reset();
        }
        result
    }

    async fn exchange_inner(
        &mut self,
        request: &[u8],
        head_request: bool,
        mut want: Want<'_>,
    ) -> Result<Answer, Failure> {
        if self.filled == 0 {
            if let Some(stream) = self.stream.as_mut() {
                // A kept-alive socket is quiet between answers, and its stale read
                // readiness was dropped after the last one; readiness now means
                // the server closed it while idle (or spoke unasked). Reopen it
                // rather than count a request that was never really sent as an
                // error. No syscall in the usual, quiet case.
                if stream.idle_activity(&mut self.buf) {
                    self.reset();
                }
            }
        }
        let mut handshake = None;
        if self.stream.is_none() {
            let (stream, shake) = open(self.addr, self.tls.as_ref()).await?;
            handshake = shake;
            self.stream = Some(stream);
            self.filled = 0;
        }
        let stream = self.stream.as_mut().expect("connected above");
        self.drained = false;
        stream
            .write_all(request)
            .await
            .map_err(|_| Failure::Write)?;

        let mut bytes = 0u64;
        // Read until a complete final (non-1xx) head is buffered.
        let head = loop {
            if self.filled > 0 {
                match http1::parse_head(&self.buf[..self.filled], head_request) {
                    Ok(Some(h)) if (100..200).contains(&h.status) && h.status != 101 => {
                        self.buf.copy_within(h.len..self.filled, 0);
                        self.filled -= h.len;
                        continue;
                    }
                    Ok(Some(h)) => break h,
                    Ok(None) => {}
                    Err(_) => return Err(Failure::Parse),
                }
            }
            if self.filled == self.buf.len() {
                if self.buf.len() >= MAX_HEAD {
                    return Err(Failure::Parse);
                }
                self.buf.resize(self.buf.len() * 2, 0);
            }
            let n = read_more(
                stream,
                &mut self.buf[self.filled..],
                &mut self.drained,
                &mut bytes,
            )
            .await?;
            self.filled += n;
        };
        if let Some(slot) = want.server.take() {
            if slot.is_none() {
                *slot =
                    Some(http1::header_value(&self.buf[..head.len], "server").unwrap_or_default());
            }
        }

        let mut body_out = want.body;
        let mut body_bytes = 0u64;
        let mut close = head.close;
        // `consumed` marks the end of this response inside the buffer.
        let consumed: usize;
        match head.framing {
            Framing::Empty => consumed = head.len,
            Framing::Length(total) => {
                let avail = (self.filled - head.len) as u64;
                if avail >= total {
                    consumed = head.len + total as usize;
                    if let Some(out) = body_out.as_deref_mut() {
                        out.extend_from_slice(&self.buf[head.len..consumed]);
                    }
                } else {
                    if let Some(out) = body_out.as_deref_mut() {
                        out.extend_from_slice(&self.buf[head.len..self.filled]);
                    }
                    let mut remaining = total - avail;
                    loop {
                        let n =
                            read_more(stream, &mut self.buf, &mut self.drained, &mut bytes).await?;
                        let take = (n as u64).min(remaining) as usize;
                        if let Some(out) = body_out.as_deref_mut() {
                            out.extend_from_slice(&self.buf[..take]);
                        }
                        remaining -= take as u64;
                        if remaining == 0 {
                            self.filled = n;
                            consumed = take;
                            break;
                        }
                    }
                }
                body_bytes = total;
            }
            Framing::Chunked => {
                let mut dec = ChunkedDecoder::new();
                let (used, data) = dec
                    .feed(&self.buf[head.len..self.filled], body_out.as_deref_mut())
                    .map_err(|_| Failure::Parse)?;
                body_bytes += data;
                if dec.is_done() {
                    consumed = head.len + used;
                } else {
                    loop {
                        let n =
                            read_more(stream, &mut self.buf, &mut self.drained, &mut bytes).await?;
                        let (used, data) = dec
                            .feed(&self.buf[..n], body_out.as_deref_mut())
                            .map_err(|_| Failure::Parse)?;
                        body_bytes += data;
                        if dec.is_done() {
                            self.filled = n;
                            consumed = used;
                            break;
                        }
                    }
                }
            }
            Framing::UntilClose => {
                if let Some(out) = body_out.as_deref_mut() {
                    out.extend_from_slice(&self.buf[head.len..self.filled]);
                }
                body_bytes = (self.filled - head.len) as u64;
                loop {
                    let n = stream
                        .read_some(&mut self.buf)
                        .await
                        .map_err(|_| Failure::Read)?;
                    if n == 0 {
                        break;
                    }
                    bytes += n as u64;
                    body_bytes += n as u64;
                    if let Some(out) = body_out.as_deref_mut() {
                        out.extend_from_slice(&self.buf[..n]);
                    }
                }
                close = true;
                consumed = 0;
                self.filled = 0;
            }
        }
        let status = head.status;
        if close {
            self.reset();
        } else if consumed < self.filled {
            // Unasked-for bytes after the answer: keep them for the next parse.
            self.buf.copy_within(consumed..self.filled, 0);
            self.filled -= consumed;
            self.drained = false;
        } else {
            self.filled = 0;
            // (TLS: rustls may hold or want more records, so its socket's
            // readiness is left alone.)
            if self.drained && matches!(stream, Stream::Plain(_)) {
                // The last read returned less than asked: the socket is empty
                // and nothing more comes before the next request, so the cached
                // read readiness is stale. Dropping it here saves one recv()
                // returning EAGAIN per request; anything arriving later (a
                // close) sets it again and is seen before the next send.
                let _ = stream
                    .tcp()
                    .try_io(Interest::READABLE, || -> io::Result<()> {
                        Err(io::ErrorKind::WouldBlock.into())
                    });
            }
        }
        Ok(Answer {
            status,
            bytes,
            body_bytes,
            handshake,
        })
    }
}
