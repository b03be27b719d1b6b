"""Releasing a causal graph of a data holder's table: read under a schema, run, write.

``tables``   read a CSV as text and encode it by the public schema's rules
``cluster``  the same reading and encoding part by part on a Dask cluster (:class:`ClusterTable`, a Dask DataFrame)
``writers``  graph.json / .graphml / .dot / drawing / privacy.json, atomically
``api``      :func:`discover`: request → file's structure → plan (public) → read → run → files
The algorithms and their calibration live in :mod:`dpcd.registry`; the schema in :mod:`dpcd.schema`.
"""

from .api import (
           DATA_PREPARATION,
           MAX_LEVELS,
           MIN_ROWS,
           DiscoveryResult,
           Output,
           ReleaseOptions,
           choose_kind,
           discover,
           load_schema,
           privacy_report,
)
from .cluster import ClusterTable
from .tables import encode_table, read_table
from .writers import graph_to_dot, graph_to_json, write_outputs

__all__ = ["ClusterTable", "DATA_PREPARATION", "MAX_LEVELS", "MIN_ROWS", "DiscoveryResult", "choose_kind", "discover",
           "load_schema", "privacy_report", "Output", "ReleaseOptions", "encode_table", "read_table", "graph_to_dot",
           "graph_to_json", "write_outputs"]
