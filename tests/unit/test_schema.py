"""The committed incident JSON Schema matches the model."""

import json
from pathlib import Path

from logsig.cli import main
from logsig.incident import SCHEMA_VERSION, incident_json_schema

COMMITTED = Path(__file__).parents[2] / f"logsig/schema/incident-v{SCHEMA_VERSION}.json"


class TestSchema:
    def test_committed_copy_equals_model(self) -> None:
        """logsig/schema/incident-v<SCHEMA_VERSION>.json is what `logsig schema` prints (regenerate it when the model changes)."""
        assert json.loads(COMMITTED.read_text(encoding="utf-8")) == incident_json_schema()

    def test_cli_prints_the_schema(self, capsys) -> None:  # type: ignore[no-untyped-def]
        """`logsig schema` writes the schema as JSON to stdout."""
        assert 0 == main(["schema"])
        assert incident_json_schema() == json.loads(capsys.readouterr().out)

    def test_every_earlier_version_stays_committed(self) -> None:
        """The versioning rule keeps the schema of each earlier version beside the current one."""
        committed = sorted(p.name for p in COMMITTED.parent.glob("incident-v*.json"))
        assert [f"incident-v{v}.json" for v in range(1, SCHEMA_VERSION + 1)] == committed
