"""Message types, in the shapes of the official Python Agent SDK
(``claude_agent_sdk``): code written for it ports with an import change.

Each message the Rust core yields is a Claude Code stream-json frame;
:func:`parse_message` turns it into one of these dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Union


@dataclass
class TextBlock:
    """Text the model wrote."""

    text: str


@dataclass
class ThinkingBlock:
    """The model's extended thinking."""

    thinking: str
    signature: str = ""


@dataclass
class ToolUseBlock:
    """A tool call the model made."""

    id: str
    name: str
    input: Dict[str, Any]


@dataclass
class ToolResultBlock:
    """The result of a tool call, as the model sees it."""

    tool_use_id: str
    content: Union[str, List[Dict[str, Any]], None] = None
    is_error: Optional[bool] = None


ContentBlock = Union[TextBlock, ThinkingBlock, ToolUseBlock, ToolResultBlock]


@dataclass
class UserMessage:
    """A user frame: the prompt, or tool results."""

    content: Union[str, List[ContentBlock]]
    parent_tool_use_id: Optional[str] = None


@dataclass
class AssistantMessage:
    """One model response."""

    content: List[ContentBlock]
    model: str
    parent_tool_use_id: Optional[str] = None


@dataclass
class SystemMessage:
    """A system frame such as ``init``."""

    subtype: str
    data: Dict[str, Any]


@dataclass
class ResultMessage:
    """The closing frame of a turn."""

    subtype: str
    duration_ms: int
    duration_api_ms: int
    is_error: bool
    num_turns: int
    session_id: str
    total_cost_usd: Optional[float] = None
    usage: Optional[Dict[str, Any]] = None
    result: Optional[str] = None
    structured_output: Any = None


@dataclass
class StreamEvent:
    """A raw streaming event (only with partial messages on)."""

    uuid: str
    session_id: str
    event: Dict[str, Any]
    parent_tool_use_id: Optional[str] = None


Message = Union[UserMessage, AssistantMessage, SystemMessage, ResultMessage, StreamEvent]


def _block(raw: Dict[str, Any]) -> ContentBlock:
    kind = raw.get("type")
    if kind == "text":
        return TextBlock(text=raw.get("text", ""))
    if kind == "thinking":
        return ThinkingBlock(thinking=raw.get("thinking", ""), signature=raw.get("signature", ""))
    if kind == "tool_use":
        return ToolUseBlock(id=raw["id"], name=raw["name"], input=raw.get("input") or {})
    if kind == "tool_result":
        return ToolResultBlock(
            tool_use_id=raw["tool_use_id"],
            content=raw.get("content"),
            is_error=raw.get("is_error"),
        )
    raise ValueError(f"unknown content block type {kind!r}")


def _blocks(content: Any) -> Union[str, List[ContentBlock]]:
    if isinstance(content, str):
        return content
    return [_block(b) for b in content or []]


def parse_message(frame: Dict[str, Any]) -> Message:
    """One stream-json frame as a typed message."""
    kind = frame.get("type")
    if kind == "assistant":
        message = frame["message"]
        content = _blocks(message.get("content"))
        return AssistantMessage(
            content=content if isinstance(content, list) else [TextBlock(content)],
            model=message.get("model", ""),
            parent_tool_use_id=frame.get("parent_tool_use_id"),
        )
    if kind == "user":
        return UserMessage(
            content=_blocks(frame["message"].get("content")),
            parent_tool_use_id=frame.get("parent_tool_use_id"),
        )
    if kind == "system":
        return SystemMessage(subtype=frame.get("subtype", ""), data=frame)
    if kind == "result":
        return ResultMessage(
            subtype=frame.get("subtype", ""),
            duration_ms=frame.get("duration_ms", 0),
            duration_api_ms=frame.get("duration_api_ms", 0),
            is_error=bool(frame.get("is_error")),
            num_turns=frame.get("num_turns", 0),
            session_id=frame.get("session_id", ""),
            total_cost_usd=frame.get("total_cost_usd"),
            usage=frame.get("usage"),
            result=frame.get("result"),
            structured_output=frame.get("structured_output"),
        )
    if kind == "stream_event":
        return StreamEvent(
            uuid=frame.get("uuid", ""),
            session_id=frame.get("session_id", ""),
            event=frame.get("event") or {},
            parent_tool_use_id=frame.get("parent_tool_use_id"),
        )
    raise ValueError(f"unknown message type {kind!r}")


__all__ = [
    "AssistantMessage",
    "ContentBlock",
    "Message",
    "ResultMessage",
    "StreamEvent",
    "SystemMessage",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "UserMessage",
    "parse_message",
]
