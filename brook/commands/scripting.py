"""Scripting: EVAL, EVALSHA and their _RO forms, SCRIPT, FUNCTION, FCALL, FCALL_RO.

The commands parse arguments and reply; running a script is brook.scripting.engine's job. A
script's effects, not the script, are what persists: EVAL and FCALL suppress their own request
(the engine wrote their effects as one transaction). FUNCTION LOAD/DELETE/FLUSH/RESTORE change
the dataset and are persisted as sent.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from brook.commands.args import parse_strict_int
from brook.commands.common import help_reply
from brook.commands.registry import (
    COMMANDS,
    CommandError,
    command,
    container,
    subcommand_error,
    text,
)
from brook.persistence.effects import suppress
from brook.protocol import resp
from brook.scripting.cache import ScriptCacheError, sha1hex
from brook.scripting.engine import BUSY_EVAL, ScriptError
from brook.scripting.functions import FunctionError

if TYPE_CHECKING:
    from brook.scripting.engine import Engine
    from brook.session import Session

NOSCRIPT = "NOSCRIPT No matching script. Please use EVAL."
_SCRIPT_FLAGS = "noscript stale skip_monitor may_replicate no_mandatory_keys movablekeys"
_SCRIPT_RO_FLAGS = "noscript stale skip_monitor no_mandatory_keys movablekeys readonly"


def _numkeys(args: list[bytes], error: str = "ERR value is not an integer or out of range") -> int:
    numkeys = parse_strict_int(args[2])
    if numkeys is None:
        raise CommandError(error)
    if numkeys > len(args) - 3:
        raise CommandError("ERR Number of keys can't be greater than number of args")
    if numkeys < 0:
        raise CommandError("ERR Number of keys can't be negative")
    return numkeys


def script_key_positions(argc: int, args: list[bytes]) -> list[int]:
    """EVAL/FCALL: the keys are the ``numkeys`` arguments after ``numkeys``."""
    numkeys = parse_strict_int(args[2]) if argc > 2 else None
    if numkeys is None or numkeys < 0 or numkeys > argc - 3:
        return []
    return list(range(3, 3 + numkeys))


def _show_in_monitor(client: Session, args: list[bytes]) -> None:
    """Scripts are shown before the commands they run, as Redis feeds them explicitly."""
    server = client.server
    monitors = server.monitors
    if monitors.clients and not client.replaying:
        name = args[0].decode("latin-1").lower()
        monitors.feed(client, server.commands.by_name[name], args, explicit=True)


def _eval(client: Session, args: list[bytes], by_sha: bool, read_only: bool) -> bytes:
    _show_in_monitor(client, args)
    if by_sha and len(args[1]) != 40:
        raise CommandError(NOSCRIPT)
    numkeys = _numkeys(args)
    engine: Engine = client.server.scripting
    cache = engine.scripts
    if by_sha:
        script = cache.get(args[1])
        if script is None:
            raise CommandError(NOSCRIPT)
    else:
        sha = sha1hex(args[1])
        script = cache.get(sha)
        if script is None:
            try:
                script = cache.add(args[1], from_eval=True, sha=sha)
            except ScriptCacheError as err:
                raise CommandError(str(err)) from None
    try:
        run = engine.start(client, args, script.sha, script.flags, read_only, eval_mode=True)
    except ScriptError as refused:  # not ``err``: compiled, one name has one type per function
        raise CommandError(str(refused)) from None
    reply = engine.execute(engine.eval_lua, run, script.function,
                           (args[3:3 + numkeys], args[3 + numkeys:]), eval_mode=True)
    suppress(client)
    return reply


@command("eval", arity=-3, flags=_SCRIPT_FLAGS, acl="@slow @scripting", group="scripting",
         since="2.6.0", summary="Executes a server-side Lua script.",
         complexity="Depends on the script that is executed.",
         syntax="script numkeys [key [key ...]] [arg [arg ...]]")
def eval_(client: Session, args: list[bytes]) -> bytes:
    return _eval(client, args, by_sha=False, read_only=False)


@command("evalsha", arity=-3, flags=_SCRIPT_FLAGS, acl="@slow @scripting", group="scripting",
         since="2.6.0", summary="Executes a server-side Lua script by SHA1 digest.",
         complexity="Depends on the script that is executed.",
         syntax="sha1 numkeys [key [key ...]] [arg [arg ...]]")
def evalsha(client: Session, args: list[bytes]) -> bytes:
    return _eval(client, args, by_sha=True, read_only=False)


@command("eval_ro", arity=-3, flags=_SCRIPT_RO_FLAGS, acl="@slow @scripting",
         group="scripting", since="7.0.0", summary="Executes a read-only server-side Lua script.",
         complexity="Depends on the script that is executed.",
         syntax="script numkeys [key [key ...]] [arg [arg ...]]")
def eval_ro(client: Session, args: list[bytes]) -> bytes:
    return _eval(client, args, by_sha=False, read_only=True)


@command("evalsha_ro", arity=-3, flags=_SCRIPT_RO_FLAGS, acl="@slow @scripting",
         group="scripting", since="7.0.0",
         summary="Executes a read-only server-side Lua script by SHA1 digest.",
         complexity="Depends on the script that is executed.",
         syntax="sha1 numkeys [key [key ...]] [arg [arg ...]]")
def evalsha_ro(client: Session, args: list[bytes]) -> bytes:
    return _eval(client, args, by_sha=True, read_only=True)


# ---------------------------------------------------------------------------------------------
# SCRIPT
# ---------------------------------------------------------------------------------------------

container("script", group="scripting", acl="@slow", since="2.6.0",
          summary="A container for Lua scripts management commands.")


@command("script|load", arity=3, flags="noscript stale", acl="@slow @scripting",
         since="2.6.0", summary="Loads a server-side Lua script to the script cache.",
         complexity="O(N) with N being the length in bytes of the script body.",
         syntax="script")
def script_load(client: Session, args: list[bytes]) -> bytes:
    try:
        script = client.server.scripting.scripts.add(args[2], from_eval=False)
    except ScriptCacheError as err:
        raise CommandError(str(err)) from None
    suppress(client)
    return resp.bulk(script.sha)


@command("script|exists", arity=-3, flags="noscript", acl="@slow @scripting",
         since="2.6.0", summary="Determines whether server-side Lua scripts exist in the script "
         "cache.", complexity="O(N) with N being the number of scripts to check.",
         syntax="sha1 [sha1 ...]")
def script_exists(client: Session, args: list[bytes]) -> bytes:
    scripts = client.server.scripting.scripts.scripts
    return resp.array([resp.ONE if sha.lower() in scripts else resp.ZERO for sha in args[2:]])


def _flush_mode(args: list[bytes], error: str) -> None:
    if len(args) == 3 and args[2].lower() in (b"sync", b"async"):
        return
    if len(args) != 2:
        raise CommandError(error)


@command("script|flush", arity=-2, flags="noscript", acl="@slow @scripting", since="2.6.0",
         summary="Removes all server-side Lua scripts from the script cache.",
         complexity="O(N) with N being the number of scripts in cache",
         syntax="[ASYNC | SYNC]")
def script_flush(client: Session, args: list[bytes]) -> bytes:
    _flush_mode(args, "ERR SCRIPT FLUSH only support SYNC|ASYNC option")
    client.server.scripting.flush_scripts()
    suppress(client)
    return resp.OK


@command("script|kill", arity=2, flags="noscript allow_busy", acl="@slow @scripting",
         since="2.6.0", summary="Terminates a server-side Lua script during execution.",
         syntax="")
def script_kill(client: Session, args: list[bytes]) -> bytes:
    refusal = client.server.scripting.kill(eval_mode=True)
    if refusal is not None:
        raise CommandError(refusal)
    return resp.OK


@command("script|debug", arity=3, flags="noscript", acl="@slow @scripting", since="3.2.0",
         summary="Sets the debug mode of server-side Lua scripts.", syntax="YES | SYNC | NO")
def script_debug(client: Session, args: list[bytes]) -> bytes:
    mode = args[2].lower()
    if mode == b"no":
        return resp.OK
    if mode in (b"yes", b"sync"):
        raise CommandError("ERR The Lua debugger is not available in Brook")
    raise CommandError("ERR Use SCRIPT DEBUG YES/SYNC/NO")


_SCRIPT_HELP = [
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
]


@command("script|help", arity=2, flags="loading stale", acl="@slow @scripting", since="5.0.0",
         summary="Returns helpful text about the different subcommands.", syntax="")
def script_help(client: Session, args: list[bytes]) -> bytes:
    return help_reply(args, _SCRIPT_HELP)


# ---------------------------------------------------------------------------------------------
# FUNCTION and FCALL
# ---------------------------------------------------------------------------------------------

container("function", group="scripting", acl="@slow", since="7.0.0",
          summary="A container for function commands.")


def _changed(client: Session) -> None:
    """A FUNCTION command changed the libraries: persisted as sent, counted as a change."""
    client.server.dirty += 1


@command("function|load", arity=-3, flags="write denyoom noscript", acl="@write @slow @scripting",
         since="7.0.0", summary="Creates a library.",
         complexity="O(1) (considering compilation time is redundant)",
         syntax="[REPLACE] function-code")
def function_load(client: Session, args: list[bytes]) -> bytes:
    replace = False
    position = 2
    while position < len(args) - 1:
        option = args[position]
        position += 1
        if option.lower() == b"replace":
            replace = True
            continue
        raise CommandError("ERR Unknown option given: %s" % text(option))
    if position >= len(args):
        raise CommandError("ERR Function code is missing")
    try:
        name = client.server.scripting.functions.load(args[position], replace)
    except FunctionError as err:
        raise CommandError(str(err)) from None
    _changed(client)
    return resp.bulk(name)


@command("function|delete", arity=3, flags="write noscript", acl="@write @slow @scripting",
         since="7.0.0", summary="Deletes a library and its functions.", syntax="library-name")
def function_delete(client: Session, args: list[bytes]) -> bytes:
    try:
        client.server.scripting.functions.delete(args[2])
    except FunctionError as err:
        raise CommandError(str(err)) from None
    _changed(client)
    return resp.OK


@command("function|flush", arity=-2, flags="write noscript", acl="@write @slow @scripting",
         since="7.0.0", summary="Deletes all libraries and functions.",
         complexity="O(N) where N is the number of functions deleted", syntax="[ASYNC | SYNC]")
def function_flush(client: Session, args: list[bytes]) -> bytes:
    if len(args) > 3:
        raise subcommand_error(args, "FUNCTION")
    _flush_mode(args, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
    client.server.scripting.functions.flush()
    _changed(client)
    return resp.OK


@command("function|list", arity=-2, flags="noscript", acl="@slow @scripting", since="7.0.0",
         summary="Returns information about all libraries.",
         complexity="O(N) where N is the number of functions",
         syntax="[LIBRARYNAME library-name-pattern] [WITHCODE]")
def function_list(client: Session, args: list[bytes]) -> bytes:
    with_code = False
    pattern: bytes | None = None
    position = 2
    while position < len(args):
        option = args[position]
        lowered = option.lower()
        if not with_code and lowered == b"withcode":
            with_code = True
        elif pattern is None and lowered == b"libraryname":
            if position >= len(args) - 1:
                raise CommandError("ERR library name argument was not given")
            position += 1
            pattern = args[position]
        else:
            raise CommandError("ERR Unknown argument %s" % text(option))
        position += 1
    libraries = []
    for library in client.server.scripting.functions.matching(pattern):
        functions = [
            resp.Map({b"name": function.name, b"description": function.description,
                      b"flags": resp.RSet(resp.Status(flag.encode()) for flag in function.flags)})
            for function in library.functions.values()
        ]
        entry = resp.Map({b"library_name": library.name, b"engine": b"LUA",
                          b"functions": functions})
        if with_code:
            entry[b"library_code"] = library.code
        libraries.append(entry)
    return resp.encode(libraries, client.protocol)


@command("function|stats", arity=2, flags="noscript allow_busy", acl="@slow @scripting",
         since="7.0.0", summary="Returns information about a function during execution.",
         syntax="")
def function_stats(client: Session, args: list[bytes]) -> bytes:
    engine: Engine = client.server.scripting
    run = engine.run
    if run is not None and run.eval_mode:
        raise CommandError(BUSY_EVAL)
    running = None
    if run is not None:
        running = resp.Map({b"name": run.name, b"command": list(run.command),
                            b"duration_ms": int((time.monotonic() - run.started) * 1000)})
    libraries, functions = engine.functions.counts()
    return resp.encode(resp.Map({
        b"running_script": running,
        b"engines": resp.Map({b"LUA": resp.Map({b"libraries_count": libraries,
                                                 b"functions_count": functions})}),
    }), client.protocol)


@command("function|dump", arity=2, flags="noscript", acl="@slow @scripting", since="7.0.0",
         summary="Dumps all libraries into a serialized binary payload.",
         complexity="O(N) where N is the number of functions", syntax="")
def function_dump(client: Session, args: list[bytes]) -> bytes:
    return resp.bulk(client.server.scripting.functions.dump())


@command("function|restore", arity=-3, flags="write denyoom noscript",
         acl="@write @slow @scripting", since="7.0.0",
         summary="Restores all libraries from a payload.",
         complexity="O(N) where N is the number of functions on the payload",
         syntax="serialized-value [FLUSH | APPEND | REPLACE]")
def function_restore(client: Session, args: list[bytes]) -> bytes:
    if len(args) > 4:
        raise subcommand_error(args, "FUNCTION")
    policy = "APPEND"
    if len(args) == 4:
        policy = args[3].decode("utf-8", "replace").upper()
        if policy not in ("FLUSH", "APPEND", "REPLACE"):
            raise CommandError("ERR Wrong restore policy given, value should be either FLUSH, "
                               "APPEND or REPLACE.")
    try:
        client.server.scripting.functions.restore(args[2], policy)
    except FunctionError as err:
        raise CommandError(str(err)) from None
    _changed(client)
    return resp.OK


@command("function|kill", arity=2, flags="noscript allow_busy", acl="@slow @scripting",
         since="7.0.0", summary="Terminates a function during execution.", syntax="")
def function_kill(client: Session, args: list[bytes]) -> bytes:
    refusal = client.server.scripting.kill(eval_mode=False)
    if refusal is not None:
        raise CommandError(refusal)
    return resp.OK


_FUNCTION_HELP = [
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME "
    "argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored "
    "using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a "
    "restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
    "abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
    "replace the old",
    "      libraries with the new libraries (notice that even on this option there is a "
    "chance of failure",
    "      in case of functions name collision with another library).",
]


@command("function|help", arity=2, flags="loading stale", acl="@slow @scripting",
         since="7.0.0", summary="Returns helpful text about the different subcommands.",
         syntax="")
def function_help(client: Session, args: list[bytes]) -> bytes:
    return help_reply(args, _FUNCTION_HELP)


def _fcall(client: Session, args: list[bytes], read_only: bool) -> bytes:
    _show_in_monitor(client, args)
    engine: Engine = client.server.scripting
    function = engine.functions.find(args[1])
    if function is None:
        raise CommandError("ERR Function not found")
    numkeys = _numkeys(args, "ERR Bad number of keys provided")
    try:
        run = engine.start(client, args, function.name, function.flags, read_only,
                           eval_mode=False)
    except ScriptError as err:
        raise CommandError(str(err)) from None
    interpreter = engine.functions_lua
    table_from = interpreter.table_from
    reply = engine.execute(interpreter, run, function.callback,
                           (table_from(args[3:3 + numkeys]), table_from(args[3 + numkeys:])))
    suppress(client)
    return reply


@command("fcall", arity=-3, flags=_SCRIPT_FLAGS, acl="@slow @scripting", group="scripting",
         since="7.0.0", summary="Invokes a function.",
         complexity="Depends on the function that is executed.",
         syntax="function numkeys [key [key ...]] [arg [arg ...]]")
def fcall(client: Session, args: list[bytes]) -> bytes:
    return _fcall(client, args, read_only=False)


@command("fcall_ro", arity=-3, flags=_SCRIPT_RO_FLAGS, acl="@slow @scripting",
         group="scripting", since="7.0.0", summary="Invokes a read-only function.",
         complexity="Depends on the function that is executed.",
         syntax="function numkeys [key [key ...]] [arg [arg ...]]")
def fcall_ro(client: Session, args: list[bytes]) -> bytes:
    return _fcall(client, args, read_only=True)


for _name in ("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"):
    COMMANDS[_name].find_keys = script_key_positions
