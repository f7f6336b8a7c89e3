"""The validation wrapper: :class:`TascerAgent` runs ``query()`` with every
tool call governed, validated by gates, captured as evidence and proven in a
hash-chained ledger, then reports on it.

The module path follows the validation wrapper's specification::

    from tascer.sdk_wrapper import TascerAgent, TascerAgentOptions, ToolValidationConfig
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Dict, List, Optional, Union

from . import _tascer
from .gates import registered_gates
from .types import Message, parse_message

EVIDENCE_TYPES = ("stdout", "stderr", "diff", "file")
"""The evidence kinds a record can keep."""


@dataclass
class ToolValidationConfig:
    """How one tool's calls are validated.

    ``pre_gates`` run before the call (a failure blocks it), ``post_gates``
    after (a failure marks it failed); both add to the agent's default
    gates. ``evidence_types`` are kept in the ledger (``stdout``, ``stderr``,
    ``diff``, ``file``); with ``require_proof`` a call whose evidence could
    not be captured fails. ``timeout_ms`` bounds each gate.
    """

    pre_gates: List[str] = field(default_factory=list)
    post_gates: List[str] = field(default_factory=list)
    evidence_types: List[str] = field(default_factory=list)
    timeout_ms: int = 30000
    require_proof: bool = True

    def to_settings(self) -> Dict[str, Any]:
        """The tool's entry of the ``validation`` settings section."""
        unknown = [e for e in self.evidence_types if e not in EVIDENCE_TYPES]
        if unknown:
            raise ValueError(f"unknown evidence type(s) {unknown} (expected {list(EVIDENCE_TYPES)})")
        return {
            "pre_gates": list(self.pre_gates),
            "post_gates": list(self.post_gates),
            "evidence": list(self.evidence_types),
            "timeout_ms": self.timeout_ms,
            "require_proof": self.require_proof,
        }


@dataclass
class TascerAgentOptions:
    """The session's options: the Agent SDK's (``model``, ``cwd``,
    ``permission_mode``, ``allowed_tools``, …) and the validation's.

    ``evidence_dir`` is the Tascer home that keeps the ledger and its
    evidence (default ``$TASCER_HOME``, else ``~/.tascer``). ``base_url``
    and ``api_key`` (else ``ANTHROPIC_BASE_URL``/``ANTHROPIC_API_KEY`` or
    the OpenAI-compatible variables) reach the model.
    """

    tool_configs: Dict[str, ToolValidationConfig] = field(default_factory=dict)
    default_pre_gates: List[str] = field(default_factory=list)
    default_post_gates: List[str] = field(default_factory=list)
    capture_git_state: bool = True
    env_allowlist: Optional[List[str]] = None
    evidence_dir: Optional[Union[str, Path]] = None
    generate_proofs: bool = True
    proof_algorithm: str = "sha256"
    model: Optional[str] = None
    cwd: Optional[Union[str, Path]] = None
    system_prompt: Optional[str] = None
    append_system_prompt: Optional[str] = None
    max_turns: Optional[int] = None
    max_budget_usd: Optional[float] = None
    permission_mode: Optional[str] = None
    allowed_tools: List[str] = field(default_factory=list)
    disallowed_tools: List[str] = field(default_factory=list)
    tools: Optional[List[str]] = None
    env: Dict[str, str] = field(default_factory=dict)
    resume: Optional[str] = None
    setting_sources: Optional[List[str]] = None
    provider: Optional[str] = None
    base_url: Optional[str] = None
    api_key: Optional[str] = None

    def to_json(self) -> str:
        """The options as the Rust core reads them."""
        if self.proof_algorithm.lower() not in ("sha256", "sha-256"):
            raise ValueError(
                f"proof_algorithm {self.proof_algorithm!r} is not supported: "
                "Tascer's ledger proves with SHA-256"
            )
        validation: Dict[str, Any] = {
            "capture_git_state": self.capture_git_state,
            "generate_proofs": self.generate_proofs,
            "per_tool": {tool: c.to_settings() for tool, c in self.tool_configs.items()},
        }
        if self.default_pre_gates or self.default_post_gates:
            validation["defaults"] = {
                "pre_gates": list(self.default_pre_gates),
                "post_gates": list(self.default_post_gates),
            }
        if self.env_allowlist is not None:
            validation["env_allowlist"] = list(self.env_allowlist)
        options: Dict[str, Any] = {
            "validation": validation,
            "model": self.model,
            "cwd": None if self.cwd is None else str(self.cwd),
            "home": None if self.evidence_dir is None else str(self.evidence_dir),
            "system_prompt": self.system_prompt,
            "append_system_prompt": self.append_system_prompt,
            "max_turns": self.max_turns,
            "max_budget_usd": self.max_budget_usd,
            "permission_mode": self.permission_mode,
            "allowed_tools": list(self.allowed_tools),
            "disallowed_tools": list(self.disallowed_tools),
            "tools": self.tools,
            "env": dict(self.env),
            "resume": self.resume,
            "setting_sources": self.setting_sources,
            "provider": self.provider,
            "base_url": self.base_url,
            "api_key": self.api_key,
            "env_allowlist": self.env_allowlist,
        }
        return json.dumps(options)


@dataclass
class GateOutcome:
    """One gate's result on one call."""

    gate: str
    passed: bool
    message: str = ""
    duration_ms: int = 0

    @classmethod
    def from_dict(cls, raw: Dict[str, Any]) -> "GateOutcome":
        """From the record's JSON."""
        return cls(
            gate=raw.get("gate", ""),
            passed=bool(raw.get("passed")),
            message=raw.get("message", ""),
            duration_ms=raw.get("duration_ms", 0),
        )

    def to_dict(self) -> Dict[str, Any]:
        """As JSON-ready data."""
        return {
            "gate": self.gate,
            "passed": self.passed,
            "message": self.message,
            "duration_ms": self.duration_ms,
        }


@dataclass
class ValidationRecord:
    """One tool call as the ledger proves it: status (``validated``,
    ``blocked``, ``failed``), gate results, evidence and proof hash."""

    tool_use_id: str
    tool_name: str
    status: str
    input: Dict[str, Any]
    pre_gates: List[GateOutcome]
    post_gates: List[GateOutcome]
    evidence: Dict[str, List[str]]
    proof_hash: Optional[str]
    proof_valid: bool
    raw: Dict[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def from_dict(cls, raw: Dict[str, Any]) -> "ValidationRecord":
        """From a report entry (``{"record": …, "proof_valid": …}``) or a
        dict :meth:`to_dict` made."""
        record = raw.get("record", raw)
        return cls(
            tool_use_id=record.get("tool_use_id", ""),
            tool_name=record.get("tool", record.get("tool_name", "")),
            status=record.get("status", ""),
            input=record.get("input") or {},
            pre_gates=[GateOutcome.from_dict(g) for g in record.get("pre_gates", [])],
            post_gates=[GateOutcome.from_dict(g) for g in record.get("post_gates", [])],
            evidence=record.get("evidence_by_kind", record.get("evidence", {})) or {},
            proof_hash=record.get("proof_hash"),
            proof_valid=bool(raw.get("proof_valid", record.get("proof_valid", False))),
            raw=record,
        )

    def to_dict(self) -> Dict[str, Any]:
        """As JSON-ready data (what :meth:`from_dict` reads back)."""
        return {
            "tool_use_id": self.tool_use_id,
            "tool_name": self.tool_name,
            "status": self.status,
            "input": self.input,
            "pre_gates": [g.to_dict() for g in self.pre_gates],
            "post_gates": [g.to_dict() for g in self.post_gates],
            "evidence": self.evidence,
            "proof_hash": self.proof_hash,
            "proof_valid": self.proof_valid,
        }

    @property
    def passed(self) -> bool:
        """True when the call ran and every gate passed."""
        return self.status == "validated"


@dataclass
class ValidationReport:
    """The session's validation: every record, in call order."""

    session_id: str
    records: List[ValidationRecord]
    raw: Dict[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def from_dict(cls, raw: Dict[str, Any]) -> "ValidationReport":
        """From the Rust core's report JSON (or :meth:`to_dict`)."""
        entries = raw.get("tools", raw.get("records", []))
        return cls(
            session_id=raw.get("session_id", ""),
            records=[ValidationRecord.from_dict(e) for e in entries],
            raw=raw,
        )

    def to_dict(self) -> Dict[str, Any]:
        """As JSON-ready data."""
        return {
            "session_id": self.session_id,
            "records": [r.to_dict() for r in self.records],
        }


class TascerAgent:
    """``query()`` with every tool call validated and proven.

    >>> agent = TascerAgent(TascerAgentOptions(tool_configs={
    ...     "Bash": ToolValidationConfig(post_gates=["exit_code_zero"])}))
    >>> async for message in agent.query("run the tests"):
    ...     print(message)
    >>> report = agent.get_validation_report()
    >>> assert agent.verify_proofs()
    """

    def __init__(self, options: Optional[TascerAgentOptions] = None) -> None:
        self.options = options or TascerAgentOptions()
        self._session: Optional[Any] = None
        self.last_verification: Optional[Dict[str, Any]] = None

    def _open(self) -> Any:
        if self._session is None:
            self._session = _tascer.Session(self.options.to_json(), registered_gates())
        return self._session

    @property
    def session_id(self) -> Optional[str]:
        """The session's id once it started."""
        return None if self._session is None else self._session.session_id

    async def connect(self) -> None:
        """Opens the session now (``query`` opens it when needed)."""
        await asyncio.to_thread(self._open)

    async def query(self, prompt: str) -> AsyncIterator[Message]:
        """Sends ``prompt``; yields the turn's messages, ending with its
        :class:`~tascer.types.ResultMessage`."""
        session = await asyncio.to_thread(self._open)
        await asyncio.to_thread(session.query, prompt)
        # One thread reads the turn (each read releases the GIL while it
        # waits) and hands the frames to this loop: one hop per message,
        # not a thread-pool round trip per message.
        loop = asyncio.get_running_loop()
        frames: "asyncio.Queue[Union[str, None, BaseException]]" = asyncio.Queue()

        def read_turn() -> None:
            try:
                while True:
                    frame = session.next_message()
                    loop.call_soon_threadsafe(frames.put_nowait, frame)
                    if frame is None:
                        return
            except BaseException as err:  # handed to the consumer
                loop.call_soon_threadsafe(frames.put_nowait, err)

        threading.Thread(target=read_turn, name="tascer-turn", daemon=True).start()
        while True:
            item = await frames.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield parse_message(json.loads(item))

    def get_validation_report(self) -> ValidationReport:
        """Every tool call of the session with its gates, evidence and
        proof."""
        return ValidationReport.from_dict(json.loads(self._open().validation_report()))

    def verify_proofs(self) -> bool:
        """Verifies the session's ledger (hashes, chain, evidence, head
        signature); the details stay in :attr:`last_verification`."""
        self.last_verification = json.loads(self._open().verify_proofs())
        return bool(self.last_verification.get("ok"))

    def write_ci_report(self, path: Union[str, Path] = ".ci/proof-report.json") -> bool:
        """Writes the proof report a CI job keeps (``success``, ``records``,
        ``verification``) and returns ``success``."""
        success = self.verify_proofs()
        report = self.get_validation_report()
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        document = {
            "success": success,
            "session_id": report.session_id,
            "records": [r.to_dict() for r in report.records],
            "verification": self.last_verification,
        }
        out.write_text(json.dumps(document, indent=2) + "\n")
        return success

    def close(self) -> None:
        """Ends the session (it stays stored: ``resume`` continues it)."""
        if self._session is not None:
            self._session.close()

    async def __aenter__(self) -> "TascerAgent":
        await self.connect()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await asyncio.to_thread(self.close)


class TascerClient:
    """A multi-turn client in the shape of the official SDK's
    ``ClaudeSDKClient`` (``connect``, ``query``, ``receive_response``,
    ``disconnect``, ``async with``), so code written for it ports with an
    import change; ``agent`` gives the validation report and proofs.
    """

    def __init__(self, options: Optional[TascerAgentOptions] = None) -> None:
        self.agent = TascerAgent(options)
        self._turn: Optional[AsyncIterator[Message]] = None

    async def connect(self, prompt: Optional[str] = None) -> None:
        """Opens the session; with ``prompt``, sends it too."""
        await self.agent.connect()
        if prompt is not None:
            await self.query(prompt)

    async def query(self, prompt: str) -> None:
        """Sends ``prompt``; read the turn with :meth:`receive_response`."""
        if self._turn is not None:
            async for _ in self._turn:  # the previous turn, unread
                pass
        turn = self.agent.query(prompt)
        first = await turn.__anext__()

        async def rest() -> AsyncIterator[Message]:
            yield first
            async for message in turn:
                yield message

        self._turn = rest()

    async def receive_response(self) -> AsyncIterator[Message]:
        """The current turn's messages, ending with its result."""
        turn, self._turn = self._turn, None
        if turn is None:
            return
        async for message in turn:
            yield message

    async def disconnect(self) -> None:
        """Ends the session."""
        await asyncio.to_thread(self.agent.close)

    async def __aenter__(self) -> "TascerClient":
        await self.connect()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.disconnect()


ClaudeAgentOptions = TascerAgentOptions
"""The official SDK's name for the options, for code ported from it."""

ClaudeSDKClient = TascerClient
"""The official SDK's name for the client, for code ported from it."""


async def query(
    *, prompt: str, options: Optional[TascerAgentOptions] = None
) -> AsyncIterator[Message]:
    """One prompt as a governed session, like ``claude_agent_sdk.query``."""
    agent = TascerAgent(options)
    try:
        async for message in agent.query(prompt):
            yield message
    finally:
        await asyncio.to_thread(agent.close)


__all__ = [
    "ClaudeAgentOptions",
    "ClaudeSDKClient",
    "EVIDENCE_TYPES",
    "TascerClient",
    "GateOutcome",
    "TascerAgent",
    "TascerAgentOptions",
    "ToolValidationConfig",
    "ValidationRecord",
    "ValidationReport",
    "query",
]
