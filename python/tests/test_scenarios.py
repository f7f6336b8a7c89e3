"""The validation wrapper's five scenarios, each against a real mock model
server, with real files, a real git repository and the real ledger."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

import tascer
from tascer import (
    AssistantMessage,
    ResultMessage,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    register_gate,
    unregister_gate,
)
from tascer.sdk_wrapper import TascerAgent, ToolValidationConfig, ValidationRecord

from conftest import PYTHON, REPO, text, tool


def run(agent: TascerAgent, prompt: str) -> list:
    async def collect() -> list:
        return [m async for m in agent.query(prompt)]

    return asyncio.run(collect())


def test_basic_wrapped_query_with_a_report(ws) -> None:
    server = ws.model(
        tool("Write", {"file_path": "hello.txt", "content": "hello\n"}),
        text("Wrote it."),
    )
    agent = TascerAgent(
        ws.options(
            server,
            tool_configs={"Write": ToolValidationConfig(evidence_types=["diff", "file"])},
        )
    )
    messages = run(agent, "write hello.txt")
    uses = [b for m in messages if isinstance(m, AssistantMessage) for b in m.content]
    assert any(isinstance(b, ToolUseBlock) and b.name == "Write" for b in uses)
    results = [
        b
        for m in messages
        if isinstance(m, UserMessage) and isinstance(m.content, list)
        for b in m.content
        if isinstance(b, ToolResultBlock)
    ]
    assert len(results) == 1 and not results[0].is_error
    final = messages[-1]
    assert isinstance(final, ResultMessage) and final.subtype == "success"
    assert final.session_id == agent.session_id
    assert (ws.cwd / "hello.txt").read_text() == "hello\n"

    report = agent.get_validation_report()
    assert [r.tool_name for r in report.records] == ["Write"]
    record = report.records[0]
    assert record.status == "validated" and record.passed
    assert record.proof_hash and record.proof_valid
    assert set(record.evidence) == {"diff", "file"}
    # Records survive a round trip through plain data.
    again = ValidationRecord.from_dict(json.loads(json.dumps(record.to_dict())))
    assert again.to_dict() == record.to_dict()
    assert agent.verify_proofs()
    agent.close()


def test_read_only_reviewer_is_blocked_by_always_block(ws) -> None:
    server = ws.model(
        tool("Read", {"file_path": "README.md"}),
        tool("Write", {"file_path": "README.md", "content": "rewritten\n"}),
        tool("Bash", {"command": "touch made-by-bash"}),
        text("I could only read."),
    )
    (ws.cwd / "README.md").write_text("original\n")
    block = ToolValidationConfig(pre_gates=["always_block"])
    agent = TascerAgent(
        ws.options(server, tool_configs={"Write": block, "Edit": block, "Bash": block})
    )
    run(agent, "review the project")
    assert (ws.cwd / "README.md").read_text() == "original\n"
    assert not (ws.cwd / "made-by-bash").exists()
    statuses = {r.tool_name: r.status for r in agent.get_validation_report().records}
    assert statuses == {"Read": "validated", "Write": "blocked", "Bash": "blocked"}
    write = next(r for r in agent.get_validation_report().records if r.tool_name == "Write")
    assert [g.gate for g in write.pre_gates if not g.passed] == ["always_block"]
    assert agent.verify_proofs()
    agent.close()


CI_SCRIPT = REPO / "examples" / "python" / "ci_proof_report.py"


def test_ci_pipeline_writes_the_proof_report_and_fails_after_tampering(ws) -> None:
    server = ws.model(tool("Bash", {"command": "echo building"}), text("Built."))
    args = [PYTHON, str(CI_SCRIPT), "--home", str(ws.home), "--base-url", server.url]
    first = subprocess.run(args + ["build it"], cwd=ws.cwd, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    report = json.loads((ws.cwd / ".ci" / "proof-report.json").read_text())
    assert report["success"] is True
    assert [r["tool_name"] for r in report["records"]] == ["Bash"]
    session = report["session_id"]

    db = sqlite3.connect(ws.home / "tascer.db")
    changed = db.execute(
        "UPDATE ledger_entries SET payload = json_set(payload, '$.tool', 'Forged') "
        "WHERE session_id = ? AND kind = 'tool_record'",
        (session,),
    ).rowcount
    db.commit()
    db.close()
    assert changed >= 1

    second = subprocess.run(
        args + ["--verify-only", session], cwd=ws.cwd, capture_output=True, text=True
    )
    assert second.returncode == 1, second.stdout + second.stderr
    report = json.loads((ws.cwd / ".ci" / "proof-report.json").read_text())
    assert report["success"] is False
    assert report["verification"]["ok"] is False


def test_a_custom_python_gate_blocks_a_call(ws) -> None:
    seen = []

    @register_gate("no_rm")
    def no_rm(call, phase):
        seen.append((call["tool_name"], phase))
        command = call["input"].get("command", "")
        return "rm " not in command, "rm is not allowed here"

    @register_gate("raises")
    def raises(call, phase):
        raise KeyError("boom")

    try:
        (ws.cwd / "keep.txt").write_text("keep\n")
        server = ws.model(
            tool("Bash", {"command": "rm keep.txt"}),
            tool("Bash", {"command": "echo fine"}),
            tool("Read", {"file_path": "keep.txt"}),
            text("Done."),
        )
        agent = TascerAgent(
            ws.options(
                server,
                tool_configs={
                    "Bash": ToolValidationConfig(pre_gates=["no_rm"]),
                    "Read": ToolValidationConfig(post_gates=["raises"]),
                },
            )
        )
        messages = run(agent, "clean up")
        assert (ws.cwd / "keep.txt").exists()
        records = agent.get_validation_report().records
        assert [r.status for r in records] == ["blocked", "validated", "failed"]
        def gate(record, name):
            return next(g for g in record.pre_gates + record.post_gates if g.gate == name)

        assert not gate(records[0], "no_rm").passed
        assert gate(records[0], "no_rm").message == "rm is not allowed here"
        assert gate(records[1], "no_rm").passed
        assert not gate(records[2], "raises").passed
        assert "KeyError" in gate(records[2], "raises").message
        assert ("Bash", "pre") in seen
        errors = [
            b.content
            for m in messages
            if isinstance(m, UserMessage) and isinstance(m.content, list)
            for b in m.content
            if isinstance(b, ToolResultBlock) and b.is_error
        ]
        assert any("rm is not allowed here" in str(c) for c in errors)
        agent.close()
    finally:
        unregister_gate("no_rm")
        unregister_gate("raises")


def test_a_resumed_session_continues_its_validation_history(ws) -> None:
    # The mock plays the turn whose index is the number of assistant
    # messages in the history: the resumed session, which sends the whole
    # history, gets the third and fourth turns.
    model = ws.model(
        tool("Write", {"file_path": "a.txt", "content": "a\n"}),
        text("One."),
        tool("Write", {"file_path": "b.txt", "content": "b\n"}),
        text("Two."),
    )
    first = TascerAgent(ws.options(model))
    run(first, "write a")
    session = first.session_id
    first.close()

    second = TascerAgent(ws.options(model, resume=session))
    messages = run(second, "now write b")
    assert second.session_id == session
    assert isinstance(messages[-1], ResultMessage)
    report = second.get_validation_report()
    assert [r.input["file_path"] for r in report.records] == ["a.txt", "b.txt"]
    assert all(r.passed for r in report.records)
    assert second.verify_proofs()
    second.close()


def test_options_that_cannot_be_honoured_are_errors(ws) -> None:
    server = ws.model(text("unused"))
    with pytest.raises(ValueError, match="proof_algorithm"):
        TascerAgent(ws.options(server, proof_algorithm="md5")).options.to_json()
    with pytest.raises(ValueError, match="evidence type"):
        ToolValidationConfig(evidence_types=["screenshots"]).to_settings()
    agent = TascerAgent(
        ws.options(server, tool_configs={"Bash": ToolValidationConfig(pre_gates=["nope"])})
    )
    with pytest.raises(RuntimeError, match="nope"):
        run(agent, "go")
    assert tascer.__version__


def test_code_written_for_the_official_sdk_ports_with_an_import_change(ws) -> None:
    # As with claude_agent_sdk, but imported from tascer.
    from tascer import ClaudeAgentOptions, ClaudeSDKClient, query

    model = ws.model(
        tool("Write", {"file_path": "one.txt", "content": "1\n"}),
        text("First."),
        text("Second."),
    )
    options = ws.options(model)
    assert isinstance(options, ClaudeAgentOptions)

    async def conversation() -> list:
        results = []
        async with ClaudeSDKClient(options=options) as client:
            for prompt in ("write one", "and now?"):
                await client.query(prompt)
                async for message in client.receive_response():
                    if isinstance(message, ResultMessage):
                        results.append(message)
            report = client.agent.get_validation_report()
            assert [r.tool_name for r in report.records] == ["Write"]
        return results

    results = asyncio.run(conversation())
    assert [r.result for r in results] == ["First.", "Second."]
    assert results[0].session_id == results[1].session_id
    assert (ws.cwd / "one.txt").read_text() == "1\n"

    one_shot = ws.model(text("Hello."))

    async def once() -> list:
        return [m async for m in query(prompt="hi", options=ws.options(one_shot))]

    messages = asyncio.run(once())
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Hello."
