"""Configuration, one job per module, each importing only the ones listed before it:

- :mod:`~brook.config.errors` ConfigError and ConfigSetError;
- :mod:`~brook.config.values` how a value's text is read and written back (Redis's rules and
  error texts);
- :mod:`~brook.config.notify_flags` the keyspace-event classes of ``notify-keyspace-events``;
- :mod:`~brook.config.parameters` the table of parameters (type, default, limits, aliases);
- :mod:`~brook.config.rewrite` CONFIG REWRITE;
- :mod:`~brook.config.store` one server's Config: the values, CONFIG GET/SET, apply steps;
- :mod:`~brook.config.file` the config file and the command-line flags at start-up.

The whole package is the bottom layer (DESIGN.md, layer 8): it imports nothing above
:mod:`brook.protocol` and :mod:`brook.glob`. What a server does when a value changes is
registered on its Config by the server (:meth:`~brook.config.store.Config.on_apply`).
Names are imported from the module that owns them; this module re-exports nothing.
"""
