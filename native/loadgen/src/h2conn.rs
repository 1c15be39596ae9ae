//! HTTP/2 with libnghttp2 (the C library h2load and curl speak it with): h2
//! over TLS (ALPN "h2") or h2c with prior knowledge.
//!
//! nghttp2 is used sans-I/O: the engine reads the socket (tokio, rustls for
//! TLS) and hands the bytes to `nghttp2_session_mem_recv2`, whose callbacks
//! note each answer's status, body length and end; what nghttp2 has to send
//! (requests, SETTINGS, WINDOW_UPDATE, PING acks) is taken with
//! `nghttp2_session_mem_send2` and written in one write per turn of the loop.
//!
//! Each connection keeps `streams` requests in flight, as h2load does: the
//! answer that ends a stream is recorded and the next request goes out in the
//! same write as the others freed by that read and by what arrives before the
//! runtime's next turn (see `drive`), or, when the requests that went out in
//! one write (a train) are partly answered, with the rest of that train's
//! once it is answered too (within `TRAIN_HOLD`; see `Trains`). A GOAWAY from the server (e.g.
//! nginx after `keepalive_requests`) lets the streams it accepted finish, gives
//! back the requests it refused unprocessed, and the connection is opened
//! again; a broken connection ends every request in flight on it as a failure
//! and is opened again. The TLS handshake counts with the connection's first
//! answer.

use std::collections::VecDeque;
use std::ffi::{c_int, c_void};
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use libmimalloc_sys as mi;
use libnghttp2_sys as ng;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::config::RunConfig;
use crate::conn::{open, Answer, Handshake, Stream};
use crate::stats::Failure;
use crate::worker::{InFlight, Shared};

/// The run's one request, as the header fields HTTP/2 sends.
#[derive(Debug, Clone)]
pub struct H2Request {
    /// Pseudo-header fields first (`:method`, `:scheme`, `:authority`,
    /// `:path`), then the request's own, names in lower case.
    fields: Vec<(Vec<u8>, Vec<u8>)>,
    body: Vec<u8>,
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

/// nghttp2's own check of one request field (`check` is one of its
/// `nghttp2_check_*` functions).
fn valid(check: unsafe extern "C" fn(*const u8, usize) -> c_int, value: &[u8]) -> bool {
    // SAFETY: the check reads `value.len()` bytes from a live slice.
    unsafe { check(value.as_ptr(), value.len()) != 0 }
}

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
        if !valid(ng::nghttp2_check_method, method.as_bytes()) {
            return Err(format!("bad HTTP method '{method}'"));
        }
        if !valid(ng::nghttp2_check_path, path.as_bytes()) {
            return Err(format!("bad URL path for HTTP/2 '{path}'"));
        }
        if !valid(ng::nghttp2_check_authority, authority.as_bytes()) {
            return Err(format!("bad URL authority for HTTP/2 '{authority}'"));
        }
        let scheme = if tls { "https" } else { "http" };
        let mut fields: Vec<(Vec<u8>, Vec<u8>)> = [
            (":method", method),
            (":scheme", scheme),
            (":authority", authority),
            (":path", path),
        ]
        .iter()
        .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect();
        let mut agent = false;
        for (k, v) in headers {
            let name = k.to_ascii_lowercase();
            if !valid(ng::nghttp2_check_header_name, name.as_bytes()) {
                return Err(format!("bad header name '{k}'"));
            }
            if CONNECTION_HEADERS.contains(&name.as_str()) {
                continue;
            }
            if !valid(ng::nghttp2_check_header_value, v.as_bytes()) {
                return Err(format!("bad value of header '{k}'"));
            }
            agent |= name == "user-agent";
            fields.push((name.into_bytes(), v.as_bytes().to_vec()));
        }
        if !agent {
            fields.push((
                b"user-agent".to_vec(),
                crate::http1::USER_AGENT.as_bytes().to_vec(),
            ));
        }
        Ok(H2Request {
            fields,
            body: body.to_vec(),
            streams,
        })
    }

    /// The fields as nghttp2 takes them, pointing into `self` (which outlives
    /// every session: it lives in the run's configuration), never copied.
    fn nv(&self) -> Vec<ng::nghttp2_nv> {
        self.fields
            .iter()
            .map(|(k, v)| ng::nghttp2_nv {
                name: k.as_ptr().cast_mut(),
                value: v.as_ptr().cast_mut(),
                namelen: k.len(),
                valuelen: v.len(),
                flags: (ng::NGHTTP2_NV_FLAG_NO_COPY_NAME | ng::NGHTTP2_NV_FLAG_NO_COPY_VALUE) as u8,
            })
            .collect()
    }
}

/// Receive windows announced to the server: per stream and per connection
/// (nghttp2 gives the received bytes back by itself, WINDOW_UPDATE once half
/// a window is used).
const STREAM_WINDOW: u32 = 1 << 20;
const CONNECTION_WINDOW: i32 = 1 << 24;

/// Bytes read from the socket at a time: a TLS record's worth, as the HTTP/1.1
/// path reads (a buffer per connection, so thousands of connections stay small).
const READ_BUFFER: usize = 16 * 1024;

/// One request in flight on a connection (a stream).
struct Slot {
    /// Its stream id, 0 while the slot is free.
    stream_id: i32,
    start: Instant,
    status: u16,
    body: u64,
    /// The server's last frame on it (END_STREAM) arrived: the answer is whole.
    ended: bool,
    /// Request body bytes handed to nghttp2 so far.
    sent: usize,
    /// The train it went out in (see `State::held`).
    train: u64,
    flight: Option<InFlight>,
}

/// How long requests freed by a partly answered train may wait for the rest
/// of it before they go out anyway (a server that answers a train's streams
/// far apart costs the connection at most this per train).
const TRAIN_HOLD: Duration = Duration::from_millis(1);

/// Holds that may run out before a connection judges whether holding pays:
/// from then on it holds only while at most a tenth of its holds ran out
/// (`Trains::worth_holding`), so a server that answers a train's requests far
/// apart costs a connection a few ms at its start, not 1 ms per write.
const HOLDS_ON_TRIAL: u32 = 20;

/// A connection's trains: the requests that went out in one write each.
///
/// A server reading a train's requests in one go answers them back to back
/// but may send each answer on its own (nginx sends one TLS record per
/// stream); a client that sends new requests as soon as the first of them is
/// read splits its train in two, and the connection drifts to many small
/// trains: a write, a read and a TLS record each per one or two requests, on
/// both sides. Requests freed by a partly answered train therefore wait (at
/// most `TRAIN_HOLD`) for the rest of it, so that the requests which went out
/// together go out together again.
#[derive(Debug)]
struct Trains {
    /// Trains in flight, oldest first: (train, its requests not yet ended).
    inflight: VecDeque<(u64, usize)>,
    /// The next train's number (they count from 1).
    next: u64,
    /// The newest train with an ended request (0: none yet).
    answered: u64,
    /// Trains up to this one are not waited for any more (their hold ran out).
    forgiven: u64,
    /// Holds begun on this connection, and those of them that ran out.
    holds: u32,
    late: u32,
}

impl Trains {
    fn new() -> Trains {
        Trains {
            inflight: VecDeque::new(),
            next: 1,
            answered: 0,
            forgiven: 0,
            holds: 0,
            late: 0,
        }
    }

    /// `n` requests go out in the train numbered `self.next`.
    fn went_out(&mut self, n: usize) {
        if n > 0 {
            self.inflight.push_back((self.next, n));
            self.next += 1;
        }
    }

    /// A request of `train` ended (answered, failed, refused or given up).
    fn ended(&mut self, train: u64) {
        if let Ok(k) = self.inflight.binary_search_by_key(&train, |&(t, _)| t) {
            self.inflight[k].1 -= 1;
        }
        while self.inflight.front().is_some_and(|&(_, left)| left == 0) {
            self.inflight.pop_front();
        }
        self.answered = self.answered.max(train);
    }

    /// The oldest train in flight is partly answered (or a newer one is):
    /// requests freed now wait for the rest of it.
    fn waiting(&self) -> bool {
        self.worth_holding()
            && self
                .inflight
                .front()
                .is_some_and(|&(t, _)| t <= self.answered && t > self.forgiven)
    }

    /// Holding pays on this connection: at most a tenth of its holds ran out
    /// (any `HOLDS_ON_TRIAL / 10` of them while it has made fewer than
    /// `HOLDS_ON_TRIAL`).
    fn worth_holding(&self) -> bool {
        self.late * 10 <= self.holds.max(HOLDS_ON_TRIAL)
    }

    /// Freed requests begin to wait for the rest of a train.
    fn hold_begun(&mut self) {
        self.holds = self.holds.saturating_add(1);
    }

    /// Stop waiting for the trains in flight (the rest of them is late).
    fn give_up(&mut self) {
        self.forgiven = self.next - 1;
        self.late = self.late.saturating_add(1);
    }
}

/// What the nghttp2 callbacks work on: one connection's streams. Reached only
/// through the session's user-data pointer while nghttp2 runs, and through
/// `Session::state` between its calls, never both at once.
struct State<'a> {
    sh: &'a Shared,
    body: &'a [u8],
    slots: Vec<Slot>,
    /// Free slots (indexes).
    free: Vec<usize>,
    active: usize,
    /// When the bytes being handed to nghttp2 were read: the answers they end
    /// end at that moment.
    now: Instant,
    /// This connection's TLS set-up, counted with its first answer.
    handshake: Option<Handshake>,
    /// Still looking for the server's name and document length (the run's
    /// first connection, until a 2xx answer).
    probing: bool,
    server: Option<String>,
    /// The server said GOAWAY: no new streams; this is the last one it took.
    goaway: Option<i32>,
    /// The last stream looked up and its slot (-1: none; stream ids are >= 0).
    last: (i32, usize),
    trains: Trains,
}

impl State<'_> {
    /// The index of the slot holding stream `id` (None for a stream no request
    /// holds any more, e.g. given up at its timeout). An answer's callbacks
    /// come one after another for the same stream: the last lookup is kept.
    fn slot_index(&mut self, session: *mut ng::nghttp2_session, id: i32) -> Option<usize> {
        let i = if self.last.0 == id {
            self.last.1
        } else {
            // SAFETY: the session is alive (we are in its callback).
            let tag = unsafe { ng::nghttp2_session_get_stream_user_data(session, id) } as usize;
            let i = tag.checked_sub(1)?;
            self.last = (id, i);
            i
        };
        // Stream ids are never reused in a session, so a slot that holds `id`
        // holds this stream.
        (self.slots.get(i)?.stream_id == id).then_some(i)
    }

    fn slot(&mut self, session: *mut ng::nghttp2_session, id: i32) -> Option<&mut Slot> {
        let i = self.slot_index(session, id)?;
        Some(&mut self.slots[i])
    }

    /// End the request in slot `i`: record `result` (None: the server
    /// refused it unprocessed, so it never happened and its ticket goes back).
    fn finish(&mut self, i: usize, result: Option<Result<Answer, Failure>>) {
        let slot = &mut self.slots[i];
        slot.stream_id = 0;
        let flight = slot.flight.take();
        let start = slot.start;
        let train = slot.train;
        self.free.push(i);
        self.active -= 1;
        self.trains.ended(train);
        match result {
            None => self.sh.give_back_ticket(),
            Some(mut result) => {
                if let Ok(a) = result.as_mut() {
                    a.handshake = self.handshake.take();
                    if self.probing && (200..300).contains(&a.status) {
                        self.probing = false;
                        self.sh.note_info(self.server.take(), a.body_bytes);
                    }
                }
                let now = self.now.max(start);
                self.sh.record(&result, start, now - start, None);
            }
        }
        drop(flight);
    }

    /// Streams above the server's GOAWAY id were refused unprocessed.
    fn refused(&self, stream_id: i32) -> bool {
        self.goaway.is_some_and(|last| stream_id > last)
    }

    /// Requests freed now wait for the rest of their train (see `Trains`).
    fn held(&self) -> bool {
        !self.free.is_empty() && self.trains.waiting()
    }
}

/// The state behind a callback's user-data pointer.
///
/// # Safety
/// `user_data` is the `State` the session was made with, and no reference to
/// it lives outside the callback while nghttp2 runs.
unsafe fn state<'s, 'a>(user_data: *mut c_void) -> &'s mut State<'a> {
    unsafe { &mut *user_data.cast::<State<'a>>() }
}

unsafe extern "C" fn on_header(
    session: *mut ng::nghttp2_session,
    frame: *const ng::nghttp2_frame,
    name: *const u8,
    namelen: usize,
    value: *const u8,
    valuelen: usize,
    _flags: u8,
    user_data: *mut c_void,
) -> c_int {
    // SAFETY: nghttp2 passes valid name and value buffers and its frame.
    let (name, value, id) = unsafe {
        (
            std::slice::from_raw_parts(name, namelen),
            std::slice::from_raw_parts(value, valuelen),
            (*frame).hd.stream_id,
        )
    };
    // SAFETY: the session's user data (see `state`).
    let st = unsafe { state(user_data) };
    if name == b":status" {
        let status = std::str::from_utf8(value)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        if let Some(slot) = st.slot(session, id) {
            // Interim (1xx) answers come first; the final one's status stays.
            slot.status = status;
        }
    } else if st.probing && st.server.is_none() && name == b"server" {
        st.server = Some(String::from_utf8_lossy(value).into_owned());
    }
    0
}

unsafe extern "C" fn on_data_chunk(
    session: *mut ng::nghttp2_session,
    _flags: u8,
    stream_id: i32,
    _data: *const u8,
    len: usize,
    user_data: *mut c_void,
) -> c_int {
    // SAFETY: the session's user data (see `state`).
    let st = unsafe { state(user_data) };
    if let Some(slot) = st.slot(session, stream_id) {
        slot.body += len as u64;
    }
    0
}

unsafe extern "C" fn on_frame(
    session: *mut ng::nghttp2_session,
    frame: *const ng::nghttp2_frame,
    user_data: *mut c_void,
) -> c_int {
    // SAFETY: nghttp2 passes the frame it received.
    let hd = unsafe { (*frame).hd };
    // SAFETY: the session's user data (see `state`).
    let st = unsafe { state(user_data) };
    match u32::from(hd.type_) {
        ng::NGHTTP2_GOAWAY => {
            // SAFETY: a GOAWAY frame's union member is `goaway`.
            let last = unsafe { (*frame).goaway.last_stream_id };
            st.goaway = Some(st.goaway.map_or(last, |l| l.min(last)));
        }
        ng::NGHTTP2_DATA | ng::NGHTTP2_HEADERS
            if hd.flags & ng::NGHTTP2_FLAG_END_STREAM as u8 != 0 =>
        {
            if let Some(slot) = st.slot(session, hd.stream_id) {
                slot.ended = true;
            }
        }
        _ => {}
    }
    0
}

unsafe extern "C" fn on_stream_close(
    session: *mut ng::nghttp2_session,
    stream_id: i32,
    error_code: u32,
    user_data: *mut c_void,
) -> c_int {
    // SAFETY: the session's user data (see `state`).
    let st = unsafe { state(user_data) };
    let Some(i) = st.slot_index(session, stream_id) else {
        return 0;
    };
    let slot = &st.slots[i];
    let result = if slot.ended && slot.status != 0 {
        // A whole answer (a RST_STREAM after it, NO_ERROR or not, changes nothing).
        Some(Ok(Answer {
            status: slot.status,
            // HTTP/2 frames are decoded inside nghttp2: the bytes counted are the bodies'.
            bytes: slot.body,
            body_bytes: slot.body,
            handshake: None,
        }))
    } else if error_code == ng::NGHTTP2_REFUSED_STREAM || st.refused(stream_id) {
        None
    } else {
        Some(Err(Failure::Read))
    };
    st.finish(i, result);
    0
}

unsafe extern "C" fn read_body(
    session: *mut ng::nghttp2_session,
    stream_id: i32,
    buf: *mut u8,
    length: usize,
    data_flags: *mut u32,
    _source: *mut ng::nghttp2_data_source,
    user_data: *mut c_void,
) -> ng::nghttp2_ssize {
    // SAFETY: the session's user data (see `state`).
    let st = unsafe { state(user_data) };
    let body = st.body;
    let Some(slot) = st.slot(session, stream_id) else {
        return ng::NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE as ng::nghttp2_ssize;
    };
    let rest = &body[slot.sent.min(body.len())..];
    let n = rest.len().min(length);
    // SAFETY: nghttp2 gives `length` writable bytes at `buf`; n <= length.
    unsafe { std::ptr::copy_nonoverlapping(rest.as_ptr(), buf, n) };
    slot.sent += n;
    if n == rest.len() {
        // SAFETY: nghttp2 passes its flags word.
        unsafe { *data_flags |= ng::NGHTTP2_DATA_FLAG_EOF };
    }
    n as ng::nghttp2_ssize
}

/// nghttp2 allocates (frames, header blocks, streams, HPACK tables) from the
/// engine's allocator, mimalloc, rather than glibc's malloc: its allocations
/// per answer showed as ~3% of the engine thread's time in malloc and free.
/// The session keeps a copy of this table.
const ALLOCATOR: ng::nghttp2_mem = ng::nghttp2_mem {
    mem_user_data: std::ptr::null_mut(),
    malloc: Some(ng_malloc),
    free: Some(ng_free),
    calloc: Some(ng_calloc),
    realloc: Some(ng_realloc),
};

unsafe extern "C" fn ng_malloc(size: usize, _: *mut c_void) -> *mut c_void {
    // SAFETY: mimalloc's malloc.
    unsafe { mi::mi_malloc(size) }
}

unsafe extern "C" fn ng_free(ptr: *mut c_void, _: *mut c_void) {
    // SAFETY: `ptr` is null or came from the functions of this table.
    unsafe { mi::mi_free(ptr) }
}

unsafe extern "C" fn ng_calloc(count: usize, size: usize, _: *mut c_void) -> *mut c_void {
    match count.checked_mul(size) {
        // SAFETY: mimalloc's zeroing malloc.
        Some(total) => unsafe { mi::mi_zalloc(total) },
        None => std::ptr::null_mut(),
    }
}

unsafe extern "C" fn ng_realloc(ptr: *mut c_void, size: usize, _: *mut c_void) -> *mut c_void {
    // SAFETY: `ptr` is null or came from the functions of this table.
    unsafe { mi::mi_realloc(ptr, size) }
}

/// One nghttp2 client session and the state its callbacks work on; both are
/// freed together (the session first: it may still hold the state's pointer).
struct Session<'a> {
    ptr: *mut ng::nghttp2_session,
    state: *mut State<'a>,
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        // SAFETY: both were made by `Session::new` and are freed once, here;
        // deleting a session calls none of its callbacks.
        unsafe {
            ng::nghttp2_session_del(self.ptr);
            drop(Box::from_raw(self.state));
        }
    }
}

impl<'a> Session<'a> {
    fn new(state: State<'a>) -> Result<Session<'a>, Failure> {
        let state = Box::into_raw(Box::new(state));
        let mut callbacks: *mut ng::nghttp2_session_callbacks = std::ptr::null_mut();
        let mut ptr: *mut ng::nghttp2_session = std::ptr::null_mut();
        // SAFETY: the callbacks object is made, filled and freed here (the
        // session keeps a copy); the state pointer outlives the session (Drop).
        let rv = unsafe {
            if ng::nghttp2_session_callbacks_new(&mut callbacks) != 0 {
                drop(Box::from_raw(state));
                return Err(Failure::Connect);
            }
            ng::nghttp2_session_callbacks_set_on_header_callback(callbacks, Some(on_header));
            ng::nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
                callbacks,
                Some(on_data_chunk),
            );
            ng::nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, Some(on_frame));
            ng::nghttp2_session_callbacks_set_on_stream_close_callback(
                callbacks,
                Some(on_stream_close),
            );
            let mut mem = ALLOCATOR;
            let rv = ng::nghttp2_session_client_new3(
                &mut ptr,
                callbacks,
                state.cast(),
                std::ptr::null(),
                &mut mem,
            );
            ng::nghttp2_session_callbacks_del(callbacks);
            rv
        };
        if rv != 0 {
            // SAFETY: no session holds the state.
            drop(unsafe { Box::from_raw(state) });
            return Err(Failure::Connect);
        }
        let session = Session { ptr, state };
        let settings = [
            ng::nghttp2_settings_entry {
                settings_id: ng::NGHTTP2_SETTINGS_ENABLE_PUSH as i32,
                value: 0,
            },
            ng::nghttp2_settings_entry {
                settings_id: ng::NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE as i32,
                value: STREAM_WINDOW,
            },
        ];
        // SAFETY: a live session; nghttp2 copies the settings.
        let rv = unsafe {
            ng::nghttp2_submit_settings(
                ptr,
                ng::NGHTTP2_FLAG_NONE as u8,
                settings.as_ptr(),
                settings.len(),
            ) | ng::nghttp2_session_set_local_window_size(
                ptr,
                ng::NGHTTP2_FLAG_NONE as u8,
                0,
                CONNECTION_WINDOW,
            )
        };
        if rv != 0 {
            return Err(Failure::Connect);
        }
        Ok(session)
    }

    /// The callbacks' state, between nghttp2 calls.
    fn state(&mut self) -> &mut State<'a> {
        // SAFETY: no nghttp2 call (hence no callback) runs while this lives.
        unsafe { &mut *self.state }
    }

    /// Send requests on free slots while the run wants more and the server
    /// takes new streams. `nv` points into the run's request.
    fn submit(&mut self, nv: &[ng::nghttp2_nv], with_body: bool, now: Instant) -> Result<(), ()> {
        let ptr = self.ptr;
        let st = self.state();
        let train = st.trains.next;
        let mut sent = 0usize;
        let result = loop {
            if st.goaway.is_some() || st.sh.over(now) {
                break Ok(());
            }
            let Some(&i) = st.free.last() else {
                break Ok(());
            };
            if !st.sh.take_ticket() {
                break Ok(());
            }
            let provider = ng::nghttp2_data_provider2 {
                source: ng::nghttp2_data_source {
                    ptr: std::ptr::null_mut(),
                },
                read_callback: Some(read_body),
            };
            let data = if with_body {
                &provider as *const ng::nghttp2_data_provider2
            } else {
                std::ptr::null()
            };
            // SAFETY: a live session; `nv` and the body outlive it; the slot
            // tag is an index into `slots` (plus one, so never null).
            let id = unsafe {
                ng::nghttp2_submit_request2(
                    ptr,
                    std::ptr::null(),
                    nv.as_ptr(),
                    nv.len(),
                    data,
                    (i + 1) as *mut c_void,
                )
            };
            if id <= 0 {
                // No stream id left (or out of memory): this connection is done.
                st.sh.give_back_ticket();
                break Err(());
            }
            st.free.pop();
            st.active += 1;
            sent += 1;
            st.slots[i] = Slot {
                stream_id: id,
                start: now,
                status: 0,
                body: 0,
                ended: false,
                sent: 0,
                train,
                flight: Some(InFlight::begin()),
            };
        };
        st.trains.went_out(sent);
        result
    }

    /// Append what nghttp2 has to send to `out`.
    fn take_output(&mut self, out: &mut Vec<u8>) -> Result<(), ()> {
        loop {
            let mut data: *const u8 = std::ptr::null();
            // SAFETY: a live session; the bytes stay valid until its next call.
            let n = unsafe { ng::nghttp2_session_mem_send2(self.ptr, &mut data) };
            if n < 0 {
                return Err(());
            }
            if n == 0 {
                return Ok(());
            }
            // SAFETY: nghttp2 returned n readable bytes at `data`.
            out.extend_from_slice(unsafe { std::slice::from_raw_parts(data, n as usize) });
        }
    }

    /// Hand bytes read from the socket to nghttp2 (its callbacks record the
    /// answers they end).
    fn feed(&mut self, input: &[u8], now: Instant) -> Result<(), ()> {
        self.state().now = now;
        // SAFETY: a live session; the state is reached only through its
        // callbacks during this call.
        let n = unsafe { ng::nghttp2_session_mem_recv2(self.ptr, input.as_ptr(), input.len()) };
        if n < 0 {
            Err(())
        } else {
            Ok(())
        }
    }

    /// The session has nothing more to do (GOAWAY both ways, no stream open).
    fn finished(&self) -> bool {
        // SAFETY: a live session.
        unsafe {
            ng::nghttp2_session_want_read(self.ptr) == 0
                && ng::nghttp2_session_want_write(self.ptr) == 0
        }
    }

    /// Give up, at `now`, the requests older than `timeout`: each counts as a
    /// timeout and its stream is cancelled. Returns when the oldest request
    /// left times out.
    fn expire(&mut self, now: Instant, timeout: Duration) -> Instant {
        let ptr = self.ptr;
        let st = self.state();
        let mut oldest = now;
        for i in 0..st.slots.len() {
            let slot = &st.slots[i];
            if slot.stream_id == 0 {
                continue;
            }
            if now >= slot.start + timeout {
                let id = slot.stream_id;
                // SAFETY: a live session; a stream not yet sent is cancelled too.
                unsafe {
                    ng::nghttp2_submit_rst_stream(
                        ptr,
                        ng::NGHTTP2_FLAG_NONE as u8,
                        id,
                        ng::NGHTTP2_CANCEL,
                    )
                };
                st.now = now;
                st.finish(i, Some(Err(Failure::Timeout)));
            } else {
                oldest = oldest.min(slot.start);
            }
        }
        oldest + timeout
    }

    /// The connection is gone: every request still on it ends, as refused
    /// when the server's GOAWAY said it never took it, else as a failure.
    fn abandon(&mut self, now: Instant) {
        let st = self.state();
        st.now = now;
        for i in 0..st.slots.len() {
            let id = st.slots[i].stream_id;
            if id != 0 {
                let result = (!st.refused(id)).then_some(Err(Failure::Read));
                st.finish(i, result);
            }
        }
    }
}

/// What ended a connection.
#[derive(Debug, PartialEq, Eq)]
enum End {
    /// The run needs no more requests from it.
    Done,
    /// The server closed it (GOAWAY) or it broke: open another.
    Again,
}

/// What one turn of the I/O loop saw.
enum Event {
    Read(usize),
    Closed,
    Timer,
}

/// One read from the connection: what it saw, or Pending when nothing has
/// arrived (the task is woken when something does).
fn poll_input<S: AsyncRead + Unpin>(
    io: &mut S,
    cx: &mut std::task::Context<'_>,
    input: &mut [u8],
) -> Poll<Event> {
    let mut buf = ReadBuf::new(input);
    match Pin::new(io).poll_read(cx, &mut buf) {
        Poll::Ready(Ok(())) if buf.filled().is_empty() => Poll::Ready(Event::Closed),
        Poll::Ready(Ok(())) => Poll::Ready(Event::Read(buf.filled().len())),
        Poll::Ready(Err(_)) => Poll::Ready(Event::Closed),
        Poll::Pending => Poll::Pending,
    }
}

/// Drive one connection's session over `io` until the run or the connection ends.
async fn drive<S: AsyncRead + AsyncWrite + Unpin>(
    sh: &Shared,
    req: &H2Request,
    mut io: S,
    handshake: Option<Handshake>,
    probing: &mut bool,
) -> Result<End, Failure> {
    let now = Instant::now();
    let streams = req.streams;
    let state = State {
        sh,
        body: &req.body,
        slots: (0..streams)
            .map(|_| Slot {
                stream_id: 0,
                start: now,
                status: 0,
                body: 0,
                ended: false,
                sent: 0,
                train: 0,
                flight: None,
            })
            .collect(),
        free: (0..streams).rev().collect(),
        active: 0,
        now,
        handshake,
        probing: *probing,
        server: None,
        goaway: None,
        last: (-1, 0),
        trains: Trains::new(),
    };
    let mut session = Session::new(state)?;
    let nv = req.nv();
    let with_body = !req.body.is_empty();
    let timeout = sh.cfg.timeout;
    // When the oldest request in flight times out; the timer wakes the loop
    // then (or when a train's hold runs out, whichever is first), and a busy
    // connection checks it after every read as well.
    let mut expiry = timeout.map(|t| now + t);
    // Until when freed requests wait for the rest of their train.
    let mut hold: Option<Instant> = None;
    let mut sleep = Box::pin(tokio::time::sleep_until(wake_at(now, expiry, hold).into()));
    let mut out: Vec<u8> = Vec::new();
    let mut written = 0usize;
    let mut flush = false;
    let mut input = vec![0u8; READ_BUFFER];
    let mut broken = session.submit(&nv, with_body, now).is_err();
    loop {
        if session.take_output(&mut out).is_err() {
            broken = true;
        }
        let st = session.state();
        *probing = st.probing;
        if broken {
            break;
        }
        if st.active == 0 && written == out.len() && !flush {
            // Nothing in flight and nothing more to send.
            break;
        }
        if session.finished() {
            break;
        }
        let event = poll_fn(|cx| {
            while written < out.len() {
                match Pin::new(&mut io).poll_write(cx, &out[written..]) {
                    Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => return Poll::Ready(Event::Closed),
                    Poll::Ready(Ok(n)) => {
                        written += n;
                        flush = true;
                    }
                    Poll::Pending => break,
                }
            }
            if written == out.len() {
                out.clear();
                written = 0;
                if flush {
                    match Pin::new(&mut io).poll_flush(cx) {
                        Poll::Ready(Ok(())) => flush = false,
                        Poll::Ready(Err(_)) => return Poll::Ready(Event::Closed),
                        Poll::Pending => {}
                    }
                }
            }
            if let Poll::Ready(event) = poll_input(&mut io, cx, &mut input) {
                return Poll::Ready(event);
            }
            if sleep.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Event::Timer);
            }
            Poll::Pending
        })
        .await;
        let mut now = Instant::now();
        let mut event = event;
        let fired = matches!(event, Event::Timer);
        // Take in everything that has arrived before answering, and answer
        // one turn of the event loop later (as h2load's libev loop does: it
        // arms the write watcher on a read and writes on the next turn): the
        // other connections' answers are taken in first and this one's that
        // arrive meanwhile are read too, so the requests they free go out
        // together in one write instead of one small write per read. Fewer,
        // larger writes cost both sides fewer syscalls per request.
        let mut fed = false;
        let mut deferred = false;
        loop {
            match event {
                Event::Read(n) => {
                    if session.feed(&input[..n], now).is_err() {
                        broken = true;
                        break;
                    }
                    fed = true;
                }
                Event::Closed => {
                    broken = true;
                    break;
                }
                Event::Timer => {}
            }
            match poll_fn(|cx| Poll::Ready(poll_input(&mut io, cx, &mut input))).await {
                Poll::Ready(next) => event = next,
                Poll::Pending if fed && !deferred => {
                    deferred = true;
                    // Runs again after the runtime's other ready tasks and
                    // its next look at the sockets.
                    tokio::task::yield_now().await;
                    match poll_fn(|cx| Poll::Ready(poll_input(&mut io, cx, &mut input))).await {
                        Poll::Ready(next) => event = next,
                        Poll::Pending => break,
                    }
                }
                Poll::Pending => break,
            }
            now = Instant::now();
        }
        if broken {
            continue;
        }
        let now = if deferred { Instant::now() } else { now };
        let mut rearm = fired;
        if let (Some(t), Some(at)) = (timeout, expiry) {
            if now >= at {
                expiry = Some(session.expire(now, t));
                rearm = true;
            }
        }
        let st = session.state();
        if st.held() {
            match hold {
                None => {
                    st.trains.hold_begun();
                    hold = Some(now + TRAIN_HOLD);
                    rearm = true;
                }
                Some(at) if now >= at => {
                    // The rest of the train is late: stop waiting for it.
                    st.trains.give_up();
                    hold = None;
                    rearm = true;
                }
                Some(_) => {}
            }
        } else if hold.take().is_some() {
            rearm = true;
        }
        if rearm {
            sleep.as_mut().reset(wake_at(now, expiry, hold).into());
        }
        if hold.is_some() {
            continue;
        }
        if session.submit(&nv, with_body, now).is_err() {
            // No stream ids left: finish the streams open, then reconnect.
            session.state().goaway.get_or_insert(i32::MAX);
        }
    }
    if !broken {
        goodbye(&mut session, &mut io, &mut out, written).await;
    }
    let now = Instant::now();
    session.abandon(now);
    let st = session.state();
    *probing = st.probing;
    let more = st.goaway.is_some() || broken;
    Ok(if more && !sh.over(now) {
        End::Again
    } else {
        End::Done
    })
}

/// When the connection's timer should wake it: the first of the oldest
/// request's timeout and the end of a train's hold (far away if neither).
fn wake_at(now: Instant, expiry: Option<Instant>, hold: Option<Instant>) -> Instant {
    match (expiry, hold) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => now + Duration::from_secs(86_400),
    }
}

/// Leave as a well-behaved client does: a GOAWAY (no error) after whatever
/// the session still had to send, then for TLS a close_notify, then the FIN.
/// Best effort, without waiting: the run is over and the server owes nothing.
async fn goodbye<S: AsyncWrite + Unpin>(
    session: &mut Session<'_>,
    io: &mut S,
    out: &mut Vec<u8>,
    mut written: usize,
) {
    // SAFETY: a live session. An error (a GOAWAY already sent) leaves
    // nothing new to send, which is fine.
    unsafe { ng::nghttp2_session_terminate_session(session.ptr, ng::NGHTTP2_NO_ERROR) };
    if session.take_output(out).is_err() {
        return;
    }
    poll_fn(|cx| {
        while written < out.len() {
            match Pin::new(&mut *io).poll_write(cx, &out[written..]) {
                Poll::Ready(Ok(n)) if n > 0 => written += n,
                _ => return Poll::Ready(()),
            }
        }
        if Pin::new(&mut *io).poll_flush(cx).is_ready() {
            let _ = Pin::new(&mut *io).poll_shutdown(cx);
        }
        Poll::Ready(())
    })
    .await;
}

/// Open one HTTP/2 connection (TCP, then TLS with ALPN "h2" for https) and
/// drive it; the handshake is None for h2c (no TLS).
async fn connect_and_drive(
    sh: &Shared,
    req: &H2Request,
    probing: &mut bool,
) -> Result<End, Failure> {
    match open(sh.cfg.addr, sh.cfg.tls.as_ref()).await? {
        (Stream::Plain(tcp), _) => drive(sh, req, tcp, None, probing).await,
        (Stream::Tls(io), handshake) => {
            if io.get_ref().1.alpn_protocol() != Some(b"h2") {
                return Err(Failure::Connect);
            }
            drive(sh, req, *io, handshake, probing).await
        }
    }
}

/// One connection of a closed-loop HTTP/2 run: `streams` requests in flight
/// until the budget, the deadline or a stop ends the run. A connection the
/// server ends (GOAWAY) or that breaks is opened again.
pub async fn closed_connection(sh: Rc<Shared>, probe: bool) {
    let cfg: Arc<RunConfig> = sh.cfg.clone();
    let req = cfg.h2.as_ref().expect("an HTTP/2 run has its request");
    let mut probing = probe;
    loop {
        let start = Instant::now();
        if sh.over(start) {
            return;
        }
        match connect_and_drive(&sh, req, &mut probing).await {
            Ok(End::Done) => return,
            Ok(End::Again) => {}
            Err(f) => {
                if !sh.take_ticket() {
                    return;
                }
                let r = Err(f);
                sh.record(&r, start, start.elapsed(), None);
                sh.backoff_after(&r).await;
            }
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

    fn values<'r>(req: &'r H2Request, name: &str) -> Vec<&'r [u8]> {
        req.fields
            .iter()
            .filter(|(k, _)| k == name.as_bytes())
            .map(|(_, v)| v.as_slice())
            .collect()
    }

    #[test]
    fn requests_carry_the_engine_user_agent_unless_given_one() {
        assert_eq!(values(&request(&[]), "user-agent"), [b"dbstand-loadgen"]);
        let own = request(&[("User-Agent", "mine"), ("Host", "h"), ("X-A", "1")]);
        assert_eq!(values(&own, "user-agent"), [b"mine"]);
        assert!(
            values(&own, "host").is_empty(),
            "HTTP/2 carries :authority, not Host"
        );
        assert_eq!(values(&own, "x-a"), [b"1"]);
    }

    #[test]
    fn pseudo_headers_come_first_in_request_order() {
        let req = request(&[("X-A", "1")]);
        let names: Vec<&[u8]> = req.fields.iter().map(|(k, _)| k.as_slice()).collect();
        assert_eq!(
            names,
            [
                &b":method"[..],
                b":scheme",
                b":authority",
                b":path",
                b"x-a",
                b"user-agent"
            ]
        );
        assert_eq!(values(&request(&[]), ":scheme"), [b"https"]);
    }

    #[test]
    fn freed_requests_wait_for_the_rest_of_their_train() {
        let mut t = Trains::new();
        t.went_out(3);
        assert!(!t.waiting(), "nothing answered yet");
        t.ended(1);
        assert!(t.waiting(), "train 1 is partly answered");
        t.ended(1);
        t.ended(1);
        assert!(!t.waiting(), "train 1 is whole again");
        t.went_out(2);
        t.went_out(1);
        t.ended(3);
        assert!(
            t.waiting(),
            "a newer train answered first: the older one is waited for"
        );
        t.give_up();
        assert!(!t.waiting(), "a late train is not waited for twice");
        t.went_out(1);
        t.ended(2);
        t.ended(2);
        t.ended(4);
        assert!(
            !t.waiting(),
            "trains given up on and trains whole wait for nothing"
        );
        assert!(t.inflight.is_empty());
        t.went_out(0);
        assert_eq!(t.next, 5, "an empty write is no train");
    }

    #[test]
    fn a_connection_whose_holds_run_out_stops_holding() {
        // a partly answered train, held and given up on `late` times in `holds`
        let judged = |holds: u32, late: u32| {
            let mut t = Trains::new();
            for k in 0..holds {
                t.hold_begun();
                if k < late {
                    t.give_up();
                }
            }
            t.went_out(2);
            t.ended(t.next - 1);
            t.waiting()
        };
        assert!(judged(1, 1), "one late hold on trial is forgiven");
        assert!(
            judged(HOLDS_ON_TRIAL, 2),
            "a tenth of the trial's holds may run out"
        );
        assert!(
            !judged(3, 3),
            "three late of the first three: holding stops"
        );
        assert!(judged(100, 10), "a tenth late keeps holding");
        assert!(!judged(100, 11), "more than a tenth stops it");
    }

    #[test]
    fn bad_fields_are_refused_with_their_name() {
        let bad = |method: &str, path: &str, headers: &[(String, String)]| {
            H2Request::new(false, "h:1", method, path, headers, b"", 1).unwrap_err()
        };
        assert!(bad("GE T", "/", &[]).contains("method"));
        assert!(bad("GET", "/a b", &[]).contains("path"));
        let header = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        assert!(bad("GET", "/", &header("X A", "1")).contains("'X A'"));
        assert!(bad("GET", "/", &header("X-B", "1\r\n2")).contains("'X-B'"));
        let streams = H2Request::new(false, "h:1", "GET", "/", &[], b"", 0).unwrap_err();
        assert!(streams.contains("streams"));
    }
}
