"""Signed completion log (DESIGN.md §6): canonical JSON, SSHSIG signature,
verification, and the human reports. Never imports textual."""
from .exporter import ExportError, ExportResult, export_run
from .verify import VerifyReport, verify_log

__all__ = ["ExportError", "ExportResult", "VerifyReport", "export_run", "verify_log"]
