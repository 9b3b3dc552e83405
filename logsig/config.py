"""Settings: one root :class:`Settings` of nested sections (pydantic-settings).

Sources, highest priority first: environment variables (``LOGSIG_`` prefix, ``__`` between
nested keys, e.g. ``LOGSIG_KAFKA__BOOTSTRAP_SERVERS``), then the YAML file given to
``logsig run --config FILE``, then the defaults below. Unknown keys are rejected with a message
that names the key and the closest known one; a ``LOGSIG_`` variable that names no setting is an
error when it is close to one (``LOGSIG_KAFKA_BOOTSTRAP_SERVERS``: one underscore) and a
:class:`UnknownVariableWarning` otherwise (:mod:`logsig.config_hints`). ``logsig config show``
prints the effective settings with secrets masked.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from logsig import config_hints
from logsig.config_kafka import bootstrap_problems, topic_problems
from logsig.config_security import kafka_security_problems
from logsig.decode.settings import DecodeSettings
from logsig.errors import ConfigError
from logsig.group.settings import GroupSettings
from logsig.matchers.engine.store import CompileCache, default_cache_dir
from logsig.redact import RedactionSettings


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class KafkaSettings(_Section):
    """Where records come from and where incidents go (Kafka's own terms)."""

    bootstrap_servers: str = Field("127.0.0.1:9092", description="Comma-separated host:port list "
                                   "([IPv6]:port too; port 1-65535).")
    group_id: str = Field("logsig", description="Consumer group; replicas with one group_id share partitions.")
    topics: list[str] = Field(default_factory=lambda: ["inference-logs"], min_length=1,
                              description="Input topics (at least one).")
    auto_offset_reset: Literal["earliest", "latest"] = Field(
        "earliest", description="Where a group with no committed offset starts.")
    output_topic: str = Field(
        "logsig-incidents", description="Topic incident events are produced to (not one of topics).")
    dead_letter_topic: str = Field(
        "logsig-dead-letters", description="Topic undecodable records go to (not one of topics).")
    cloudevents_source: str = Field(
        "/logsig", description="The CloudEvents source attribute (ce_source header) of incident records, a "
                               "URI-reference naming this deployment.")
    line_topic: str | None = Field(
        None, description="Also produce one event per matching line to this topic (grouping.enabled keeps the "
                          "output topic for group events).")
    client_id: str = Field("logsig", description="Kafka client.id of the consumer and producer.")
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = Field(
        "PLAINTEXT", description="Kafka security.protocol.")
    sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] | None = Field(
        None, description="SASL mechanism when security_protocol is SASL_*.")
    sasl_username: str | None = Field(None, description="SASL user name.")
    sasl_password: SecretStr | None = Field(None, description="SASL password (masked in `config show`).")
    ssl_cafile: Path | None = Field(None, description="CA bundle (PEM) for SSL/SASL_SSL.")
    ssl_certfile: Path | None = Field(
        None, description="Client certificate chain (PEM) for mTLS; may also hold the private key.")
    ssl_keyfile: Path | None = Field(None, description="Client private key (PEM) when not in ssl_certfile.")
    ssl_password: SecretStr | None = Field(
        None, description="Password of an encrypted client private key (masked in `config show`).")
    group_instance_id: str | None = Field(
        None, description="Static group membership: a name unique to this replica and stable across its "
                          "restarts (on Kubernetes the pod name, from the downward API). A replica that "
                          "comes back within session_timeout_ms gets its partitions back without a rebalance.")
    heartbeat_interval_ms: int = Field(
        3000, ge=100, description="Consumer heartbeat interval, well below session_timeout_ms (milliseconds).")
    delivery: Literal["at_least_once", "exactly_once"] = Field(
        "at_least_once", description="at_least_once: idempotent producer, then offset commit. exactly_once: "
                                     "incidents, dead letters and offsets in one Kafka transaction; read the "
                                     "output with isolation_level=read_committed.")
    transactional_id: str | None = Field(
        None, description="Kafka transactional.id in exactly_once mode, unique and stable per replica "
                          "(default: <group_id>-<group_instance_id>).")
    transaction_timeout_ms: int = Field(
        60000, ge=1000, description="A transaction left open by a crashed replica is aborted after this; "
                                    "read_committed readers of the output wait at most this long "
                                    "(milliseconds).")
    max_poll_records: int = Field(1000, ge=1, description="Most records taken per batch (records).")
    fetch_timeout_ms: int = Field(500, ge=1, description="Longest wait for a batch (milliseconds).")
    max_batch_bytes: int = Field(
        64 * 1024 * 1024, ge=1024,
        description="Most bytes of record values (after decompression) taken per batch; the rest is read by "
                    "the next poll (bytes).")
    session_timeout_ms: int = Field(30000, ge=1000, description="Consumer group session timeout (milliseconds).")
    max_poll_interval_ms: int = Field(300000, ge=1000, description="Longest gap between polls (milliseconds).")
    retry_backoff_max_seconds: float = Field(
        30.0, gt=0, description="Upper bound of the backoff while the broker is unreachable (seconds).")
    linger_ms: int = Field(5, ge=0, description="Producer linger (milliseconds).")
    metadata_max_age_ms: int = Field(
        30000, ge=1000, description="Refresh cluster metadata this often, so a topic created after start is "
                                    "picked up (milliseconds).")
    max_request_bytes: int = Field(
        1048576, ge=65536, description="Producer max_request_size: the largest record produced, and the most bytes "
                                    "of one partition's batch; keep it at or below the output topics' "
                                    "max.message.bytes (bytes).")
    dead_letter_max_bytes: int = Field(
        900000, ge=1024,
        description="Dead-letter values longer than this are cut to it, with headers giving the original "
                    "size (bytes); keep it below the topic's max.message.bytes.")

    @field_validator("bootstrap_servers")
    @classmethod
    def _bootstrap_usable(cls, servers: str) -> str:
        problems = bootstrap_problems(servers)
        if problems:
            raise ValueError("; ".join(problems))
        return servers

    @model_validator(mode="after")
    def _topics_apart(self) -> KafkaSettings:
        problems = topic_problems(self)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @model_validator(mode="after")
    def _sasl_complete(self) -> KafkaSettings:
        if self.security_protocol.startswith("SASL") and not (self.sasl_mechanism and self.sasl_username):
            raise ValueError(
                f"security_protocol={self.security_protocol} needs sasl_mechanism and sasl_username "
                f"(got sasl_mechanism={self.sasl_mechanism}, sasl_username={self.sasl_username})")
        if self.security_protocol.startswith("SASL") and not (
                self.sasl_password and self.sasl_password.get_secret_value()):
            raise ValueError(f"security_protocol={self.security_protocol} needs sasl_password "
                             "(set it, e.g. LOGSIG_KAFKA__SASL_PASSWORD from a Secret); got none")
        return self

    @model_validator(mode="after")
    def _tls_complete(self) -> KafkaSettings:
        problems = kafka_security_problems(self)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @model_validator(mode="after")
    def _delivery_complete(self) -> KafkaSettings:
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ValueError(f"heartbeat_interval_ms ({self.heartbeat_interval_ms}) must be below "
                             f"session_timeout_ms ({self.session_timeout_ms}); a third of it is usual")
        if self.delivery == "exactly_once" and not (self.transactional_id or self.group_instance_id):
            raise ValueError("delivery=exactly_once needs a transactional id unique and stable per replica: "
                             "set group_instance_id (e.g. the pod name) or transactional_id")
        return self

    def effective_transactional_id(self) -> str | None:
        """The producer's transactional.id in exactly_once mode, else None."""
        if self.delivery != "exactly_once":
            return None
        return self.transactional_id or f"{self.group_id}-{self.group_instance_id}"


class HttpSettings(_Section):
    """The HTTP endpoint serving /metrics, /healthz and /readyz."""

    host: str = Field("0.0.0.0", description="Listen address.")
    port: int = Field(9464, ge=0, le=65535, description="Listen port (0 picks a free one).")


class CatalogSettings(_Section):
    """Which signatures are loaded."""

    builtin: bool = Field(True, description="Load the built-in catalog shipped with logsig.")
    paths: list[Path] = Field(default_factory=list, description="Extra catalog files or directories.")
    reload_interval_seconds: float = Field(
        0.0, ge=0, description="Check the catalog files for changes this often (seconds; 0 = never).")
    cache_dir: Path = Field(
        default_factory=default_cache_dir,
        description="Where compiled catalogs are kept between runs (default: logsig/compiled under the "
                    "user's cache directory, $XDG_CACHE_HOME or ~/.cache).")
    cache_max_entries: int = Field(
        8, ge=0, description="Compiled catalogs kept in cache_dir, least recently used removed first (0 = no cache).")

    def compile_cache(self) -> CompileCache | None:
        """The on-disk compile cache these settings describe (None when ``cache_max_entries`` is 0)."""
        return CompileCache(self.cache_dir, self.cache_max_entries) if self.cache_max_entries else None


class MatchingSettings(_Section):
    """The matching engine."""

    max_message_bytes: int = Field(
        65536, ge=1024, description="Longer messages are matched on a head and tail window (bytes).")


class MetricsSettings(_Section):
    """Prometheus labels of logsig_signature_matches_total."""

    source_labels: list[Literal["cluster", "namespace", "node", "container", "pod"]] = Field(
        default_factory=lambda: ["cluster", "namespace"],  # type: ignore[arg-type]
        description="Source fields added as labels to the per-signature counter (pod: one series per "
                    "pod and signature, bounded by max_label_sets_per_signature).")
    max_label_sets_per_signature: int = Field(
        200, ge=1, description="Distinct source-label sets per signature before values become 'other'.")


class AlertmanagerSettings(_Section):
    """The optional Alertmanager sink."""

    enabled: bool = Field(False, description="Post each incident to Alertmanager as an alert.")
    url: str = Field("http://127.0.0.1:9093", description="Alertmanager base URL.")
    resolve_after_seconds: float = Field(
        300.0, gt=0, description="An alert ends this long after its last match (seconds).")
    queue_size: int = Field(1000, ge=1, description="Incidents waiting to be posted before new ones are dropped.")
    timeout_seconds: float = Field(5.0, gt=0, description="HTTP timeout of one post (seconds).")
    max_retries: int = Field(5, ge=0, description="Retries of one post, with exponential backoff.")


class DiscoverySettings(_Section):
    """The unclassified tier's top templates (``/unclassified``, ``logsig scan --unclassified``)."""

    top_k: int = Field(1000, ge=1, description="Unclassified templates tracked (Space-Saving capacity).")
    max_pods: int = Field(8, ge=0, description="Pods listed per tracked template; more are flagged, not kept.")


class LoggingSettings(_Section):
    """logsig's own logs (structlog, to stderr)."""

    level: Literal["debug", "info", "warning", "error"] = Field("info", description="Lowest level written.")
    format: Literal["auto", "json", "console"] = Field(
        "auto", description="json, console, or auto (console when stderr is a terminal).")
    summary_interval_seconds: float = Field(
        60.0, ge=0, description="Log a summary line (records/s, incidents, dead letters, lag) this often "
                                "(seconds; 0 = never).")


class Settings(BaseSettings):
    """Every setting of logsig; see ``deploy/logsig.example.yaml`` for a commented example."""

    model_config = SettingsConfigDict(
        env_prefix="LOGSIG_", env_nested_delimiter="__", extra="forbid", yaml_file=None)

    kafka: KafkaSettings = Field(default_factory=KafkaSettings)
    http: HttpSettings = Field(default_factory=HttpSettings)
    catalog: CatalogSettings = Field(default_factory=CatalogSettings)
    matching: MatchingSettings = Field(default_factory=MatchingSettings)
    decode: DecodeSettings = Field(default_factory=DecodeSettings)
    grouping: GroupSettings = Field(default_factory=GroupSettings)
    discovery: DiscoverySettings = Field(default_factory=DiscoverySettings)
    redaction: RedactionSettings = Field(default_factory=RedactionSettings)
    locale: str = Field(
        "en", pattern=r"^[a-z]{2}$",
        description="Language of the events' texts (title, example, root cause, workarounds) where the catalog "
                    "has translations (signature_zh, root_cause_zh, workarounds_zh: zh), else English.")
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    alertmanager: AlertmanagerSettings = Field(default_factory=AlertmanagerSettings)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)
    shutdown_timeout_seconds: float = Field(
        20.0, gt=0, description="Longest stop on SIGTERM/SIGINT as a whole: producer flush, commit, group leave "
                    "(seconds); past it, or on a second signal, the drain is cut short (exit code 1).")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, YamlConfigSettingsSource(settings_cls))


class UnknownVariableWarning(UserWarning):
    """A ``LOGSIG_`` environment variable names no setting and is not close to one; it is ignored."""


def _problem(err: Any) -> str:
    """The message of one validation error; an unknown key names the closest known one."""
    if err["type"] != "extra_forbidden":
        return str(err["msg"])
    closest = config_hints.closest_key(Settings, tuple(err["loc"]))
    return f"unknown key; did you mean {closest}?" if closest else "unknown key"


def _format_error(error: ValidationError, path: Path | None, data: dict[str, Any] | None = None) -> str:
    """One line per error, naming the key and where its value came from: the environment variable
    that set it, or for a section's own check the variables that set keys in it (and the file, when it
    sets that section too). The header names the file only when some value at fault came from it."""
    lines, from_file = [], False
    for err in error.errors():
        loc = tuple(err["loc"])
        key = ".".join(str(p) for p in loc) or "(root)"
        source, in_file = _origin(loc, path, data)
        from_file = from_file or in_file
        lines.append(f"  {key}: {_problem(err)}{source}")
    where = f" in {path}" if path is not None and from_file else "" if from_file else " from the environment"
    return f"invalid settings{where}:\n" + "\n".join(lines)


def _origin(loc: tuple[str | int, ...], path: Path | None, data: dict[str, Any] | None) -> tuple[str, bool]:
    """`` (from environment variable X)`` or `` (KEY set by ...)`` for the value at ``loc``, and
    whether the file may hold what is at fault."""
    variable = config_hints.variable_for(loc, os.environ)
    if variable:
        return f" (from environment variable {variable})", False
    under = config_hints.variables_under(loc, os.environ)
    if not under:
        return "", True
    in_file = path is not None and _holds(data, loc)
    key = ".".join(str(p) for p in loc)
    plural = "s" if len(under) > 1 else ""
    file_part = f"in {path} and " if in_file else ""
    return f" ({key} set {file_part}by environment variable{plural} {', '.join(under)})", in_file


def _holds(data: object, loc: tuple[str | int, ...]) -> bool:
    """Whether the file's ``data`` has a value at ``loc``."""
    for part in loc:
        if not isinstance(data, dict) or part not in data:
            return False
        data = data[part]
    return True


def _yaml_problem(file: Path, error: yaml.YAMLError) -> str:
    """``FILE:LINE:COLUMN: problem`` for a YAML syntax error (line and column 1-based)."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error)
    if mark is None:
        return f"settings file {file} is not valid YAML: {problem}"
    context = getattr(error, "context", None)
    context_mark = getattr(error, "context_mark", None)
    started = (f" ({context} at line {context_mark.line + 1}, column {context_mark.column + 1})"
               if context and context_mark is not None else "")
    return (f"settings file {file} is not valid YAML: {file}:{mark.line + 1}:{mark.column + 1}: "
            f"{problem}{started}")


def _check_environment() -> None:
    """Raise ConfigError for LOGSIG_ variables close to a setting; warn about the other unknown ones."""
    unknown = config_hints.unknown_variables(Settings, os.environ)
    for variable in unknown:
        if variable.suggestion is None:
            warnings.warn(variable.message(), UnknownVariableWarning, stacklevel=3)
    errors = [v.message() for v in unknown if v.suggestion is not None]
    if errors:
        raise ConfigError("\n".join(errors))


def _check_file(file: Path) -> dict[str, Any] | None:
    """``file``'s YAML mapping (None when empty); raises ConfigError if it is not one (syntax errors
    name file, line and column)."""
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read settings file {file}: {error}") from error
    except yaml.YAMLError as error:
        raise ConfigError(_yaml_problem(file, error)) from error
    if data is not None and not isinstance(data, dict):
        raise ConfigError(f"settings file {file} must hold a mapping of sections (kafka:, http:, ...), "
                          f"not a {type(data).__name__}")
    return data


def load_settings(path: Path | str | None = None, **overrides: Any) -> Settings:
    """Settings from ``path`` (YAML), the environment and ``overrides`` (highest priority).

    Raises:
        ConfigError: the file is missing or not YAML, a key is unknown or invalid (named, with the
            closest known key and the environment variable that set it), or a ``LOGSIG_`` variable
            is close to a setting it does not name.
    Warns:
        UnknownVariableWarning: a ``LOGSIG_`` variable names no setting and is close to none.
    """
    _check_environment()
    file = Path(path) if path is not None else None
    if file is not None and file.is_dir():
        raise ConfigError(f"settings path {file} is a directory; give the settings YAML file in it")
    if file is not None and not file.is_file():
        raise ConfigError(f"settings file not found: {file}")
    data = _check_file(file) if file is not None else None
    cls: type[Settings] = Settings
    if file is not None:
        config = SettingsConfigDict(**{**Settings.model_config, "yaml_file": file})
        cls = type("Settings", (Settings,), {"model_config": config})
    try:
        return cls(**overrides)
    except ValidationError as error:
        raise ConfigError(_format_error(error, file, data)) from error
    except (OSError, ValueError) as error:
        unparsable = config_hints.unparsable_variables(Settings, os.environ)
        if unparsable:
            raise ConfigError(f"cannot parse environment variable {', '.join(unparsable)}: list, mapping and "
                              f"section values are JSON, e.g. LOGSIG_KAFKA__TOPICS='[\"a\", \"b\"]'") from error
        where = f"settings file {file}" if file else "settings"
        raise ConfigError(f"cannot read {where}: {error}") from error


def masked_dump(settings: Settings) -> dict[str, Any]:
    """The effective settings as plain data, secrets shown as ``**********`` (secret fields, and
    the password of a URL's ``user:password@`` part)."""
    data = settings.model_dump(mode="json")
    alertmanager = data.get("alertmanager")
    if isinstance(alertmanager, dict) and isinstance(alertmanager.get("url"), str):
        alertmanager["url"] = _mask_url(alertmanager["url"])
    return data


def _mask_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:**********@{host}"))
