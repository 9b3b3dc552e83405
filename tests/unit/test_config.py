"""Settings from YAML, environment and defaults; errors name the key."""

from pathlib import Path

import pytest

from logsig.config import load_settings, masked_dump
from logsig.errors import ConfigError


class TestLoadSettings:
    def test_defaults_without_file(self) -> None:
        """Without a file every section has its documented default."""
        settings = load_settings()
        assert ("logsig", ["inference-logs"], 9464) == (
            settings.kafka.group_id, settings.kafka.topics, settings.http.port)

    def test_yaml_file_is_read(self, tmp_path: Path) -> None:
        """Values in the YAML file replace the defaults."""
        path = tmp_path / "s.yaml"
        path.write_text("kafka:\n  group_id: g1\n  topics: [a, b]\nhttp:\n  port: 9000\n")
        settings = load_settings(path)
        assert ("g1", ["a", "b"], 9000) == (settings.kafka.group_id, settings.kafka.topics, settings.http.port)

    def test_environment_overrides_file(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """LOGSIG_KAFKA__GROUP_ID wins over the file."""
        path = tmp_path / "s.yaml"
        path.write_text("kafka:\n  group_id: from-file\n")
        monkeypatch.setenv("LOGSIG_KAFKA__GROUP_ID", "from-env")
        assert "from-env" == load_settings(path).kafka.group_id

    def test_unknown_key_is_named(self, tmp_path: Path) -> None:
        """A misspelt key is rejected with its dotted path."""
        path = tmp_path / "s.yaml"
        path.write_text("kafka:\n  bootstrap_server: x:1\n")
        with pytest.raises(ConfigError, match=r"kafka\.bootstrap_server: unknown key"):
            load_settings(path)

    def test_invalid_value_is_named(self, tmp_path: Path) -> None:
        """A value of the wrong type is rejected naming its key."""
        path = tmp_path / "s.yaml"
        path.write_text("http:\n  port: lots\n")
        with pytest.raises(ConfigError, match=r"http\.port"):
            load_settings(path)

    def test_missing_file_is_an_error(self, tmp_path: Path) -> None:
        """A settings path that does not exist is reported."""
        with pytest.raises(ConfigError, match="not found"):
            load_settings(tmp_path / "none.yaml")

    def test_sasl_needs_mechanism_and_user(self) -> None:
        """A SASL protocol without mechanism and user names both values in the error."""
        with pytest.raises(ConfigError, match="sasl_mechanism=None"):
            load_settings(kafka={"security_protocol": "SASL_SSL"})

    def test_secrets_are_masked(self) -> None:
        """config show never prints the SASL password."""
        settings = load_settings(kafka={"security_protocol": "SASL_SSL", "sasl_mechanism": "PLAIN",
                                        "sasl_username": "u", "sasl_password": "hunter2"})
        dumped = masked_dump(settings)
        assert "hunter2" not in str(dumped)
        assert "**********" == dumped["kafka"]["sasl_password"]

    def test_example_settings_file_loads(self) -> None:
        """The commented example in deploy/ is valid."""
        example = Path(__file__).parents[2] / "deploy/logsig.example.yaml"
        assert "logsig" == load_settings(example).kafka.group_id

    def test_yaml_syntax_error_is_a_config_error(self, tmp_path: Path) -> None:
        """Broken YAML is reported as a settings error, not a traceback."""
        path = tmp_path / "s.yaml"
        path.write_text("kafka: [1,2\n")
        with pytest.raises(ConfigError, match="not valid YAML"):
            load_settings(path)

    def test_top_level_list_is_a_config_error(self, tmp_path: Path) -> None:
        """A file that is not a mapping of sections says so."""
        path = tmp_path / "s.yaml"
        path.write_text("- kafka\n")
        with pytest.raises(ConfigError, match="must hold a mapping"):
            load_settings(path)

    def test_env_list_hint(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A list given as a bare comma list in the environment explains the JSON form."""
        monkeypatch.setenv("LOGSIG_KAFKA__TOPICS", "a,b")
        with pytest.raises(ConfigError, match="JSON"):
            load_settings()
