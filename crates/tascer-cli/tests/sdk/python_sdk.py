"""Drives `tascer` through the official Python Agent SDK (`claude-agent-sdk`)
with `cli_path` set to it, for crates/tascer-cli/tests/sdk_python.rs.

Usage: python python_sdk.py CASE CONFIG_JSON

CONFIG_JSON: {"cli", "base_url", "home", "cwd", "prompt", "resume"?}.
Prints one JSON object on its last line: the messages the SDK yielded
(class name + fields) and what the case's callbacks saw.
"""

import dataclasses
import json
import os
import sys

import anyio
from claude_agent_sdk import (
    AgentDefinition,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionUpdate,
    create_sdk_mcp_server,
    query,
    tool,
)
from claude_agent_sdk.types import PermissionRuleValue


BLOCK_TYPES = {"TextBlock": "text", "ThinkingBlock": "thinking", "ToolUseBlock": "tool_use", "ToolResultBlock": "tool_result"}


def block(b):
    return {"type": BLOCK_TYPES.get(type(b).__name__, type(b).__name__), **dataclasses.asdict(b)}


def plain(message):
    """The message in its wire shape (as the TypeScript SDK yields it), so
    the Rust side checks both SDKs alike."""
    kind = type(message).__name__
    if kind == "AssistantMessage":
        return {"type": "assistant", "session_id": message.session_id, "uuid": message.uuid,
                "parent_tool_use_id": message.parent_tool_use_id,
                "message": {"model": message.model, "content": [block(b) for b in message.content]}}
    if kind == "UserMessage":
        content = message.content if isinstance(message.content, str) else [block(b) for b in message.content]
        return {"type": "user", "parent_tool_use_id": message.parent_tool_use_id,
                "tool_use_result": message.tool_use_result, "message": {"content": content}}
    if dataclasses.is_dataclass(message) and hasattr(message, "data") and "subtype" in message.data:
        return message.data  # system messages keep the whole frame
    if kind == "ResultMessage":
        return {"type": "result", **dataclasses.asdict(message)}
    return {"type": kind, **dataclasses.asdict(message)}


def options(config, **extra):
    stderr_lines = extra.pop("stderr_lines", None)
    return ClaudeAgentOptions(
        cli_path=config["cli"],
        cwd=config["cwd"],
        env={
            "ANTHROPIC_BASE_URL": config["base_url"],
            "ANTHROPIC_API_KEY": "test",
            "TASCER_HOME": config["home"],
            # Claude Code's user settings: the test's, not the machine's.
            "CLAUDE_CONFIG_DIR": os.path.join(config["home"], "claude-config"),
        },
        stderr=(stderr_lines.append if stderr_lines is not None else None),
        **extra,
    )


async def collect(prompt, opts):
    return [plain(m) async for m in query(prompt=prompt, options=opts)]


async def case_query_tools(config):
    opts = options(config, permission_mode="acceptEdits", resume=config.get("resume"))
    return {"messages": await collect(config["prompt"], opts)}


async def case_hook_deny(config):
    seen = []

    async def no_shell(input_data, tool_use_id, context):
        seen.append({"input": input_data, "tool_use_id": tool_use_id})
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "no shell today (SDK hook)",
            }
        }

    opts = options(
        config,
        permission_mode="bypassPermissions",
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[no_shell], timeout=30)]},
    )
    messages = await collect(config["prompt"], opts)
    return {"messages": messages, "hook_calls": seen}


async def case_can_use_tool(config):
    asked = []

    async def rewrite(tool_name, tool_input, context):
        asked.append({"tool_name": tool_name, "input": tool_input, "tool_use_id": context.tool_use_id})
        changed = dict(tool_input)
        changed["content"] = "rewritten by can_use_tool\n"
        return PermissionResultAllow(updated_input=changed)

    opts = options(config, can_use_tool=rewrite)
    messages = await collect(config["prompt"], opts)
    return {"messages": messages, "asked": asked}


async def case_sdk_mcp(config):
    calls = []

    @tool("add", "Adds two numbers", {"a": float, "b": float})
    async def add(args):
        calls.append(args)
        return {"content": [{"type": "text", "text": f"sum={args['a'] + args['b']:g}"}]}

    calc = create_sdk_mcp_server("calc", "2.0.0", tools=[add])
    status = {}
    async with ClaudeSDKClient(
        options=options(config, mcp_servers={"calc": calc}, allowed_tools=["mcp__calc__add"])
    ) as client:
        status = await client.get_mcp_status()
        await client.query(config["prompt"])
        messages = [plain(m) async for m in client.receive_response()]
    return {"messages": messages, "calls": calls, "mcp_status": status}


async def case_elicitation(config):
    seen = []

    async def answer(input_data, tool_use_id, context):
        seen.append(input_data)
        return {
            "hookSpecificOutput": {
                "hookEventName": "Elicitation",
                "action": "accept",
                "content": {"username": "sdk-user", "email": "sdk@example.com"},
            }
        }

    opts = options(
        config,
        mcp_servers={"conf": {"type": "http", "url": config["mcp_url"]}},
        allowed_tools=["mcp__conf__test_elicitation"],
        hooks={"Elicitation": [HookMatcher(matcher="conf", hooks=[answer], timeout=30)]},
    )
    messages = await collect(config["prompt"], opts)
    return {"messages": messages, "elicitations": seen}


async def case_interrupt(config):
    messages = []
    async with ClaudeSDKClient(options=options(config, permission_mode="bypassPermissions")) as client:
        await client.query(config["prompt"])
        async for m in client.receive_response():
            messages.append(plain(m))
            if type(m).__name__ == "AssistantMessage":
                await client.interrupt()
        await client.query("and now just answer")
        after = [plain(m) async for m in client.receive_response()]
    return {"messages": messages, "after": after}


async def case_multi_turn(config):
    turns = []
    reviewer = AgentDefinition(description="Reviews code", prompt="Review the code you are given.")
    async with ClaudeSDKClient(options=options(config, agents={"reviewer": reviewer})) as client:
        info = await client.get_server_info()
        for prompt in (config["prompt"], "second question", "third question"):
            await client.query(prompt)
            turns.append([plain(m) async for m in client.receive_response()])
        await client.set_permission_mode("acceptEdits")
        await client.set_model("mock-model-b")
        await client.query("fourth question")
        turns.append([plain(m) async for m in client.receive_response()])
    return {"turns": turns, "server_info": info}


async def case_default_options(config):
    stderr = []
    messages = await collect(config["prompt"], options(config, stderr_lines=stderr))
    return {"messages": messages, "stderr": stderr}


async def case_ask_user_question(config):
    asked = []

    async def answer(tool_name, tool_input, context):
        asked.append({"tool_name": tool_name, "input": tool_input})
        if tool_name != "AskUserQuestion":
            return PermissionResultDeny(message="only questions here")
        answers = {q["question"]: q["options"][1]["label"] for q in tool_input["questions"]}
        return PermissionResultAllow(updated_input={**tool_input, "answers": answers})

    messages = await collect(config["prompt"], options(config, can_use_tool=answer))
    return {"messages": messages, "asked": asked}


async def case_always_allow(config):
    asked = []

    async def always(tool_name, tool_input, context):
        asked.append({"tool_name": tool_name, "input": tool_input,
                      "suggestions": [s.to_dict() for s in context.suggestions]})
        rule = PermissionRuleValue(tool_name="Bash", rule_content="touch:*")
        update = PermissionUpdate(type="addRules", rules=[rule], behavior="allow",
                                  destination=config.get("destination", "localSettings"))
        return PermissionResultAllow(updated_permissions=[update])

    first = await collect(config["prompt"], options(config, can_use_tool=always))
    second = await collect(config["second_prompt"], options(config, can_use_tool=always))
    return {"first": first, "second": second, "asked": asked}


async def case_session_helpers(config):
    """A session run through the SDK, then the SDK's own session helpers
    (which read Claude Code's transcripts) on it."""
    import claude_agent_sdk as sdk

    # The helpers read $CLAUDE_CONFIG_DIR, as the CLI run by the SDK does.
    os.environ["CLAUDE_CONFIG_DIR"] = os.path.join(config["home"], "claude-config")
    messages = await collect(config["prompt"], options(config, permission_mode="acceptEdits"))
    session_id = next(m["session_id"] for m in messages if m.get("type") == "result")
    listed = [dataclasses.asdict(s) for s in sdk.list_sessions(directory=config["cwd"])]
    read = [dataclasses.asdict(m) for m in sdk.get_session_messages(session_id, directory=config["cwd"])]
    sdk.rename_session(session_id, "Renamed by the SDK", directory=config["cwd"])
    renamed = [dataclasses.asdict(s) for s in sdk.list_sessions(directory=config["cwd"])]
    sdk.delete_session(session_id, directory=config["cwd"])
    after_delete = [dataclasses.asdict(s) for s in sdk.list_sessions(directory=config["cwd"])]
    return {"messages": messages, "session_id": session_id, "listed": listed, "read": read,
            "renamed": renamed, "after_delete": after_delete}


async def case_rewind(config):
    """Prompts that change files with file checkpointing on, an optional
    edit by hand, then rewind_files to prompts (by index) or raw ids; the
    watched files are read after each rewind. With "fork", the rewinds run
    in a second process that resumes the session with fork_session."""

    def snapshot():
        return {p: (open(p).read() if os.path.exists(p) else None) for p in config["watch"]}

    async def rewind_all(client):
        rewinds = []
        for target in config["rewinds"]:
            message_id = prompt_ids[target] if isinstance(target, int) else target
            try:
                await client.rewind_files(message_id)
                rewinds.append({"ok": True, "files": snapshot()})
            except Exception as e:  # the SDK raises the CLI's error response
                rewinds.append({"error": str(e), "files": snapshot()})
        return rewinds

    opts = options(config, permission_mode="acceptEdits", enable_file_checkpointing=True,
                   extra_args={"replay-user-messages": None})
    prompt_ids, turns, rewinds, fork_id = [], [], [], None
    async with ClaudeSDKClient(options=opts) as client:
        for prompt in config["prompts"]:
            await client.query(prompt)
            turn = []
            async for m in client.receive_response():
                if type(m).__name__ == "UserMessage" and isinstance(m.content, str) and m.uuid:
                    prompt_ids.append(m.uuid)
                turn.append(plain(m))
            turns.append(turn)
        if config.get("hand_edit"):
            path, text = config["hand_edit"]
            with open(path, "w") as f:
                f.write(text)
        if not config.get("fork"):
            rewinds = await rewind_all(client)
    if config.get("fork"):
        session_id = next(m["session_id"] for m in turns[-1] if m.get("type") == "result")
        fork_opts = options(config, permission_mode="acceptEdits", enable_file_checkpointing=True,
                            resume=session_id, fork_session=True)
        async with ClaudeSDKClient(options=fork_opts) as client:
            fork_id = (await client.get_server_info() or {}).get("session_id")
            rewinds = await rewind_all(client)
    return {"prompt_ids": prompt_ids, "turns": turns, "rewinds": rewinds, "fork_id": fork_id}


async def case_plugins(config):
    """The SDK's `plugins` option (passed as --plugin-dir)."""
    stderr = []
    opts = options(config, permission_mode="bypassPermissions", stderr_lines=stderr,
                   plugins=[{"type": "local", "path": config["plugin"]}])
    return {"messages": await collect(config["prompt"], opts), "stderr": stderr}


async def case_resume_at(config):
    """A session of two prompts, then resume_session_at the first answer's
    uuid (with resume_drops_turn the second prompt's, when asked)."""
    first = await collect(config["prompt"], options(config))
    session_id = next(m["session_id"] for m in first if m.get("type") == "result")
    second = await collect(config["second_prompt"], options(config, resume=session_id))
    at = next(m["uuid"] for m in first if m.get("type") == "assistant")
    extra = {}
    if config.get("drops_turn"):
        extra["resume_drops_turn"] = config["drops_turn"]
    stderr = []
    try:
        third = await collect(config["third_prompt"], options(
            config, resume=session_id, resume_session_at=config.get("at", at),
            stderr_lines=stderr, **extra))
        error = None
    except Exception as e:  # the SDK raises the CLI's startup failure
        third, error = [], str(e)
    return {"first": first, "second": second, "third": third, "at": at,
            "session_id": session_id, "error": error, "stderr": stderr}


async def case_background_task(config):
    """A background shell: the SDK's typed task messages, and stop_task."""
    seen = []
    async with ClaudeSDKClient(options=options(config, permission_mode="bypassPermissions")) as client:
        await client.query(config["prompt"])
        async for m in client.receive_response():
            seen.append({"class": type(m).__name__, "message": plain(m)})
        started = [s for s in seen if s["class"] == "TaskStartedMessage"]
        await client.stop_task(started[0]["message"]["task_id"])
        async for m in client.receive_messages():
            seen.append({"class": type(m).__name__, "message": plain(m)})
            if type(m).__name__ == "TaskNotificationMessage":
                break
    return {"seen": seen}


CASES = {
    "query_tools": case_query_tools,
    "hook_deny": case_hook_deny,
    "can_use_tool": case_can_use_tool,
    "sdk_mcp": case_sdk_mcp,
    "elicitation": case_elicitation,
    "interrupt": case_interrupt,
    "multi_turn": case_multi_turn,
    "default_options": case_default_options,
    "ask_user_question": case_ask_user_question,
    "always_allow": case_always_allow,
    "session_helpers": case_session_helpers,
    "rewind": case_rewind,
    "plugins": case_plugins,
    "resume_at": case_resume_at,
    "background_task": case_background_task,
}


def main():
    case, config = sys.argv[1], json.loads(sys.argv[2])
    result = anyio.run(CASES[case], config)
    print(json.dumps(result, default=str))


if __name__ == "__main__":
    main()
