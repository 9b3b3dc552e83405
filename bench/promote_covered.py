"""Move the written-from excerpts the catalog now covers from ``incoming/`` into ``real_logs.jsonl``.

Usage: ``python bench/promote_covered.py``. An excerpt is covered when its key line alone raises an
incident whose primary is one of ``kinds.yaml``'s signatures for its kind; its id and that primary
are added to ``expected-promoted.yaml``, and the table tests (``test_builtin_catalog.py``,
``test_corpus_parts.py``) then hold it to both. Held-out excerpts are never touched.
"""

from __future__ import annotations

import json

from corpus_detection import CORPUS, kinds, primaries, read

from logsig.config import load_settings
from logsig.matchers.catalog.loader import load_catalog
from logsig.matchers.engine.engine import Engine
from logsig.pipeline import Pipeline

HEADER = """# Expected primary signature of the key line of written-from excerpts promoted from incoming/ by
# bench/promote_covered.py (each checked against kinds.yaml when promoted).
"""


def main() -> None:
    engine, table = Engine(load_catalog().signatures), kinds()
    settings = load_settings(decode={"multiline": {"enabled": False}}).decode
    covered, waiting, expected = [], [], []
    for excerpt in read("incoming/real_logs.jsonl"):
        found = primaries(Pipeline(engine, settings), [excerpt["lines"][excerpt["key_line_index"]]])
        if found[:1] and found[0] in table.get(excerpt["kind"], set()):
            covered.append(excerpt)
            expected.append(f"{excerpt['id']}: {found[0]}  # {excerpt['kind']}\n")
        else:
            waiting.append(excerpt)
    def dump(rows: list[dict[str, object]]) -> str:
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    (CORPUS / "real_logs.jsonl").write_text(dump(read("real_logs.jsonl") + covered), encoding="utf-8")
    (CORPUS / "incoming" / "real_logs.jsonl").write_text(dump(waiting), encoding="utf-8")
    table_path = CORPUS / "expected-promoted.yaml"
    head = "" if table_path.exists() else HEADER
    with table_path.open("a", encoding="utf-8") as out:
        out.write(head + "".join(expected))
    print(f"moved {len(covered)} covered excerpts; {len(waiting)} still waiting in incoming/")


if __name__ == "__main__":
    main()
