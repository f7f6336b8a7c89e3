"""Tascer for Python: governed, validated, provable agent sessions on
Tascer's Rust core.

``query()`` and the message types follow the official Agent SDK;
:class:`TascerAgent` adds the validation wrapper (per-tool gates, evidence,
``get_validation_report()``, ``verify_proofs()``); :func:`register_gate`
adds gates written in Python. See docs/python.md.
"""

from ._tascer import __version__
from .gates import register_gate, registered_gates, unregister_gate
from .sdk_wrapper import (
    EVIDENCE_TYPES,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    TascerClient,
    GateOutcome,
    TascerAgent,
    TascerAgentOptions,
    ToolValidationConfig,
    ValidationRecord,
    ValidationReport,
    query,
)
from .types import (
    AssistantMessage,
    ContentBlock,
    Message,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

__all__ = [
    "EVIDENCE_TYPES",
    "ClaudeAgentOptions",
    "ClaudeSDKClient",
    "TascerClient",
    "AssistantMessage",
    "ContentBlock",
    "GateOutcome",
    "Message",
    "ResultMessage",
    "StreamEvent",
    "SystemMessage",
    "TascerAgent",
    "TascerAgentOptions",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "ToolValidationConfig",
    "UserMessage",
    "ValidationRecord",
    "ValidationReport",
    "__version__",
    "query",
    "register_gate",
    "registered_gates",
    "unregister_gate",
]
