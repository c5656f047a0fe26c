"""The job frameworks (Celery, RQ, dramatiq, arq, huey, BullMQ, saq, taskiq) with their real
workers in subprocesses, against Brook and Redis."""
