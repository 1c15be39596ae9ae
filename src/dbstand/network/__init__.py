"""The network between the tiers as an axis (methodology: "The network between tiers").

A case asked to run at a round-trip time gets a managed Toxiproxy of its own
(`toxiproxy.py`), started like a managed server on 127.0.0.1, with a proxy in front of
the database whose "delay" toxic holds each direction for half the asked RTT
(`rtt.py`); the case's target is routed through it (`route.py`), the added RTT is
measured on the live path before the case, and the proxy's CPU is probed apart.
"""
