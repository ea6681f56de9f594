"""Signed completion log (docs/architecture.md): canonical JSON, SSHSIG signature,
verification, and the human reports. Never imports textual.

The public names are loaded on first use, so importing one module of the
package does not pay for asyncssh and the report writers."""

from __future__ import annotations

import importlib

__all__ = ["ExportError", "ExportResult", "VerifyReport", "export_run", "verify_log"]
_WHERE = {
    "ExportError": "exporter",
    "ExportResult": "exporter",
    "export_run": "exporter",
    "VerifyReport": "verify",
    "verify_log": "verify",
}


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(name)
