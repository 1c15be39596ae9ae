"""The parking workload's service side: one car-parking OLTP service (spec:
shared/specs/parking.md), implemented on several data-access stacks that share
everything but data access, served over HTTP by a real application server."""
