"""TLS settings of a load run against an `https://` URL (the engine speaks rustls)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TLS_VERSIONS = ("1.2", "1.3")


@dataclass(frozen=True)
class TlsSettings:
    """How the engine's TLS connections are set up; ignored for `http://` URLs."""

    insecure: bool = False
    """Accept any server certificate (self-signed test servers); signatures are still
    checked, so a handshake costs what a verified one does, bar the chain check."""
    ca_file: str | None = None
    """PEM file of the CAs to trust (default: the system's bundle)."""
    resume: bool = True
    """Resume TLS sessions on new connections (tickets), as browsers and wrk do."""
    version: str | None = None
    """"1.2" or "1.3" only; None: both, 1.3 preferred."""
    sni: str | None = None
    """Server name to send and check instead of the URL's host."""

    def native_kwargs(self) -> dict[str, Any]:
        """The engine's keyword arguments."""
        return {"insecure": self.insecure, "ca_file": self.ca_file,
                "tls_resume": self.resume, "tls_version": self.version, "sni": self.sni}
