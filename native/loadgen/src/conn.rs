//! One client connection: send a request, read exactly one response, keep the
//! socket for the next request when both sides allow it.
//!
//! The read buffer lives as long as the connection slot and is reused for every
//! request; bytes are read straight from the socket with `try_read` after a
//! readiness wait, so a request costs one write and (usually) one read syscall.

use std::io;
use std::net::SocketAddr;

use tokio::io::Interest;
use tokio::net::TcpStream;

use crate::http1::{self, ChunkedDecoder, Framing};
use crate::stats::Failure;

const INITIAL_BUFFER: usize = 16 * 1024;
const MAX_HEAD: usize = 1024 * 1024;

/// What one request/response exchange produced.
#[derive(Debug, Clone, Copy)]
pub struct Answer {
    pub status: u16,
    /// Socket bytes read for this answer.
    pub bytes: u64,
    pub body_bytes: u64,
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
    stream: Option<TcpStream>,
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
    stream: &TcpStream,
    buf: &mut [u8],
    drained: &mut bool,
    bytes: &mut u64,
) -> Result<usize, Failure> {
    let n = read_some(stream, buf).await.map_err(|_| Failure::Read)?;
    if n == 0 {
        return Err(Failure::Read);
    }
    *drained = n < buf.len();
    *bytes += n as u64;
    Ok(n)
}

impl Conn {
    pub fn new(addr: SocketAddr) -> Self {
        Conn {
            addr,
            stream: None,
            buf: vec![0; INITIAL_BUFFER],
            filled: 0,
            drained: false,
        }
    }

    /// Start from an already connected socket (the preflight's).
    pub fn adopt(addr: SocketAddr, stream: Option<std::net::TcpStream>) -> Self {
        let mut conn = Conn::new(addr);
        if let Some(s) = stream {
            if s.set_nonblocking(true).is_ok() {
                if let Ok(s) = TcpStream::from_std(s) {
                    let _ = s.set_nodelay(true);
                    conn.stream = Some(s);
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
            if let Some(stream) = self.stream.as_ref() {
                // A kept-alive socket is quiet between answers, and its stale read
                // readiness was dropped after the last one; readiness now means
                // the server closed it while idle (or spoke unasked). Reopen it
                // rather than count a request that was never really sent as an
                // error. No syscall in the usual, quiet case.
                match stream.try_read(&mut self.buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    _ => self.reset(),
                }
            }
        }
        if self.stream.is_none() {
            let stream = TcpStream::connect(self.addr)
                .await
                .map_err(|_| Failure::Connect)?;
            let _ = stream.set_nodelay(true);
            self.stream = Some(stream);
            self.filled = 0;
        }
        let stream = self.stream.as_ref().expect("connected above");
        self.drained = false;
        write_all(stream, request)
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
                    let n = read_some(stream, &mut self.buf)
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
            if self.drained {
                // The last read returned less than asked: the socket is empty
                // and nothing more comes before the next request, so the cached
                // read readiness is stale. Dropping it here saves one recv()
                // returning EAGAIN per request; anything arriving later (a
                // close) sets it again and is seen before the next send.
                let _ = stream.try_io(Interest::READABLE, || -> io::Result<()> {
                    Err(io::ErrorKind::WouldBlock.into())
                });
            }
        }
        Ok(Answer {
            status,
            bytes,
            body_bytes,
        })
    }
}
