"""Load from several machines: dbstand's HTTP and kv load spread over a Dask cluster.

`--cluster local:N` starts N worker processes on this host (every listener on
127.0.0.1); `--cluster tcp://HOST:PORT` or `tls://HOST:PORT` joins a running
scheduler. Importing this package does not import Dask (CLI start-up stays fast).
See docs/distributed.md.
"""
