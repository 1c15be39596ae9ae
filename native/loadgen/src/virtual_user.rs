//! Scenario runs: each connection is a virtual user that loops over the steps,
//! captures values from JSON answers and sends them in later requests.
//!
//! A step fails on a socket error, an answer whose status is not the one it wants
//! (any 2xx unless it names one), or a failed check/capture;
//! the rest of that iteration is skipped (later steps would use missing values)
//! and the iteration counts as failed.
//!
//! Open loop (a `scenario_rate`): iterations start at fixed intended times, user
//! `i` of `U` at `t0 + i/R + k*U/R`, whatever the server does. An iteration that
//! could not start on time (the previous one ran late) starts at once, and its
//! iteration latency counts from its intended start, as the open loop of single
//! requests does; requests count from their own sends.

use std::rc::Rc;
use std::time::{Duration, Instant};

use crate::conn::{Conn, Want};
use crate::histogram;
use crate::scenario::Scenario;
use crate::worker::{exchange, Shared, Timer};

pub async fn virtual_user(
    sh: Rc<Shared>,
    scenario: Rc<Scenario>,
    vu: u64,
    first: Option<std::net::TcpStream>,
) {
    let cfg = sh.cfg.clone();
    let mut conn = Conn::adopt(cfg.addr, cfg.tls.clone(), first);
    let mut timer = Timer::new(cfg.timeout);
    let mut vars = scenario.new_vars(vu, &sh.run_id);
    let mut request = Vec::with_capacity(512);
    let mut body = Vec::new();
    let mut answer = Vec::new();
    let mut iter = 0u64;
    // open loop: this user's share of the schedule
    let pace = cfg.scenario_rate.map(|rate| {
        let interval = Duration::from_secs_f64(cfg.connections as f64 / rate);
        let first = sh.t0 + Duration::from_secs_f64(vu as f64 / rate);
        let end = sh.t0 + cfg.duration.expect("open loop has a duration");
        (interval, first, end)
    });
    let mut intended = pace.map(|(_, first, _)| first);
    let mut free_since = sh.t0;
    loop {
        let mut iter_start = Instant::now();
        if let (Some((interval, _, end)), Some(at)) = (pace, intended) {
            if at >= end || sh.stopped() {
                break;
            }
            // iterations still waiting this long after the end are given up (missed),
            // so an overloaded server cannot stretch the run forever
            let grace = cfg
                .timeout
                .unwrap_or(Duration::from_secs(10))
                .max(Duration::from_secs(1));
            if iter_start >= end + grace {
                let left = (end - at).as_secs_f64() / interval.as_secs_f64();
                sh.missed.set(sh.missed.get() + left.ceil() as u64);
                break;
            }
            if at > iter_start {
                tokio::time::sleep_until(at.into()).await;
                iter_start = Instant::now();
            } else if free_since > at {
                iter_start = at; // held back by the previous iteration: count its wait
            }
            intended = Some(at + interval);
            if !sh.take_ticket() {
                break;
            }
        } else if sh.over(iter_start) || !sh.take_ticket() {
            break;
        }
        scenario.begin_iteration(&mut vars, iter);
        let mut ok = true;
        for (i, step) in scenario.steps.iter().enumerate() {
            if sh.stopped() {
                ok = false;
                break;
            }
            scenario.render(
                i,
                &mut vars,
                &cfg.target.authority,
                cfg.keepalive,
                &mut body,
                &mut request,
            );
            answer.clear();
            let reads = step.reads_body();
            let want = Want {
                body: reads.then_some(&mut answer),
                server: None,
            };
            let start = Instant::now();
            let result = exchange(
                &mut conn,
                &mut timer,
                start,
                &request,
                step.head_request,
                want,
            )
            .await;
            sh.record(&result, start, start.elapsed(), Some(i));
            match &result {
                Ok(a) if step.accepts(a.status) => {
                    if let Err(why) = scenario.absorb(i, &mut vars, &answer) {
                        sh.check_failed(i, why);
                        ok = false;
                    }
                }
                Ok(a) if (200..300).contains(&a.status) => {
                    sh.check_failed(i, step.status_error(a.status));
                    ok = false;
                }
                _ => ok = false,
            }
            if !cfg.keepalive {
                conn.reset();
            }
            if !ok {
                sh.backoff_after(&result).await;
                break;
            }
            if let Some(think) = step.think {
                tokio::time::sleep(think).await;
            }
        }
        if ok {
            histogram::record(
                &mut sh.iterations.borrow_mut(),
                u64::try_from(iter_start.elapsed().as_nanos()).unwrap_or(u64::MAX),
            );
        } else {
            sh.iterations_failed.set(sh.iterations_failed.get() + 1);
        }
        free_since = Instant::now();
        iter += 1;
    }
}
