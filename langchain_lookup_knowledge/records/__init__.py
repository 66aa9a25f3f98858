"""What the invocation records say: the ``lookup-knowledge report`` and the records' retention.

Small modules, one job each: ``tables`` (the two tables), ``database`` (an engine with the
tables created or upgraded), ``columns`` (the indexed facts of a record), ``privacy``
(``record_query_text``), ``retention`` (pruning), ``upgrade`` (old tables), ``period``
(``--since``/``--until``), and the report's parts.
"""
