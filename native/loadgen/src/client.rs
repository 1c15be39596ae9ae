//! The closed-loop hot loop: each connection sends its next request as soon as
//! the previous answer is in (ab/wrk style).

use std::rc::Rc;
use std::time::Instant;

use crate::conn::Conn;
use crate::worker::{after_answer, send_request, Shared, Timer};

/// Drive one connection until the budget, the deadline or a stop ends the run.
/// `probe` asks this connection to note the server's name and document length.
pub async fn closed_connection(
    sh: Rc<Shared>,
    mut probe: bool,
    first: Option<std::net::TcpStream>,
) {
    let cfg = sh.cfg.clone();
    let mut conn = Conn::adopt(cfg.addr, cfg.tls.clone(), first);
    let mut timer = Timer::new(cfg.timeout);
    let mut server: Option<String> = None;
    loop {
        let start = Instant::now();
        if sh.over(start) || !sh.take_ticket() {
            break;
        }
        let result = send_request(
            &cfg,
            &mut conn,
            &mut timer,
            start,
            probe.then_some(&mut server),
        )
        .await;
        sh.record(&result, start, start.elapsed(), None);
        after_answer(&sh, &mut conn, &result, &mut probe, &mut server);
        sh.backoff_after(&result).await;
    }
}
