// Drives `tascer` through the official TypeScript Agent SDK
// (`@anthropic-ai/claude-agent-sdk`) with `pathToClaudeCodeExecutable` set
// to it, for crates/tascer-cli/tests/sdk_typescript.rs.
//
// Usage: node ts_sdk.mjs SDK_PREFIX CASE CONFIG_JSON
//
// SDK_PREFIX holds node_modules/@anthropic-ai/claude-agent-sdk (and zod).
// CONFIG_JSON: {"cli", "base_url", "home", "cwd", "prompt", "resume"?}.
// Prints one JSON object on its last line: the messages the SDK yielded
// and what the case's callbacks saw.

import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const [prefix, caseName, configText] = process.argv.slice(2);
const config = JSON.parse(configText);
const require = createRequire(`${prefix}/`);
const sdk = await import(pathToFileURL(require.resolve("@anthropic-ai/claude-agent-sdk")));
const { z } = await import(pathToFileURL(require.resolve("zod")));

const stderrLines = [];

function options(extra = {}) {
  return {
    pathToClaudeCodeExecutable: config.cli,
    cwd: config.cwd,
    env: {
      ...process.env,
      ANTHROPIC_BASE_URL: config.base_url,
      ANTHROPIC_API_KEY: "test",
      TASCER_HOME: config.home,
      // Claude Code's user settings: the test's, not the machine's.
      CLAUDE_CONFIG_DIR: `${config.home}/claude-config`,
    },
    stderr: (text) => {
      stderrLines.push(...text.split("\n").filter((l) => l.length > 0));
      process.stderr.write(text);
    },
    ...extra,
  };
}

async function collect(q) {
  const messages = [];
  for await (const m of q) messages.push(m);
  return messages;
}

// Prompts as a stream: prompt i is sent once i results have been seen.
function conversation(prompts) {
  let seen = 0;
  let waiters = [];
  const until = (n) => (seen >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve })));
  const input = (async function* () {
    for (const [i, text] of prompts.entries()) {
      await until(i);
      yield { type: "user", message: { role: "user", content: text }, parent_tool_use_id: null };
    }
  })();
  return {
    input,
    onResult() {
      seen += 1;
      const ready = waiters.filter((w) => w.n <= seen);
      waiters = waiters.filter((w) => w.n > seen);
      for (const w of ready) w.resolve();
    },
  };
}

const cases = {
  async query_tools() {
    const q = sdk.query({
      prompt: config.prompt,
      options: options({ permissionMode: "acceptEdits", ...(config.resume ? { resume: config.resume } : {}) }),
    });
    return { messages: await collect(q) };
  },

  async hook_deny() {
    const seen = [];
    const noShell = async (input, toolUseID) => {
      seen.push({ input, tool_use_id: toolUseID });
      return {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "no shell today (SDK hook)",
        },
      };
    };
    const q = sdk.query({
      prompt: config.prompt,
      options: options({
        permissionMode: "bypassPermissions",
        allowDangerouslySkipPermissions: true,
        hooks: { PreToolUse: [{ matcher: "Bash", hooks: [noShell], timeout: 30 }] },
      }),
    });
    return { messages: await collect(q), hook_calls: seen };
  },

  async can_use_tool() {
    const asked = [];
    const rewrite = async (toolName, input, context) => {
      asked.push({ tool_name: toolName, input, tool_use_id: context.toolUseID });
      return { behavior: "allow", updatedInput: { ...input, content: "rewritten by can_use_tool\n" } };
    };
    const q = sdk.query({ prompt: config.prompt, options: options({ canUseTool: rewrite }) });
    return { messages: await collect(q), asked };
  },

  async sdk_mcp() {
    const calls = [];
    const add = sdk.tool("add", "Adds two numbers", { a: z.number(), b: z.number() }, async (args) => {
      calls.push(args);
      return { content: [{ type: "text", text: `sum=${args.a + args.b}` }] };
    });
    const calc = sdk.createSdkMcpServer({ name: "calc", version: "2.0.0", tools: [add] });
    const q = sdk.query({
      prompt: config.prompt,
      options: options({ mcpServers: { calc }, allowedTools: ["mcp__calc__add"] }),
    });
    const messages = [];
    let status;
    for await (const m of q) {
      messages.push(m);
      // Asked while the turn runs: stdin closes after its result.
      if (m.type === "system" && m.subtype === "init") status = await q.mcpServerStatus();
    }
    return { messages, calls, mcp_status: { mcpServers: status } };
  },

  async interrupt() {
    const talk = conversation([config.prompt, "and now just answer"]);
    const q = sdk.query({
      prompt: talk.input,
      options: options({ permissionMode: "bypassPermissions", allowDangerouslySkipPermissions: true }),
    });
    const turns = [[], []];
    let interrupted = false;
    let results = 0;
    for await (const m of q) {
      turns[results].push(m);
      if (m.type === "assistant" && !interrupted) {
        interrupted = true;
        await q.interrupt();
      }
      if (m.type === "result") {
        results += 1;
        if (results === 2) break;
        talk.onResult();
      }
    }
    return { messages: turns[0], after: turns[1] };
  },

  async multi_turn() {
    const prompts = [config.prompt, "second question", "third question", "fourth question"];
    const talk = conversation(prompts);
    const agents = { reviewer: { description: "Reviews code", prompt: "Review the code you are given." } };
    const q = sdk.query({ prompt: talk.input, options: options({ agents }) });
    const init = await q.initializationResult();
    const turns = [[]];
    for await (const m of q) {
      turns[turns.length - 1].push(m);
      if (m.type === "result") {
        if (turns.length === prompts.length) break;
        if (turns.length === 3) {
          await q.setPermissionMode("acceptEdits");
          await q.setModel("mock-model-b");
        }
        turns.push([]);
        talk.onResult(m);
      }
    }
    return { turns, server_info: init };
  },
};

Object.assign(cases, {
  // An MCP server's question: an Elicitation hook that does not answer
  // sees it first, then onElicitation answers (config.answer: accept or
  // decline).
  async on_elicitation() {
    const events = [];
    const observe = async (input) => {
      events.push({ by: "hook", hook_event_name: input.hook_event_name });
      return {};
    };
    const onElicitation = async (request) => {
      events.push({ by: "onElicitation", ...request });
      if (config.answer === "decline") return { action: "decline" };
      return { action: "accept", content: { username: "ts-user", email: "ts@example.com" } };
    };
    // config.override: an ElicitationResult hook replaces the answer.
    const override = async (input) => {
      events.push({ by: "result hook", ...input });
      return {
        hookSpecificOutput: {
          hookEventName: "ElicitationResult",
          action: "accept",
          content: { username: "hook-user", email: "hook@example.com" },
        },
      };
    };
    const q = sdk.query({
      prompt: config.prompt,
      options: options({
        mcpServers: { conf: { type: "http", url: config.mcp_url } },
        allowedTools: ["mcp__conf__test_elicitation"],
        hooks: {
          Elicitation: [{ matcher: "conf", hooks: [observe], timeout: 30 }],
          ...(config.override ? { ElicitationResult: [{ matcher: "conf", hooks: [override], timeout: 30 }] } : {}),
        },
        onElicitation,
      }),
    });
    return { messages: await collect(q), events };
  },

  async plugins() {
    const q = sdk.query({
      prompt: config.prompt,
      options: options({
        permissionMode: "bypassPermissions",
        allowDangerouslySkipPermissions: true,
        plugins: [{ type: "local", path: config.plugin }],
        ...(config.plugin_delivery ? { pluginDelivery: config.plugin_delivery } : {}),
      }),
    });
    return { messages: await collect(q), stderr: stderrLines };
  },

  // Prompts that change files with file checkpointing on, an optional edit
  // by hand, then rewindFiles to prompts (by index) or raw ids, each with
  // or without dryRun; the watched files are read after each rewind. The
  // input stays open until the rewinds are done.
  async rewind() {
    const fs = await import("node:fs");
    const snapshot = () =>
      Object.fromEntries(config.watch.map((p) => [p, fs.existsSync(p) ? fs.readFileSync(p, "utf8") : null]));
    const chat = conversation(config.prompts);
    let finish;
    const finished = new Promise((resolve) => (finish = resolve));
    const input = (async function* () {
      yield* chat.input;
      await finished;
    })();
    const q = sdk.query({
      prompt: input,
      options: options({
        permissionMode: "acceptEdits",
        enableFileCheckpointing: true,
        extraArgs: { "replay-user-messages": null },
      }),
    });
    const promptIds = [];
    const turns = [[]];
    const rewinds = [];
    for await (const m of q) {
      if (m.type === "user" && m.isReplay && typeof m.message.content === "string") promptIds.push(m.uuid);
      turns[turns.length - 1].push(m);
      if (m.type !== "result") continue;
      chat.onResult();
      if (turns.length < config.prompts.length) {
        turns.push([]);
        continue;
      }
      if (config.hand_edit) fs.writeFileSync(config.hand_edit[0], config.hand_edit[1]);
      for (const { target, dryRun } of config.rewinds) {
        const id = typeof target === "number" ? promptIds[target] : target;
        try {
          const answer = await q.rewindFiles(id, { dryRun });
          rewinds.push({ answer, files: snapshot() });
        } catch (e) {
          rewinds.push({ error: String(e), files: snapshot() });
        }
      }
      finish();
    }
    return { prompt_ids: promptIds, turns, rewinds };
  },

  async default_options() {
    const q = sdk.query({ prompt: config.prompt, options: options() });
    return { messages: await collect(q), stderr: stderrLines };
  },

  async ask_user_question() {
    const asked = [];
    const answer = async (toolName, input) => {
      asked.push({ tool_name: toolName, input });
      if (toolName !== "AskUserQuestion") return { behavior: "deny", message: "only questions here" };
      const answers = Object.fromEntries(input.questions.map((q) => [q.question, q.options[1].label]));
      return { behavior: "allow", updatedInput: { ...input, answers } };
    };
    const q = sdk.query({ prompt: config.prompt, options: options({ canUseTool: answer }) });
    return { messages: await collect(q), asked };
  },

  async always_allow() {
    const asked = [];
    const always = async (toolName, input, context) => {
      asked.push({ tool_name: toolName, input, suggestions: context.suggestions ?? [] });
      return {
        behavior: "allow",
        updatedInput: input,
        updatedPermissions: [
          {
            type: "addRules",
            rules: [{ toolName: "Bash", ruleContent: "touch:*" }],
            behavior: "allow",
            destination: config.destination ?? "localSettings",
          },
        ],
      };
    };
    const first = await collect(sdk.query({ prompt: config.prompt, options: options({ canUseTool: always }) }));
    const second = await collect(
      sdk.query({ prompt: config.second_prompt, options: options({ canUseTool: always }) }),
    );
    return { first, second, asked };
  },
});

const result = await cases[caseName]();
console.log(JSON.stringify(result));
process.exit(0);
