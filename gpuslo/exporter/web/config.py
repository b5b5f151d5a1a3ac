"""The exporter's web config: the file `--web.config.file` names has exporter-toolkit's format
(https://github.com/prometheus/exporter-toolkit/blob/master/docs/web-configuration.md):

    tls_server_config:
      cert_file: server.pem
      key_file: server.key
      client_auth_type: RequireAndVerifyClientCert   # or NoClientCert, VerifyClientCertIfGiven
      client_ca_file: ca.pem
      min_version: TLS12                             # TLS12 (default) or TLS13
      max_version: TLS13
    http_server_config:
      headers: {X-Frame-Options: deny}
    basic_auth_users:
      prometheus: $2y$10$...                         # bcrypt (htpasswd -nBC 10 "" | tr -d ':')

Fields it does not support (TLS 1.0/1.1, `RequestClientCert`, `RequireAnyClientCert`, cipher
suites, curves, HTTP/2) are a ConfigError naming the file and the field: never silently ignored.
"""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuslo.config_file import load_yaml, regular_file
from gpuslo.errors import ConfigError

TLS_VERSIONS = {"TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}
CLIENT_AUTH = {
    "NoClientCert": ssl.CERT_NONE,
    "VerifyClientCertIfGiven": ssl.CERT_OPTIONAL,
    "RequireAndVerifyClientCert": ssl.CERT_REQUIRED,
}
_TLS_KEYS = ("cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version",
             "max_version")
_TOP_KEYS = ("tls_server_config", "http_server_config", "basic_auth_users")


@dataclass(frozen=True)
class WebConfig:
    """What `--web.config.file` (or the `--tls-*` flags) asks for.

    Attributes:
        cert_file, key_file: the server certificate and key (PEM); None for plain HTTP.
        client_ca_file: CA bundle that signs client certificates, or None.
        client_auth: an `ssl.CERT_*` verify mode (CERT_NONE: no client certificate asked).
        min_version, max_version: `ssl.TLSVersion` bounds (at least TLS 1.2).
        users: {user name: bcrypt hash (bytes)}; empty means no basic auth.
        headers: extra response headers.
    """

    cert_file: str | None = None
    key_file: str | None = None
    client_ca_file: str | None = None
    client_auth: int = ssl.CERT_NONE
    min_version: ssl.TLSVersion = ssl.TLSVersion.TLSv1_2
    max_version: ssl.TLSVersion | None = None
    users: dict[str, bytes] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def tls(self) -> bool:
        """True when the server speaks HTTPS."""
        return self.cert_file is not None

    def ssl_context(self) -> ssl.SSLContext:
        """The server's SSLContext; raises ConfigError naming the file that cannot be loaded
        (each checked first to be a regular file under the size cap: `ssl` would wait for ever
        on a FIFO): the certificate, then the key against it, then the client CA."""
        for name in (self.cert_file, self.key_file, self.client_ca_file):
            if name:
                regular_file(name, "TLS file")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = self.min_version
        if self.max_version is not None:
            context.maximum_version = self.max_version
        # the certificate alone first: load_cert_chain's error does not say which file failed
        _load_pem(self.cert_file, "certificate (PEM)",
                  lambda: ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_verify_locations(
                      self.cert_file))
        _load_pem(self.key_file, f"private key (PEM) of {self.cert_file}",
                  lambda: context.load_cert_chain(self.cert_file, self.key_file))
        if self.client_ca_file:
            _load_pem(self.client_ca_file, "client CA (PEM)",
                      lambda: context.load_verify_locations(self.client_ca_file))
        context.verify_mode = self.client_auth
        return context


def _load_pem(name: str, what: str, load) -> None:
    """Run `load` (an `ssl` call reading `name`); ConfigError naming `name` and `what` it
    should hold when `ssl` refuses it, with OpenSSL's reason (e.g. NO_CERTIFICATE_OR_CRL_FOUND,
    KEY_VALUES_MISMATCH)."""
    try:
        load()
    except (OSError, ssl.SSLError) as error:
        if isinstance(error, ssl.SSLError):
            reason = error.reason or "OpenSSL cannot parse it"
        else:
            reason = error.strerror or str(error)
        raise ConfigError(f"{name}: cannot load TLS {what}: {reason}") from None


def _field_error(source: str, name: str, message: str) -> ConfigError:
    return ConfigError(f"{source}: field {name}: {message}")


def _mapping(value: Any, source: str, name: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _field_error(source, name, "must be a mapping")
    return value


def _known(section: dict, keys: tuple[str, ...], source: str, prefix: str) -> None:
    for key in section:
        if key not in keys:
            known = ", ".join(keys)
            raise _field_error(source, f"{prefix}{key}", f"not supported (known: {known})")


def _string(section: dict, key: str, source: str, prefix: str) -> str | None:
    value = section.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise _field_error(source, f"{prefix}{key}", "must be a non-empty string")
    return value


def parse_web_config(raw: Any, source: str, base: Path = Path(".")) -> WebConfig:
    """A WebConfig from a decoded web config file (pure but for path joining; no file is read).
    Relative file paths are relative to `base` (the config file's directory), as in
    exporter-toolkit. Raises ConfigError naming `source` and the field."""
    top = _mapping(raw, source, "(top level)")
    _known(top, _TOP_KEYS, source, "")
    tls = _mapping(top.get("tls_server_config"), source, "tls_server_config")
    _known(tls, _TLS_KEYS, source, "tls_server_config.")
    http = _mapping(top.get("http_server_config"), source, "http_server_config")
    _known(http, ("headers",), source, "http_server_config.")
    files = {k: _string(tls, k, source, "tls_server_config.") for k in _TLS_KEYS}
    paths = {k: str(base / v) for k, v in files.items() if k.endswith("_file") and v}
    if tls and not (paths.get("cert_file") and paths.get("key_file")):
        raise _field_error(source, "tls_server_config", "needs cert_file and key_file")
    auth_name = files["client_auth_type"] or "NoClientCert"
    if auth_name not in CLIENT_AUTH:
        raise _field_error(source, "tls_server_config.client_auth_type",
                           f"{auth_name!r} not supported (known: {', '.join(CLIENT_AUTH)})")
    if CLIENT_AUTH[auth_name] != ssl.CERT_NONE and not paths.get("client_ca_file"):
        raise _field_error(source, "tls_server_config.client_ca_file",
                           f"required by client_auth_type {auth_name}")
    versions = {}
    for key in ("min_version", "max_version"):
        name = files[key]
        if name is not None and name not in TLS_VERSIONS:
            raise _field_error(source, f"tls_server_config.{key}",
                               f"{name!r} not supported (known: {', '.join(TLS_VERSIONS)}; "
                               "TLS 1.0 and 1.1 are refused)")
        versions[key] = TLS_VERSIONS[name] if name else None
    return WebConfig(
        cert_file=paths.get("cert_file"),
        key_file=paths.get("key_file"),
        client_ca_file=paths.get("client_ca_file"),
        client_auth=CLIENT_AUTH[auth_name],
        min_version=versions["min_version"] or ssl.TLSVersion.TLSv1_2,
        max_version=versions["max_version"],
        users=_users(top.get("basic_auth_users"), source),
        headers=_headers(http.get("headers"), source),
    )


def _users(value: Any, source: str) -> dict[str, bytes]:
    users = {}
    for user, hashed in _mapping(value, source, "basic_auth_users").items():
        name = f"basic_auth_users.{user}"
        if not isinstance(user, str) or not isinstance(hashed, str):
            raise _field_error(source, name, "user and bcrypt hash must be strings")
        if not hashed.startswith(("$2a$", "$2b$", "$2y$")) or len(hashed) != 60:
            raise _field_error(source, name, "not a bcrypt hash ($2y$10$... , 60 characters)")
        users[user] = hashed.encode()
    return users


def _headers(value: Any, source: str) -> dict[str, str]:
    headers = _mapping(value, source, "http_server_config.headers")
    for key, text in headers.items():
        if not isinstance(key, str) or not isinstance(text, str) or "\n" in key + text:
            raise _field_error(source, f"http_server_config.headers.{key}", "must be one line")
    return dict(headers)


def load_web_config(path: str | os.PathLike[str]) -> WebConfig:
    """Read (`gpuslo.config_file`) and check a web config file; ConfigError naming the file (and
    field) when it cannot be read, is not YAML, or has an invalid or unsupported field; its TLS
    files are loaded once here so a bad certificate stops the exporter at start."""
    source = str(path)
    raw = load_yaml(path, "web config")
    config = parse_web_config(raw, source, Path(path).parent)
    if config.tls:
        try:
            config.ssl_context()
        except ConfigError as error:
            raise ConfigError(f"{source}: {error}") from None
    return config
