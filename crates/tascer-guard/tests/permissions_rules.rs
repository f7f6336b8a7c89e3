#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Every rule form, parse errors, and path rules on real files.

use std::path::Path;

use serde_json::json;
use tascer_guard::permissions::{
    Behavior, DecisionSource, PermissionEngine, PermissionRule, PermissionRules, RuleOrigin,
    RuleSpecifier, ToolCall,
};

fn engine(allow: &[&str], ask: &[&str], deny: &[&str]) -> PermissionEngine {
    PermissionEngine::builder()
        .rules(PermissionRules::parse(allow, ask, deny).unwrap())
        .build()
        .unwrap()
}

fn bash(cmd: &str, dir: &Path) -> ToolCall {
    ToolCall::new("Bash", json!({ "command": cmd }), dir)
}

#[test]
fn parse_forms() {
    for raw in ["Bash", "Bash()", "Bash(*)"] {
        assert_eq!(
            PermissionRule::parse(raw).unwrap().specifier,
            RuleSpecifier::Any,
            "{raw}"
        );
    }
    assert!(matches!(
        PermissionRule::parse("Bash(npm run test:*)")
            .unwrap()
            .specifier,
        RuleSpecifier::Command(_)
    ));
    assert!(matches!(
        PermissionRule::parse("Read(./src/**)").unwrap().specifier,
        RuleSpecifier::Path(_)
    ));
    assert_eq!(
        PermissionRule::parse("WebFetch(domain:Example.COM)")
            .unwrap()
            .specifier,
        RuleSpecifier::Domain("example.com".into())
    );
    assert_eq!(
        PermissionRule::parse("Agent(Explore)").unwrap().specifier,
        RuleSpecifier::Content("Explore".into())
    );
    for raw in [
        "mcp__github",
        "mcp__github__*",
        "mcp__github__search_repositories",
    ] {
        assert_eq!(
            PermissionRule::parse(raw).unwrap().specifier,
            RuleSpecifier::Any
        );
    }
}

#[test]
fn malformed_rules_have_clear_errors() {
    for (raw, needle) in [
        ("", "empty rule"),
        ("Bash(ls", "missing closing"),
        ("Bash)", "`)` without `(`"),
        ("(ls)", "missing tool name"),
        ("Ba sh", "invalid character"),
        ("Bash(:*)", "empty prefix"),
        ("Bash(ls $(x))", "literal"),
        ("WebFetch(example.com)", "domain:"),
        ("mcp__", "server name"),
        ("mcp__github(x)", "no specifier"),
        ("Read([)", "bad path pattern"),
    ] {
        let err = PermissionRule::parse(raw).unwrap_err();
        assert!(err.to_string().contains(needle), "{raw}: {err}");
        assert!(err.to_string().contains(raw), "{raw}: {err}");
    }
}

#[test]
fn bash_exact_prefix_and_glob() {
    let d = tempfile::tempdir().unwrap();
    let e = engine(
        &[
            "Bash(npm run build)",
            "Bash(git log:*)",
            "Bash(git * main)",
            "Bash(* --version)",
            "Bash(ls *)",
        ],
        &[],
        &[],
    );
    for (cmd, want) in [
        ("npm run build", Behavior::Allow),
        ("npm  run   'build'", Behavior::Allow),
        ("npm run build --watch", Behavior::Ask),
        ("git log", Behavior::Allow),
        ("git log --oneline -5", Behavior::Allow),
        ("git logx", Behavior::Ask),
        ("git checkout main", Behavior::Allow),
        ("git checkout dev", Behavior::Ask),
        ("node --version", Behavior::Allow),
        ("ls -la", Behavior::Allow),
        ("lsof -i", Behavior::Ask),
    ] {
        assert_eq!(e.evaluate(&bash(cmd, d.path())).behavior, want, "{cmd}");
    }
}

#[test]
fn deny_beats_allow_and_ask_beats_allow() {
    let d = tempfile::tempdir().unwrap();
    let e = engine(&["Bash"], &["Bash(git push:*)"], &["Bash(rm:*)"]);
    assert_eq!(e.evaluate(&bash("ls", d.path())).behavior, Behavior::Allow);
    assert_eq!(
        e.evaluate(&bash("git push", d.path())).behavior,
        Behavior::Ask
    );
    let denied = e.evaluate(&bash("ls; rm -f x", d.path()));
    assert_eq!(denied.behavior, Behavior::Deny);
    assert_eq!(
        denied.decided_by,
        DecisionSource::Rule {
            rule: "Bash(rm:*)".into(),
            source_file: None
        }
    );
}

#[test]
fn read_and_edit_path_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let cwd = root.join("proj");
    std::fs::create_dir_all(cwd.join("src/deep")).unwrap();
    std::fs::create_dir_all(cwd.join("docs")).unwrap();
    std::fs::create_dir_all(root.join("outside")).unwrap();
    std::fs::write(cwd.join(".env"), "S=1").unwrap();
    let abs_rule = format!("Read(/{}/outside/**)", root.display());
    let rules = PermissionRules::parse(
        &["Edit(./src/**)", abs_rule.as_str()],
        &[],
        &["Read(.env)", "Edit(/docs/**)"],
    )
    .unwrap();
    let e = PermissionEngine::builder().rules(rules).build().unwrap();
    let read = |p: &Path| ToolCall::new("Read", json!({"file_path": p}), &cwd);
    let write = |p: &Path| ToolCall::new("Write", json!({"file_path": p, "content": ""}), &cwd);
    // Unanchored `.env` matches at any depth, for every read tool.
    assert_eq!(
        e.evaluate(&read(&cwd.join(".env"))).behavior,
        Behavior::Deny
    );
    assert_eq!(
        e.evaluate(&read(&cwd.join("src/.env"))).behavior,
        Behavior::Deny
    );
    let grep = ToolCall::new("Grep", json!({"pattern": "S", "path": ".env"}), &cwd);
    assert_eq!(e.evaluate(&grep).behavior, Behavior::Deny);
    // Edit rule applies to Write/MultiEdit too; `/docs` is relative to the project root (cwd here).
    assert_eq!(
        e.evaluate(&write(&cwd.join("src/deep/a.rs"))).behavior,
        Behavior::Allow
    );
    assert_eq!(
        e.evaluate(&write(&cwd.join("docs/a.md"))).behavior,
        Behavior::Deny
    );
    assert_eq!(
        e.evaluate(&write(&cwd.join("README.md"))).behavior,
        Behavior::Ask
    );
    // `//abs` rule.
    assert_eq!(
        e.evaluate(&read(&root.join("outside/x"))).behavior,
        Behavior::Allow
    );
    // `..` cannot escape a rule.
    assert_eq!(
        e.evaluate(&write(&cwd.join("src/../docs/b.md"))).behavior,
        Behavior::Deny
    );
}

#[test]
fn path_rules_follow_symlinks() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().canonicalize().unwrap();
    std::fs::create_dir_all(cwd.join("secret")).unwrap();
    std::fs::create_dir_all(cwd.join("src")).unwrap();
    std::os::unix::fs::symlink(cwd.join("secret"), cwd.join("src/link")).unwrap();
    std::os::unix::fs::symlink(cwd.join("secret/new.txt"), cwd.join("src/dangling")).unwrap();
    let rules = PermissionRules::parse(&["Edit(./src/**)"], &[], &["Edit(./secret/**)"]).unwrap();
    let e = PermissionEngine::builder().rules(rules).build().unwrap();
    let write = |p: &Path| ToolCall::new("Write", json!({"file_path": p, "content": ""}), &cwd);
    assert_eq!(
        e.evaluate(&write(&cwd.join("src/ok.rs"))).behavior,
        Behavior::Allow
    );
    // Not-yet-existing file under a symlinked parent.
    assert_eq!(
        e.evaluate(&write(&cwd.join("src/link/new.txt"))).behavior,
        Behavior::Deny
    );
    // Dangling symlink whose target would be created.
    assert_eq!(
        e.evaluate(&write(&cwd.join("src/dangling"))).behavior,
        Behavior::Deny
    );
    // Relative path and `~` expansion.
    let rel = ToolCall::new(
        "Write",
        json!({"file_path": "src/link/x", "content": ""}),
        &cwd,
    );
    assert_eq!(e.evaluate(&rel).behavior, Behavior::Deny);
}

#[test]
fn home_anchored_rules() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path().canonicalize().unwrap();
    std::fs::create_dir_all(home.join("Documents")).unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let rules = PermissionRules::parse(&["Read(~/Documents/*.pdf)"], &[], &[]).unwrap();
    let e = PermissionEngine::builder()
        .rules(rules)
        .home_dir(&home)
        .build()
        .unwrap();
    let read = |p: &str| ToolCall::new("Read", json!({"file_path": p}), cwd.path());
    assert_eq!(
        e.evaluate(&read("~/Documents/a.pdf")).behavior,
        Behavior::Allow
    );
    let abs = home.join("Documents/b.pdf").display().to_string();
    assert_eq!(e.evaluate(&read(&abs)).behavior, Behavior::Allow);
    assert_eq!(
        e.evaluate(&read("~/Documents/a.txt")).behavior,
        Behavior::Ask
    );
    assert_eq!(
        e.evaluate(&read("~/Documents/sub/a.pdf")).behavior,
        Behavior::Ask
    );
}

#[test]
fn webfetch_domain_rules() {
    let d = tempfile::tempdir().unwrap();
    let e = engine(
        &["WebFetch(domain:example.com)", "WebFetch(domain:*.docs.rs)"],
        &[],
        &["WebFetch(domain:evil.com)"],
    );
    let fetch = |u: &str| ToolCall::new("WebFetch", json!({"url": u, "prompt": "p"}), d.path());
    assert_eq!(
        e.evaluate(&fetch("https://example.com/a?b")).behavior,
        Behavior::Allow
    );
    assert_eq!(
        e.evaluate(&fetch("https://EXAMPLE.com:443/")).behavior,
        Behavior::Allow
    );
    assert_eq!(
        e.evaluate(&fetch("https://sub.example.com/")).behavior,
        Behavior::Ask
    );
    assert_eq!(
        e.evaluate(&fetch("https://serde.docs.rs/")).behavior,
        Behavior::Allow
    );
    assert_eq!(
        e.evaluate(&fetch("https://user@evil.com/x")).behavior,
        Behavior::Deny
    );
    assert_eq!(
        e.evaluate(&fetch("https://example.com.evil.org/")).behavior,
        Behavior::Ask
    );
}

#[test]
fn mcp_rules() {
    let d = tempfile::tempdir().unwrap();
    let e = engine(
        &["mcp__github", "mcp__files__read"],
        &[],
        &["mcp__files__delete", "mcp__bad__*"],
    );
    let mcp = |n: &str| ToolCall::new(n, json!({}), d.path());
    assert_eq!(
        e.evaluate(&mcp("mcp__github__search")).behavior,
        Behavior::Allow
    );
    assert_eq!(
        e.evaluate(&mcp("mcp__githubx__search")).behavior,
        Behavior::Ask
    );
    assert_eq!(
        e.evaluate(&mcp("mcp__files__read")).behavior,
        Behavior::Allow
    );
    assert_eq!(
        e.evaluate(&mcp("mcp__files__write")).behavior,
        Behavior::Ask
    );
    assert_eq!(
        e.evaluate(&mcp("mcp__files__delete")).behavior,
        Behavior::Deny
    );
    assert_eq!(
        e.evaluate(&mcp("mcp__bad__anything")).behavior,
        Behavior::Deny
    );
}

#[test]
fn agent_and_bare_tool_rules() {
    let d = tempfile::tempdir().unwrap();
    let e = engine(
        &["Agent(Explore)", "TodoWrite", "WebSearch"],
        &[],
        &["Task(general)"],
    );
    let agent = |t: &str| {
        ToolCall::new(
            "Agent",
            json!({"subagent_type": t, "prompt": "p"}),
            d.path(),
        )
    };
    assert_eq!(e.evaluate(&agent("Explore")).behavior, Behavior::Allow);
    assert_eq!(e.evaluate(&agent("general")).behavior, Behavior::Deny);
    assert_eq!(e.evaluate(&agent("other")).behavior, Behavior::Ask);
    let ws = ToolCall::new("WebSearch", json!({"query": "x"}), d.path());
    assert_eq!(e.evaluate(&ws).behavior, Behavior::Allow);
}

#[test]
fn rule_origin_is_reported() {
    let d = tempfile::tempdir().unwrap();
    let mut rules = PermissionRules::new();
    let origin = RuleOrigin::file(Path::new("/p/.tascer/settings.json"), Some(Path::new("/p")));
    rules.add(Behavior::Deny, "Bash(rm:*)", &origin).unwrap();
    let e = PermissionEngine::builder().rules(rules).build().unwrap();
    let dec = e.evaluate(&bash("rm x", d.path()));
    assert_eq!(
        dec.decided_by,
        DecisionSource::Rule {
            rule: "Bash(rm:*)".into(),
            source_file: Some("/p/.tascer/settings.json".into())
        }
    );
    let json = serde_json::to_value(&dec).unwrap();
    assert_eq!(json["behavior"], "deny");
    assert_eq!(json["decided_by"]["type"], "rule");
}
