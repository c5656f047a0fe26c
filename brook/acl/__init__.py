"""Access control lists: users, their rules, and the checks every command goes through."""
