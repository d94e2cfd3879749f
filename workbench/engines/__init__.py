"""Replay engines over partitioned Parquet request logs: DuckDB (the default) and Spark.

>>> from workbench.engines import ENGINES
>>> ENGINES
('duckdb', 'spark')
"""

ENGINES = ("duckdb", "spark")
