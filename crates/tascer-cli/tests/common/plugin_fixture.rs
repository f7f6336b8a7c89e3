//! A plugin directory in Claude Code's layout, written into a temp dir
//! for the plugin tests (`tests/plugins.rs` and the SDK cases): a command,
//! an agent, a skill, hooks that run `${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh`
//! (it blocks `rm` commands and logs the others) and, optionally, the
//! mini MCP server of tascer-mcp's tests as `.mcp.json`'s `mini`.

use std::path::{Path, PathBuf};

use serde_json::json;

/// The plugin's name (its manifest's `name`).
pub const PLUGIN: &str = "kit";

/// What the PreToolUse hook says when it blocks an `rm` command.
pub const HOOK_BLOCK: &str = "kit guard: rm is not allowed here";

/// The file (in the project) the hook appends `$CLAUDE_PLUGIN_ROOT` to for
/// each command it lets through.
pub const HOOK_LOG: &str = "plugin-hook.log";

/// Writes the plugin into `parent/kit` and returns its directory.
pub fn write_plugin(parent: &Path, with_mcp: bool) -> PathBuf {
    let root = parent.join(PLUGIN);
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        ".claude-plugin/plugin.json",
        &json!({"name": PLUGIN, "version": "1.2.0", "description": "A test kit",
                "author": {"name": "Tascer tests"}})
        .to_string(),
    );
    write(
        "commands/greet.md",
        "---\ndescription: Greets someone in greeting.txt\nargument-hint: [name]\n---\n\
         GREET-COMMAND: write a greeting for $ARGUMENTS into greeting.txt\n",
    );
    write(
        "agents/checker.md",
        "---\ndescription: Checks the work\ntools: Read\n---\nCHECKER-PROMPT: you check work.\n",
    );
    write(
        "skills/style/SKILL.md",
        "---\nname: style\ndescription: The house style\n---\nSTYLE-SKILL: short lines only.\n",
    );
    write(
        "hooks/guard.sh",
        &format!(
            "input=$(cat)\ncase \"$input\" in\n  *'\"rm '*) echo '{HOOK_BLOCK}' >&2; exit 2 ;;\nesac\n\
             echo \"$CLAUDE_PLUGIN_ROOT\" >> \"$CLAUDE_PROJECT_DIR/{HOOK_LOG}\"\nexit 0\n"
        ),
    );
    write(
        "hooks/hooks.json",
        &json!({"description": "kit's guard", "hooks": {"PreToolUse": [{"matcher": "Bash",
            "hooks": [{"type": "command", "command": "sh \"${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh\""}]}]}})
        .to_string(),
    );
    if with_mcp {
        let server = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../tascer-mcp/tests/fixtures/mini_server.py");
        std::fs::create_dir_all(root.join("servers")).unwrap();
        std::fs::copy(server, root.join("servers/mini.py")).unwrap();
        write(
            ".mcp.json",
            &json!({"mcpServers": {"mini": {"command": "python3",
                "args": ["${CLAUDE_PLUGIN_ROOT}/servers/mini.py"]}}})
            .to_string(),
        );
    }
    root.canonicalize().unwrap()
}
