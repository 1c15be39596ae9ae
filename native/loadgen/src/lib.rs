//! dbstand's native HTTP load engine (HTTP/1.1, HTTPS, HTTP/2).
//!
//! The engine modules know nothing of Python; the `python` feature adds the PyO3
//! glue (module `dbstand._loadgen`) that maturin builds into the package.

pub mod client;
pub mod config;
pub mod conn;
pub mod h2conn;
pub mod histogram;
pub mod http1;
pub mod open_loop;
pub mod runner;
pub mod scenario;
pub mod series;
pub mod stats;
#[cfg(test)]
mod testing;
pub mod tls;
pub mod uring;
pub mod url;
pub mod virtual_user;
pub mod worker;

/// mimalloc for everything the engine's Rust side allocates (futures, TLS
/// records, results) on worker threads: far cheaper than glibc's per-thread
/// arenas.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(feature = "python")]
mod py_histogram;
#[cfg(feature = "python")]
mod python;
