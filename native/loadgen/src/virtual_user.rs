//! Scenario runs: each connection is a virtual user that loops over the steps,
//! captures values from JSON answers and sends them in later requests.
//!
//! A step fails on a socket error, a non-2xx answer, or a failed check/capture;
//! the rest of that iteration is skipped (later steps would use missing values)
//! and the iteration counts as failed.

use std::rc::Rc;
use std::time::Instant;

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
    loop {
        let iter_start = Instant::now();
        if sh.over(iter_start) || !sh.take_ticket() {
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
                Ok(a) if (200..300).contains(&a.status) => {
                    if let Err(why) = scenario.absorb(i, &mut vars, &answer) {
                        sh.check_failed(i, why);
                        ok = false;
                    }
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
        }
        if ok {
            histogram::record(
                &mut sh.iterations.borrow_mut(),
                u64::try_from(iter_start.elapsed().as_nanos()).unwrap_or(u64::MAX),
            );
        } else {
            sh.iterations_failed.set(sh.iterations_failed.get() + 1);
        }
        iter += 1;
    }
}
