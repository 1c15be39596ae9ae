"""The command line: a thin layer over engine, workloads, results and report."""
