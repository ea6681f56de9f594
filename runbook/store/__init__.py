"""Durable progress of a run: an append-only, hash-chained journal per run
under the state directory, content-addressed output blobs, one lock per
state directory. The API is `Store` (store.py); the layout is in runs.py."""

from .errors import NoRun, StoreCorrupt, StoreError
from .operator import operator_name
from .runs import RunSummary
from .store import Store

__all__ = ["NoRun", "RunSummary", "Store", "StoreCorrupt", "StoreError", "operator_name"]
