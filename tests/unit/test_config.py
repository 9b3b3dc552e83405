"""Settings from YAML, environment and defaults; errors name the key."""

import warnings
from pathlib import Path

import pytest

from logsig.cli import main
from logsig.config import UnknownVariableWarning, load_settings, masked_dump
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

    def test_a_directory_is_named_as_one(self, tmp_path: Path) -> None:
        """A settings path that is a directory is said to be one, not to be missing."""
        with pytest.raises(ConfigError) as raised:
            load_settings(tmp_path)
        assert f"settings path {tmp_path} is a directory; give the settings YAML file in it" == str(raised.value)

    def test_sasl_needs_mechanism_and_user(self) -> None:
        """A SASL protocol without mechanism and user names both values in the error."""
        with pytest.raises(ConfigError, match="sasl_mechanism=None"):
            load_settings(kafka={"security_protocol": "SASL_SSL"})

    def test_sasl_needs_a_password(self) -> None:
        """SASL with mechanism and user but no password is refused at start, naming the setting."""
        with pytest.raises(ConfigError, match="sasl_password"):
            load_settings(kafka={"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512",
                                 "sasl_username": "logsig"})

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


class TestMistakes:
    """Each common settings mistake gets a message naming the variable, key, file or line."""

    def test_single_underscore_variable_names_the_setting(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """LOGSIG_KAFKA_BOOTSTRAP_SERVERS is an error naming LOGSIG_KAFKA__BOOTSTRAP_SERVERS."""
        monkeypatch.setenv("LOGSIG_KAFKA_BOOTSTRAP_SERVERS", "kafka:9092")
        with pytest.raises(ConfigError) as raised:
            load_settings()
        assert ("environment variable LOGSIG_KAFKA_BOOTSTRAP_SERVERS names no setting; did you mean "
                "LOGSIG_KAFKA__BOOTSTRAP_SERVERS (kafka.bootstrap_servers)? Levels are separated by two "
                "underscores") == str(raised.value)

    def test_misspelt_key_in_a_variable_names_the_close_one(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A close misspelling of a key of a known section suggests that key's variable."""
        monkeypatch.setenv("LOGSIG_KAFKA__BOOTSTRAP_SERVER", "kafka:9092")
        with pytest.raises(ConfigError, match=r"did you mean LOGSIG_KAFKA__BOOTSTRAP_SERVERS \("):
            load_settings()

    def test_misspelt_section_in_a_variable_names_the_close_one(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A close misspelling of a section suggests the real variable."""
        monkeypatch.setenv("LOGSIG_KAKFA__GROUP_ID", "g")
        with pytest.raises(ConfigError, match=r"did you mean LOGSIG_KAFKA__GROUP_ID \(kafka\.group_id\)"):
            load_settings()

    def test_unrelated_variable_is_a_warning(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A LOGSIG_ variable close to no setting is ignored with an UnknownVariableWarning naming it."""
        monkeypatch.setenv("LOGSIG_COLOUR", "blue")
        with pytest.warns(UnknownVariableWarning, match="environment variable LOGSIG_COLOUR names no setting"):
            settings = load_settings()
        assert "logsig" == settings.kafka.group_id

    def test_test_suite_variables_are_not_settings_mistakes(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """LOGSIG_TEST_* (the integration fixture's variables) raise nothing and warn nothing."""
        monkeypatch.setenv("LOGSIG_TEST_STATE_DIR", "/tmp/x")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert 9464 == load_settings().http.port

    def test_variables_below_a_mapping_are_settings(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """LOGSIG_DECODE__TOPICS__<topic>__ENVELOPE sets the per-topic decode settings."""
        monkeypatch.setenv("LOGSIG_DECODE__TOPICS__vllm__ENVELOPE", "json")
        assert "json" == load_settings().decode.topics["vllm"].envelope

    def test_invalid_value_from_the_environment_names_the_variable(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A bad value from the environment names the key and the variable it came from."""
        monkeypatch.setenv("LOGSIG_HTTP__PORT", "lots")
        with pytest.raises(ConfigError, match=r"  http\.port: .* \(from environment variable LOGSIG_HTTP__PORT\)$"):
            load_settings()

    def test_invalid_value_from_the_environment_does_not_blame_the_file(self, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
        """With a good settings file, a bad variable's message says the environment, not the file."""
        path = tmp_path / "s.yaml"
        path.write_text("http:\n  port: 9464\n")
        monkeypatch.setenv("LOGSIG_HTTP__PORT", "lots")
        with pytest.raises(ConfigError) as raised:
            load_settings(path)
        assert ["invalid settings from the environment:", "(from environment variable LOGSIG_HTTP__PORT)"] == [
            str(raised.value).splitlines()[0], str(raised.value).splitlines()[1][-45:]]

    def test_section_check_names_the_variables_that_set_the_section(self, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
        """A section's own check failing on a variable's value names that variable, and the file only if it sets the section."""
        path = tmp_path / "s.yaml"
        path.write_text("http:\n  port: 9464\n")
        monkeypatch.setenv("LOGSIG_KAFKA__SECURITY_PROTOCOL", "SASL_SSL")
        with pytest.raises(ConfigError) as raised:
            load_settings(path)
        assert ("invalid settings from the environment:\n  kafka: Value error, security_protocol=SASL_SSL needs "
                "sasl_mechanism and sasl_username (got sasl_mechanism=None, sasl_username=None) (kafka set by "
                "environment variable LOGSIG_KAFKA__SECURITY_PROTOCOL)") == str(raised.value)

    def test_section_set_by_file_and_environment_names_both(self, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
        """When the file and a variable both set the failing section, the message names both."""
        path = tmp_path / "s.yaml"
        path.write_text("kafka:\n  security_protocol: SASL_SSL\n")
        monkeypatch.setenv("LOGSIG_KAFKA__SASL_MECHANISM", "PLAIN")
        with pytest.raises(ConfigError) as raised:
            load_settings(path)
        assert (f"invalid settings in {path}:\n  kafka: Value error, security_protocol=SASL_SSL needs sasl_mechanism "
                f"and sasl_username (got sasl_mechanism=PLAIN, sasl_username=None) (kafka set in {path} and by "
                f"environment variable LOGSIG_KAFKA__SASL_MECHANISM)") == str(raised.value)

    def test_unparsable_list_names_the_variable_and_value(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A list variable that is not JSON is named with its value and the JSON form."""
        monkeypatch.setenv("LOGSIG_KAFKA__TOPICS", "a,b")
        with pytest.raises(ConfigError) as raised:
            load_settings()
        assert ("cannot parse environment variable LOGSIG_KAFKA__TOPICS='a,b': list, mapping and section values "
                "are JSON, e.g. LOGSIG_KAFKA__TOPICS='[\"a\", \"b\"]'") == str(raised.value)

    def test_unknown_key_suggests_the_closest(self, tmp_path: Path) -> None:
        """A misspelt key in the file names the closest key of its section."""
        path = tmp_path / "s.yaml"
        path.write_text("kafka:\n  bootstrap_server: x:1\nhtpp:\n  port: 1\n")
        with pytest.raises(ConfigError) as raised:
            load_settings(path)
        assert (f"invalid settings in {path}:\n  kafka.bootstrap_server: unknown key; did you mean "
                "kafka.bootstrap_servers?\n  htpp: unknown key; did you mean http?") == str(raised.value)

    def test_unknown_key_far_from_all_says_only_unknown(self, tmp_path: Path) -> None:
        """A key like no other gets no suggestion."""
        path = tmp_path / "s.yaml"
        path.write_text("kafka:\n  zzz: 1\n")
        with pytest.raises(ConfigError) as raised:
            load_settings(path)
        assert f"invalid settings in {path}:\n  kafka.zzz: unknown key" == str(raised.value)

    def test_yaml_error_names_the_file_and_line(self, tmp_path: Path) -> None:
        """A YAML syntax error gives FILE:LINE:COLUMN, not <unicode string>."""
        path = tmp_path / "s.yaml"
        path.write_text("kafka:\n  topics: [a\n  group_id: g\n")
        with pytest.raises(ConfigError) as raised:
            load_settings(path)
        assert (f"settings file {path} is not valid YAML: {path}:3:11: expected ',' or ']', but got ':' "
                "(while parsing a flow sequence at line 2, column 11)") == str(raised.value)


class TestNewUserMistakes:
    def test_an_empty_topic_list_is_refused(self) -> None:
        """``kafka.topics: []`` would make the consumer retry forever; it is a settings error."""
        with pytest.raises(ConfigError, match=r"kafka\.topics: List should have at least 1 item"):
            load_settings(kafka={"topics": []})

    def test_a_password_in_the_alertmanager_url_is_masked(self) -> None:
        """``config show`` never prints the password of ``user:password@`` in a URL."""
        settings = load_settings(alertmanager={"url": "http://user:s3cret@am:9093/"})
        assert "http://user:**********@am:9093/" == masked_dump(settings)["alertmanager"]["url"]


class TestTopicsApart:
    def test_an_output_topic_among_the_input_topics_is_refused(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """``output_topic`` equal to an input topic is refused, naming the topic and the variable."""
        monkeypatch.setenv("LOGSIG_KAFKA__OUTPUT_TOPIC", "inference-logs")
        with pytest.raises(ConfigError) as raised:
            load_settings()
        assert ("invalid settings from the environment:\n  kafka: Value error, output_topic 'inference-logs' is "
                "also in topics: logsig would read its own events back as log lines; give it a topic it does "
                "not consume (kafka set by environment variable LOGSIG_KAFKA__OUTPUT_TOPIC)") == str(raised.value)

    def test_a_dead_letter_topic_among_the_input_topics_is_refused(self) -> None:
        """``dead_letter_topic`` equal to an input topic is refused, naming it."""
        with pytest.raises(ConfigError, match="dead_letter_topic 'b' is also in topics"):
            load_settings(kafka={"topics": ["a", "b"], "dead_letter_topic": "b"})

    def test_a_line_topic_among_the_input_topics_is_refused(self) -> None:
        """``line_topic`` equal to an input topic is refused, naming it."""
        with pytest.raises(ConfigError, match="line_topic 'a' is also in topics"):
            load_settings(kafka={"topics": ["a"], "line_topic": "a"})

    def test_distinct_topics_load(self) -> None:
        """Outputs apart from the inputs load as given."""
        kafka = load_settings(kafka={"topics": ["a"], "output_topic": "o", "dead_letter_topic": "d"}).kafka
        assert (["a"], "o", "d") == (kafka.topics, kafka.output_topic, kafka.dead_letter_topic)

    def test_the_cli_exits_2_naming_the_topic(self, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
        """``logsig config show`` with the output topic among the inputs exits 2 and names it on stderr."""
        monkeypatch.setenv("LOGSIG_KAFKA__OUTPUT_TOPIC", "inference-logs")
        code = main(["config", "show"])
        assert (2, True) == (code, "output_topic 'inference-logs' is also in topics" in capsys.readouterr().err)


class TestBootstrapServers:
    @pytest.mark.parametrize(("servers", "problem"), [
        ("", "kafka.bootstrap_servers: Value error, is empty"),
        ("not a host", "entry 1 'not a host': contains a space"),
        ("a:9092,,b:9092", "entry 2 '': is empty (a stray comma?)"),
        (":9092", "entry 1 ':9092': has no host"),
        ("a:0", "entry 1 'a:0': port '0' is not a number from 1 to 65535"),
        ("a:65536", "entry 1 'a:65536': port '65536' is not a number"),
        ("a:x", "entry 1 'a:x': port 'x' is not a number"),
        ("a:1:2", "entry 1 'a:1:2': is not host:port (an IPv6 address goes in brackets"),
    ])
    def test_a_bad_entry_is_refused(self, servers: str, problem: str) -> None:
        """Each unusable entry is refused with what is wrong with it."""
        with pytest.raises(ConfigError) as raised:
            load_settings(kafka={"bootstrap_servers": servers})
        assert (True, str(raised.value)) == (problem in str(raised.value), str(raised.value))

    @pytest.mark.parametrize("servers", ["kafka-0:9092", "a:1, b:65535", "broker", "[::1]:9092", "::1",
                                         "10.0.0.5:9093"])
    def test_usable_entries_load(self, servers: str) -> None:
        """host, host:port, bracketed and bare IPv6 entries load unchanged."""
        assert servers == load_settings(kafka={"bootstrap_servers": servers}).kafka.bootstrap_servers

    def test_an_empty_variable_exits_2(self, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
        """``LOGSIG_KAFKA__BOOTSTRAP_SERVERS=`` makes ``config show`` exit 2 naming the setting and variable."""
        monkeypatch.setenv("LOGSIG_KAFKA__BOOTSTRAP_SERVERS", "")
        code = main(["config", "show"])
        err = capsys.readouterr().err
        assert (2, True, True) == (code, "kafka.bootstrap_servers: Value error, is empty" in err,
                                   "LOGSIG_KAFKA__BOOTSTRAP_SERVERS" in err)
