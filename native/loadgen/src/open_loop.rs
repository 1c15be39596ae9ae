//! Open loop: requests leave at fixed intended times, whatever the server does,
//! and latency counts from the intended time (coordinated omission corrected,
//! as wrk2 does).
//!
//! Each connection owns an even share of the rate: connection `i` of `C` sends
//! at `t0 + i/R + k*C/R`. When an answer comes back after the next intended
//! time, the next request goes out at once and its latency includes the time it
//! spent waiting for its turn: the server's stall shows in every request it
//! delayed, not only in the one it held.
//!
//! One refinement over wrk2: a connection that was idle at the intended time
//! and still sent late was held back by the generator itself (tokio's timer ticks
//! in milliseconds; a busy generator thread), never by the server, so latency
//! then counts from the actual send and sub-millisecond answers are not inflated
//! by the generator's timer. Such sends later than `TIMER_SLACK` are counted
//! (`late_sends`), so a generator that cannot hold the schedule is reported,
//! not hidden.

use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::conn::Conn;
use crate::worker::{after_answer, send_request, Shared, Timer};

/// Sends later than this (on an idle connection) are counted as late sends.
pub const TIMER_SLACK: Duration = Duration::from_millis(2);

/// Drive connection `index` at `rate / connections` requests per second.
pub async fn open_connection(
    sh: Rc<Shared>,
    index: usize,
    rate: f64,
    mut probe: bool,
    first: Option<std::net::TcpStream>,
) {
    let cfg = sh.cfg.clone();
    let duration = cfg.duration.expect("open loop has a duration");
    let interval = Duration::from_secs_f64(cfg.connections as f64 / rate);
    let schedule_end = sh.t0 + duration;
    // Intended sends still waiting this long after the end are given up (and
    // counted as missed) so an overloaded server cannot stretch the run forever.
    let give_up = schedule_end
        + cfg
            .timeout
            .unwrap_or(Duration::from_secs(10))
            .max(Duration::from_secs(1));
    let mut intended = sh.t0 + Duration::from_secs_f64(index as f64 / rate);
    let mut free_since = sh.t0;
    let mut conn = Conn::adopt(cfg.addr, cfg.tls.clone(), first);
    let mut timer = Timer::new(cfg.timeout);
    let mut server: Option<String> = None;
    while intended < schedule_end {
        if sh.stopped() {
            break;
        }
        let now = Instant::now();
        if now >= give_up {
            let left = (schedule_end - intended).as_secs_f64() / interval.as_secs_f64();
            sh.missed.set(sh.missed.get() + left.ceil() as u64);
            break;
        }
        if !sh.take_ticket() {
            break;
        }
        if intended > now {
            tokio::time::sleep_until(intended.into()).await;
        }
        let send = Instant::now();
        let start = if free_since > intended {
            intended
        } else {
            if send.saturating_duration_since(intended) > TIMER_SLACK {
                sh.late_sends.set(sh.late_sends.get() + 1);
            }
            send
        };
        let result = send_request(
            &cfg,
            &mut conn,
            &mut timer,
            send,
            probe.then_some(&mut server),
        )
        .await;
        let done = Instant::now();
        sh.record(&result, start, done - start, None);
        after_answer(&sh, &mut conn, &result, &mut probe, &mut server);
        free_since = done;
        intended += interval;
    }
}
