"""TLS: the SSL contexts of the ``tls-*`` parameters, built as Redis builds its own (tls.c).

Redis keeps one server context and one client context and swaps both atomically when a
``tls-*`` parameter changes: a configuration that fails leaves the previous contexts in place
and CONFIG SET gets an error. :func:`build_contexts` is that step. Python's ``ssl`` sets the
verification mode on the context, where Redis sets it on each connection from
``tls-auth-clients``: the server side is therefore one context per mode, all built from the
same files at once.

Two settings have no ``ssl`` API: the TLS 1.3 cipher suites and the server's session cache.
They are set on the context's OpenSSL object through ``ctypes`` (:class:`_OpenSsl`), from the
same ``libssl`` the ``ssl`` module runs on.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import ssl
import sys
from dataclasses import dataclass
from typing import Final

from brook.config.store import Config

# tls-protocols words, case-insensitively (Redis's parseProtocolsConfig).
_PROTOCOLS: Final = {
    "tlsv1": ssl.TLSVersion.TLSv1,
    "tlsv1.1": ssl.TLSVersion.TLSv1_1,
    "tlsv1.2": ssl.TLSVersion.TLSv1_2,
    "tlsv1.3": ssl.TLSVersion.TLSv1_3,
}
_DEFAULT_PROTOCOLS: Final = (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3)

# tls-auth-clients -> what the server asks of a client's certificate.
VERIFY_MODES: Final = {
    "no": ssl.CERT_NONE,
    "optional": ssl.CERT_OPTIONAL,
    "yes": ssl.CERT_REQUIRED,
}


class TlsConfigError(Exception):
    """The ``tls-*`` parameters cannot make a context; the message is Redis's log line."""


@dataclass(frozen=True)
class TlsContexts:
    """What connections use: the server side by ``tls-auth-clients`` mode, and the client
    side (a replica's link to its master)."""

    server: dict[str, ssl.SSLContext]
    client: ssl.SSLContext


def tls_wanted(settings: Config) -> bool:
    """Whether Redis would configure TLS: a TLS port, or TLS links to other servers."""
    return bool(settings.tls_port or settings.tls_replication or settings.tls_cluster)


def build_contexts(settings: Config) -> TlsContexts:
    """Every context from the current parameters, or TlsConfigError (nothing half-built is
    kept: the caller swaps the result in whole)."""
    if not settings.tls_cert_file:
        raise TlsConfigError("No tls-cert-file configured!")
    if not settings.tls_key_file:
        raise TlsConfigError("No tls-key-file configured!")
    if ((settings.tls_auth_clients != "no" or settings.tls_cluster or settings.tls_replication)
            and not settings.tls_ca_cert_file and not settings.tls_ca_cert_dir):
        raise TlsConfigError(
            "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
            "tls-replication or tls-auth-clients are enabled!")
    versions = parse_protocols(settings.tls_protocols)
    server = {mode: _server_context(settings, versions, verify)
              for mode, verify in VERIFY_MODES.items()}
    return TlsContexts(server, _client_context(settings, versions))


def parse_protocols(text: str) -> tuple[ssl.TLSVersion, ssl.TLSVersion]:
    """The lowest and highest version ``tls-protocols`` allows (empty: TLS 1.2 and 1.3)."""
    if not text:
        return _DEFAULT_PROTOCOLS
    versions = []
    for word in text.split(" "):
        version = _PROTOCOLS.get(word.lower())
        if version is None:
            raise TlsConfigError("Invalid tls-protocols specified. Use a combination of "
                                 "'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.")
        versions.append(version)
    return min(versions), max(versions)


def _server_context(settings: Config,
                    versions: tuple[ssl.TLSVersion, ssl.TLSVersion],
                    verify_mode: ssl.VerifyMode) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _configure(context, settings, versions, settings.tls_cert_file, settings.tls_key_file,
               settings.tls_key_file_pass)
    context.verify_mode = verify_mode
    if settings.tls_prefer_server_ciphers:
        context.options |= ssl.OP_CIPHER_SERVER_PREFERENCE
    else:  # Python sets it on every new context; Redis only when asked
        context.options &= ~ssl.OP_CIPHER_SERVER_PREFERENCE
    if settings.tls_dh_params_file:
        try:
            context.load_dh_params(settings.tls_dh_params_file)
        except FileNotFoundError as err:
            raise TlsConfigError(f"Failed to load {settings.tls_dh_params_file}: {err.strerror}")
        except (ssl.SSLError, OSError):
            raise TlsConfigError(f"{settings.tls_dh_params_file}: failed to read DH params.")
    openssl = _OpenSsl.get()
    if settings.tls_session_caching:
        openssl.session_cache(context, _SESS_CACHE_SERVER, settings.tls_session_cache_size,
                              settings.tls_session_cache_timeout)
    elif openssl.available:
        openssl.session_cache(context, _SESS_CACHE_OFF)
    return context


def _client_context(settings: Config,
                    versions: tuple[ssl.TLSVersion, ssl.TLSVersion]) -> ssl.SSLContext:
    """Redis's client side: the client certificate when both its files are set, otherwise
    the server's own; the peer's certificate is checked against the CAs, not its name."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    own = bool(settings.tls_client_cert_file and settings.tls_client_key_file)
    _configure(
        context, settings, versions,
        settings.tls_client_cert_file if own else settings.tls_cert_file,
        settings.tls_client_key_file if own else settings.tls_key_file,
        settings.tls_client_key_file_pass if own else settings.tls_key_file_pass)
    context.verify_mode = ssl.CERT_REQUIRED
    return context


def _configure(context: ssl.SSLContext, settings: Config,
               versions: tuple[ssl.TLSVersion, ssl.TLSVersion],
               cert_file: str, key_file: str, key_file_pass: str) -> None:
    """What both sides share (Redis's createSSLContext)."""
    context.minimum_version, context.maximum_version = versions
    try:
        # An encrypted key without tls-key-file-pass fails instead of prompting on a terminal.
        context.load_cert_chain(cert_file, key_file, key_file_pass or _no_password)
    except (ssl.SSLError, OSError) as err:
        raise TlsConfigError(
            f"Failed to load certificate or private key: {cert_file}, {key_file}: "
            f"{_reason(err)}")
    if settings.tls_ca_cert_file or settings.tls_ca_cert_dir:
        try:
            context.load_verify_locations(settings.tls_ca_cert_file or None,
                                          settings.tls_ca_cert_dir or None)
        except (ssl.SSLError, OSError) as err:
            raise TlsConfigError(
                f"Failed to configure CA certificate(s) file/directory: {_reason(err)}")
    try:
        # OpenSSL's defaults when unset, as Redis serves them (Python narrows its own list).
        context.set_ciphers(settings.tls_ciphers or "DEFAULT")
    except ssl.SSLError:
        raise TlsConfigError(f"Failed to configure ciphers: {settings.tls_ciphers}")
    if settings.tls_ciphersuites:
        _OpenSsl.get().set_ciphersuites(context, settings.tls_ciphersuites)


def _no_password() -> bytes:
    return b""


def _reason(err: Exception) -> str:
    if isinstance(err, ssl.SSLError):
        return err.reason or str(err)
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    return str(err)


# -- what ssl has no API for ------------------------------------------------------------------

_SSL_CTRL_SET_SESS_CACHE_SIZE: Final = 42
_SSL_CTRL_SET_SESS_CACHE_MODE: Final = 44
_SESS_CACHE_OFF: Final = 0x0000
_SESS_CACHE_SERVER: Final = 0x0002


class _OpenSsl:
    """The few libssl calls ``ssl`` lacks, on the ``SSL_CTX`` an ``SSLContext`` wraps.

    CPython keeps that pointer right after the object header; it is read there and checked by
    asking OpenSSL for the context's options, which must equal ``SSLContext.options``."""

    _instance: _OpenSsl | None = None

    def __init__(self) -> None:
        self.lib: ctypes.CDLL | None = None
        if sys.implementation.name != "cpython":
            return
        path = _loaded_libssl() or ctypes.util.find_library("ssl")
        if path is None:
            return
        try:
            lib = ctypes.CDLL(path)
            lib.SSL_CTX_get_options.restype = ctypes.c_uint64
            lib.SSL_CTX_get_options.argtypes = [ctypes.c_void_p]
            lib.SSL_CTX_ctrl.restype = ctypes.c_long
            lib.SSL_CTX_ctrl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_long,
                                         ctypes.c_void_p]
            lib.SSL_CTX_set_timeout.restype = ctypes.c_long
            lib.SSL_CTX_set_timeout.argtypes = [ctypes.c_void_p, ctypes.c_long]
            lib.SSL_CTX_set_ciphersuites.restype = ctypes.c_int
            lib.SSL_CTX_set_ciphersuites.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        except (OSError, AttributeError):
            return
        self.lib = lib

    @classmethod
    def get(cls) -> _OpenSsl:
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    @property
    def available(self) -> bool:
        return self.lib is not None

    def _pointer(self, context: ssl.SSLContext, setting: str) -> int:
        lib = self.lib
        if lib is not None:
            pointer = ctypes.c_void_p.from_address(id(context) + object.__basicsize__).value
            if pointer and lib.SSL_CTX_get_options(pointer) == int(context.options):
                return pointer
        raise TlsConfigError(f"{setting} is not supported by this Python's ssl module")

    def set_ciphersuites(self, context: ssl.SSLContext, suites: str) -> None:
        pointer = self._pointer(context, "tls-ciphersuites")
        assert self.lib is not None
        if not self.lib.SSL_CTX_set_ciphersuites(pointer, suites.encode()):
            raise TlsConfigError(f"Failed to configure ciphersuites: {suites}")

    def session_cache(self, context: ssl.SSLContext, mode: int, size: int = 0,
                      timeout: int = 0) -> None:
        """The server's session cache: off, or on with Redis's size and timeout."""
        if self.lib is None:
            return  # OpenSSL's own default: a server cache
        pointer = self._pointer(context, "tls-session-caching")
        self.lib.SSL_CTX_ctrl(pointer, _SSL_CTRL_SET_SESS_CACHE_MODE, mode, None)
        if mode != _SESS_CACHE_OFF:
            self.lib.SSL_CTX_ctrl(pointer, _SSL_CTRL_SET_SESS_CACHE_SIZE, size, None)
            self.lib.SSL_CTX_set_timeout(pointer, timeout)


def _loaded_libssl() -> str | None:
    """The libssl this process already runs (the ``ssl`` module's), from its memory map."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rstrip("\n").partition("/")[2]
                if "/libssl.so" in f"/{path}":
                    return f"/{path}"
    except OSError:
        pass
    return None
