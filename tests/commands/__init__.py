"""Command families, one test file per family (as brook/commands/), each a parity test
against real Redis where Redis has the command."""
