"""Access control lists: users, their rules, and the checks every command goes through.

Owns: :mod:`~brook.acl.rules` (a user's rules as ACL SETUSER reads and ACL LIST writes them),
:mod:`~brook.acl.users` (the users, the ACL file, the log of denials) and
:mod:`~brook.acl.key_access` (what each command does to its keys, for ``%R~``/``%W~``).

Imports: the command table (:mod:`brook.commands.registry`, :mod:`brook.commands.key_specs`)
and :mod:`brook.glob` only; never a session, the keyspace or the server.
"""
