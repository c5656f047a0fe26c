"""Brook's build: the modules of the hot path compiled to C with mypyc, the rest pure Python.

The compiled modules are the same source files: mypyc turns their type annotations into native
classes (attributes read from C structs) and direct calls between compiled functions, which is
where an interpreted request spends its time (docs/performance.md, "The compiled core").
Without a C compiler, or with ``BROOK_PURE=1`` in the environment, Brook installs as pure
Python and behaves the same; ``INFO server`` says which build runs (``brook_build``).
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# The request's path, in the order a request meets it; each module listed is compiled, every
# other module stays interpreted (imported by these as any Python module is).
COMPILED = [
    # reading, dispatching, replying
    "brook/connection.py",
    "brook/session.py",
    "brook/dispatch.py",
    "brook/admission.py",
    # cluster mode: the hash slot of every request's keys and routing's quick test (node.py
    # and state.py, read by them, stay interpreted)
    "brook/cluster/slots.py",
    "brook/cluster/routing.py",
    "brook/command_log.py",
    "brook/commands/registry.py",
    "brook/protocol/resp.py",
    "brook/protocol/requests.py",
    "brook/protocol/framing.py",
    "brook/context.py",
    "brook/server.py",
    # the configuration the request path reads (brook/config/store.py: Config) and what
    # CONFIG SET runs; the config file loader and CONFIG REWRITE stay interpreted
    "brook/config/errors.py",
    "brook/config/values.py",
    "brook/config/notify_flags.py",
    "brook/config/parameters.py",
    "brook/config/store.py",
    # what a command touches
    "brook/keyspace.py",
    "brook/types/scanindex.py",
    "brook/notify.py",
    "brook/blocking.py",
    "brook/pubsub.py",
    # the hot commands and their value types
    "brook/commands/strings.py",
    "brook/commands/string_values.py",
    "brook/types/long_double.py",
    "brook/commands/lists.py",
    "brook/commands/list_values.py",
    "brook/commands/list_args.py",
    "brook/commands/list_pops.py",
    "brook/types/lists.py",
    "brook/commands/streams.py",
    "brook/commands/stream_access.py",
    "brook/commands/stream_args.py",
    "brook/types/stream.py",
    "brook/types/stream_node.py",
    "brook/types/lpsize.py",
    "brook/types/idmp.py",
    "brook/commands/stream_groups.py",
    "brook/types/groups.py",
    "brook/types/pel.py",
    # what the job frameworks send beyond streams and lists (bench/frameworks.py)
    "brook/commands/args.py",
    "brook/commands/timeouts.py",
    "brook/commands/keys.py",
    "brook/commands/hashes.py",
    "brook/commands/transactions.py",
    "brook/commands/sets.py",
    "brook/types/set.py",
    "brook/commands/zsets.py",
    "brook/commands/zset_add.py",
    "brook/commands/zset_args.py",
    "brook/commands/scripting.py",
    "brook/scripting/engine.py",
    "brook/scripting/replies.py",
    "brook/scripting/runtime.py",
    "brook/scripting/cache.py",
    "brook/replication/state.py",
    "brook/commands/list_blocking.py",
    "brook/commands/pubsub.py",
    "brook/commands/connection.py",
    "brook/commands/clients.py",  # CLIENT SETINFO and MAINT_NOTIFICATIONS: every new connection
    # ACL checks (every command of a restricted user)
    "brook/acl/rules.py",
    "brook/acl/key_access.py",
    "brook/acl/users.py",
    # persistence: the AOF encoder and loader
    "brook/persistence/aof.py",
    "brook/persistence/effects.py",
    "brook/persistence/effectlog.py",
    "brook/persistence/loader.py",
    # Redis's RDB codec: DUMP/RESTORE, RDB files, full synchronisation with real Redis
    "brook/rdb/strings.py",
    "brook/rdb/containers.py",
    "brook/rdb/decode.py",
    "brook/rdb/encode.py",
    "brook/persistence/rdbfile.py",
]


# Hand-written C, where a measured gain justified it (docs/performance.md, "The third pass");
# each has its Python twin, which the pure build runs.
NATIVE = [
    Extension(f"brook.types.{name}", [f"brook/types/{name}.c"], extra_compile_args=["-O2"],
              depends=["brook/types/_buffer.h", "brook/types/_decimal.h", "brook/types/_ids.h",
                       "brook/types/_listpack.h", "brook/types/_rows.h",
                       "brook/types/_sealed_blob.h"])
    for name in ("_keytable", "_lp_size", "_member_set", "_node_listpack", "_node_seal",
                 "_resp_pack", "_sorted_keys", "_stream_ids")
] + [
    # Only where long double is the x87 format brook.types.long_double emulates (an #error
    # elsewhere, and brook.types.native then leaves that one module out).
    Extension("brook.types._long_double", ["brook/types/_long_double.c"],
              extra_compile_args=["-O2"]),
] + [
    Extension("brook.protocol._double_text", ["brook/protocol/_double_text.c"],
              extra_compile_args=["-O2"]),
    Extension("brook.protocol._bulks", ["brook/protocol/_bulks.c"], extra_compile_args=["-O2"],
              depends=["brook/types/_decimal.h"]),
    Extension("brook.rdb._crc64", ["brook/rdb/_crc64.c"], extra_compile_args=["-O2"]),
    Extension("brook.rdb._lzf", ["brook/rdb/_lzf.c"], extra_compile_args=["-O2"]),
    Extension("brook.rdb._stream_rows", ["brook/rdb/_stream_rows.c"], extra_compile_args=["-O2"],
              depends=["brook/types/_decimal.h", "brook/types/_ids.h",
                       "brook/types/_listpack.h"]),
]


class OptionalBuildExt(build_ext):
    """Compile the extension if this machine can; otherwise leave the pure-Python build."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as err:  # no compiler, no headers: Brook still works, interpreted
            _pure_build_warning(err)

    def build_extension(self, ext: object) -> None:
        try:
            super().build_extension(ext)
        except Exception as err:
            _pure_build_warning(err)


def _pure_build_warning(err: Exception) -> None:
    print(f"brook: building the compiled core failed ({err}); installing the pure-Python "
          "build, which behaves the same, only slower", file=sys.stderr)


def compiled_modules() -> list[object]:
    if os.environ.get("BROOK_PURE"):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:  # a build environment without mypy: the pure build
        return []
    return [*mypycify(COMPILED, opt_level="3", debug_level="0", group_name="brook.core"), *NATIVE]


setup(ext_modules=compiled_modules(), cmdclass={"build_ext": OptionalBuildExt})
