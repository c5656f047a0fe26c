"""Helpers that tests in more than one file use: raw clients, AOF reading, event lists.

Fixtures live in ``tests/conftest.py``; a test file imports plain helpers from here, never
from another test file.
"""
