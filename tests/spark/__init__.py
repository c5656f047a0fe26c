"""The PySpark connector (brook/spark/) on a real SparkSession: exactly once under faults."""
