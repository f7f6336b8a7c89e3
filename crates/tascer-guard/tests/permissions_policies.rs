#![allow(clippy::unwrap_used, clippy::expect_used)]
//! FileAccessPolicy, ShellCommandPolicy, McpPolicy and custom policies.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use tascer_guard::permissions::{
    Behavior, CommandRule, DecisionSource, FileAccessPolicy, McpPolicy, PermissionEngine,
    PermissionError, PermissionMode, Policy, PolicyVerdict, SensitivePatterns, ShellCommandPolicy,
    ToolCall,
};

fn read(p: &Path, cwd: &Path) -> ToolCall {
    ToolCall::new("Read", json!({"file_path": p}), cwd)
}
fn write(p: &Path, cwd: &Path) -> ToolCall {
    ToolCall::new("Write", json!({"file_path": p, "content": "x"}), cwd)
}

#[test]
fn sensitive_files_ask_on_read_and_deny_on_write() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().canonicalize().unwrap();
    let p = FileAccessPolicy::new().home(&cwd);
    for name in [
        ".env",
        ".env.production",
        "server.pem",
        "tls.key",
        "id_rsa",
        "id_rsa.pub",
        "credentials.json",
        "secrets.yaml",
        ".netrc",
        ".git-credentials",
        ".ssh/config",
        ".aws/credentials",
    ] {
        let path = cwd.join(name);
        assert!(
            matches!(p.check(&read(&path, &cwd)), PolicyVerdict::Ask { .. }),
            "read {name}"
        );
        assert!(
            matches!(p.check(&write(&path, &cwd)), PolicyVerdict::Deny { .. }),
            "write {name}"
        );
    }
    for name in ["src/main.rs", "environment.md", "keys.txt"] {
        assert_eq!(
            p.check(&read(&cwd.join(name), &cwd)),
            PolicyVerdict::Abstain,
            "{name}"
        );
    }
    // Configurable.
    let p = FileAccessPolicy::new()
        .sensitive_read(Behavior::Deny)
        .sensitive_patterns(SensitivePatterns::new(["*.secret"]));
    assert!(matches!(
        p.check(&read(&cwd.join("a.secret"), &cwd)),
        PolicyVerdict::Deny { .. }
    ));
    assert_eq!(
        p.check(&read(&cwd.join(".env"), &cwd)),
        PolicyVerdict::Abstain
    );
}

#[test]
fn canonicalization_defeats_tricks() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let cwd = root.join("proj");
    let home = root.join("home");
    std::fs::create_dir_all(cwd.join("sub")).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "k").unwrap();
    std::fs::write(cwd.join(".env"), "S=1").unwrap();
    std::os::unix::fs::symlink(cwd.join(".env"), cwd.join("innocent.txt")).unwrap();
    std::os::unix::fs::symlink(home.join(".ssh"), cwd.join("keys")).unwrap();
    let p = FileAccessPolicy::new()
        .home(&home)
        .restricted_root(root.join("restricted"));
    let ask = |path: &str| {
        matches!(
            p.check(&ToolCall::new("Read", json!({"file_path": path}), &cwd)),
            PolicyVerdict::Ask { .. }
        )
    };
    assert!(ask("innocent.txt"), "symlink to .env");
    assert!(ask("keys/id_rsa"), "symlinked dir");
    assert!(ask("~/.ssh/id_rsa"), "tilde");
    assert!(ask("sub/../.env"), "dotdot");
    let via_proc = format!("/proc/self/root{}", cwd.join(".env").display());
    if Path::new("/proc/self/root").exists() {
        assert!(ask(&via_proc), "/proc/self/root");
    }
    // Restricted root, including a not-yet-existing file through a symlinked parent.
    std::fs::create_dir_all(root.join("restricted")).unwrap();
    std::os::unix::fs::symlink(root.join("restricted"), cwd.join("r")).unwrap();
    let v = p.check(&write(&cwd.join("r/new/file.txt"), &cwd));
    assert!(matches!(v, PolicyVerdict::Deny { .. }), "{v:?}");
    // Glob patterns that climb out are checked too.
    let glob = ToolCall::new("Glob", json!({"pattern": "../restricted/*"}), &cwd);
    assert!(matches!(p.check(&glob), PolicyVerdict::Deny { .. }));
}

#[test]
fn block_outside_and_additional_roots() {
    let tmp = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let p = FileAccessPolicy::new().block_outside(true);
    assert!(matches!(
        p.check(&read(&other.path().join("a"), cwd)),
        PolicyVerdict::Deny { .. }
    ));
    assert_eq!(p.check(&read(&cwd.join("a"), cwd)), PolicyVerdict::Abstain);
    let p = p.allowed_root(other.path());
    assert_eq!(
        p.check(&read(&other.path().join("a"), cwd)),
        PolicyVerdict::Abstain
    );
}

#[test]
fn file_policy_in_engine_beats_bypass() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().canonicalize().unwrap();
    let engine = PermissionEngine::builder()
        .mode(PermissionMode::BypassPermissions)
        .default_policies()
        .home_dir(&cwd)
        .build()
        .unwrap();
    let d = engine.evaluate(&write(&cwd.join(".env"), &cwd));
    assert_eq!(d.behavior, Behavior::Deny);
    assert_eq!(
        d.decided_by,
        DecisionSource::Policy {
            name: "file-access".into()
        }
    );
    assert_eq!(
        engine.evaluate(&read(&cwd.join(".env"), &cwd)).behavior,
        Behavior::Ask
    );
    assert_eq!(
        engine.evaluate(&read(&cwd.join("a.txt"), &cwd)).behavior,
        Behavior::Allow
    );
}

#[test]
fn shell_args_check_is_opt_in() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().canonicalize().unwrap();
    let p = FileAccessPolicy::new().home(&cwd).check_shell_args(true);
    let bash = |c: &str| ToolCall::new("Bash", json!({"command": c}), &cwd);
    assert!(matches!(
        p.check(&bash("cat ~/.ssh/id_rsa")),
        PolicyVerdict::Ask { .. }
    ));
    assert!(matches!(
        p.check(&bash("echo x > .env")),
        PolicyVerdict::Deny { .. }
    ));
    assert_eq!(p.check(&bash("cat README.md")), PolicyVerdict::Abstain);
    assert_eq!(
        FileAccessPolicy::new().check(&bash("cat .env")),
        PolicyVerdict::Abstain
    );
}

#[test]
fn command_rules_with_examples() {
    let rule = CommandRule::new("git push:*", Behavior::Ask)
        .unwrap()
        .with_examples(
            ["git push origin main", "cd x && git push"],
            ["git pull", "git pushy"],
        )
        .unwrap();
    let policy = ShellCommandPolicy::new()
        .rule(rule)
        .rule(CommandRule::new("make test", Behavior::Allow).unwrap())
        .rule(CommandRule::new("docker:*", Behavior::Deny).unwrap());
    let d = tempfile::tempdir().unwrap();
    let bash = |c: &str| ToolCall::new("Bash", json!({"command": c}), d.path());
    assert!(matches!(
        policy.check(&bash("git push -f")),
        PolicyVerdict::Ask { .. }
    ));
    assert_eq!(policy.check(&bash("make test")), PolicyVerdict::Allow);
    assert_eq!(
        policy.check(&bash("make test && ls")),
        PolicyVerdict::Abstain
    );
    assert!(matches!(
        policy.check(&bash("sudo docker run x")),
        PolicyVerdict::Deny { .. }
    ));
    assert!(matches!(
        policy.check(&bash("$X run")),
        PolicyVerdict::Ask { .. }
    ));

    let err = CommandRule::new("git push:*", Behavior::Ask)
        .unwrap()
        .with_examples(["git pull"], [])
        .unwrap_err();
    assert!(matches!(err, PermissionError::Example { .. }));
    let msg = err.to_string();
    assert!(
        msg.contains("git push:*") && msg.contains("git pull"),
        "{msg}"
    );
    let err = CommandRule::new("git:*", Behavior::Deny)
        .unwrap()
        .with_examples([], ["git status"])
        .unwrap_err();
    assert!(err.to_string().contains("should not match"), "{err}");
}

#[test]
fn shell_policy_config_file() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("shell.json");
    std::fs::write(
        &path,
        r#"{"dangerousDefaults": false, "rules": [
            {"pattern": "terraform apply:*", "decision": "deny", "match": ["terraform apply -auto-approve"], "not_match": ["terraform plan"]}
        ]}"#,
    )
    .unwrap();
    let policy = ShellCommandPolicy::from_file(&path).unwrap();
    assert_eq!(policy.rules().len(), 1);
    let bash = |c: &str| ToolCall::new("Bash", json!({"command": c}), tmp.path());
    assert!(matches!(
        policy.check(&bash("terraform apply")),
        PolicyVerdict::Deny { .. }
    ));
    assert_eq!(
        policy.check(&bash("rm -rf /")),
        PolicyVerdict::Abstain,
        "dangerous defaults off"
    );

    std::fs::write(
        &path,
        r#"{"rules": [{"pattern": "npm test", "decision": "allow", "match": ["npm test --watch"]}]}"#,
    )
    .unwrap();
    let err = ShellCommandPolicy::from_file(&path).unwrap_err();
    assert!(err.to_string().contains("npm test --watch"), "{err}");
    let err = ShellCommandPolicy::from_json("{\"rules\": [}", "inline").unwrap_err();
    assert!(err.to_string().contains("line 1"), "{err}");
}

#[test]
fn mcp_policy() {
    let d = tempfile::tempdir().unwrap();
    let p = McpPolicy::new()
        .allow("github")
        .allow("mcp__files__read")
        .deny("github__delete_repo")
        .default_behavior(Behavior::Deny);
    let call = |n: &str| ToolCall::new(n, json!({}), d.path());
    assert_eq!(p.check(&call("mcp__github__search")), PolicyVerdict::Allow);
    assert!(matches!(
        p.check(&call("mcp__github__delete_repo")),
        PolicyVerdict::Deny { .. }
    ));
    assert_eq!(p.check(&call("mcp__files__read")), PolicyVerdict::Allow);
    assert!(matches!(
        p.check(&call("mcp__files__write")),
        PolicyVerdict::Deny { .. }
    ));
    assert_eq!(p.check(&call("Bash")), PolicyVerdict::Abstain);

    let engine = PermissionEngine::builder()
        .policy(Arc::new(p))
        .build()
        .unwrap();
    let dec = engine.evaluate(&call("mcp__github__search"));
    assert_eq!(dec.behavior, Behavior::Allow);
    assert_eq!(
        dec.decided_by,
        DecisionSource::Policy { name: "mcp".into() }
    );
    assert_eq!(
        engine.evaluate(&call("mcp__other__x")).behavior,
        Behavior::Deny
    );
}

struct NoFridays;
impl Policy for NoFridays {
    fn name(&self) -> &str {
        "custom"
    }
    fn check(&self, call: &ToolCall) -> PolicyVerdict {
        if call.tool_name == "Deploy" {
            PolicyVerdict::Deny {
                reason: "no deploys".into(),
            }
        } else {
            PolicyVerdict::Abstain
        }
    }
}

#[test]
fn custom_policy_deny_beats_allow_rule() {
    let d = tempfile::tempdir().unwrap();
    let rules = tascer_guard::permissions::PermissionRules::parse(&["Deploy"], &[], &[]).unwrap();
    let engine = PermissionEngine::builder()
        .rules(rules)
        .policy(Arc::new(NoFridays))
        .build()
        .unwrap();
    let dec = engine.evaluate(&ToolCall::new("Deploy", json!({}), d.path()));
    assert_eq!(dec.behavior, Behavior::Deny);
    assert_eq!(dec.reason, "no deploys");
}
