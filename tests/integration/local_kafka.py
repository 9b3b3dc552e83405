"""``deploy/local/kafka.py`` loaded as a module (it is a script, not part of the package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

KAFKA_SCRIPT = Path(__file__).resolve().parents[2] / "deploy" / "local" / "kafka.py"


def load_kafka_script() -> ModuleType:
    """The module, loaded once per process (``start``, ``stop``, ``running``, ...)."""
    name = "logsig_local_kafka"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, KAFKA_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
