"""The assemble stage: partial lines and multi-line tracebacks joined per stream.

``Assembler`` takes decoded events in record order and returns complete events; it also reports the
lowest offset each partition still holds in an open group, so commits never pass it.
"""

from logsig.assemble.assembler import Assembler

__all__ = ["Assembler"]
