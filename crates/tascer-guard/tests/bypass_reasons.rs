#![allow(clippy::unwrap_used, clippy::expect_used)]
//! What refusals say and what they do not refuse: the rule that really
//! matched, what could not be seen, exemptions by allow rules naming the
//! command, and workaround escalation only for calls alike in what they do.

use serde_json::json;
use tascer_guard::permissions::{
    Behavior, DecisionSource, PermissionEngine, PermissionMode, PermissionRules, ToolCall,
};

fn engine(allow: &[&str], deny: &[&str], mode: PermissionMode) -> PermissionEngine {
    PermissionEngine::builder()
        .rules(PermissionRules::parse(allow, &[], deny).unwrap())
        .default_policies()
        .mode(mode)
        .build()
        .unwrap()
}

fn bash(cmd: &str) -> ToolCall {
    ToolCall::new("Bash", json!({ "command": cmd }), std::env::temp_dir())
}

#[tokio::test]
async fn opaque_code_says_what_could_not_be_seen_in_bypass_mode() {
    let e = engine(
        &[],
        &["Bash(rm:*)", "Bash(curl:*)"],
        PermissionMode::BypassPermissions,
    );
    let d = e.resolve_non_interactive(
        e.decide(&bash("python3 -c 'import os; os.remove(\"v\")'"))
            .await,
    );
    assert_eq!(d.behavior, Behavior::Deny);
    assert!(d.reason.contains("cannot see"), "{}", d.reason);
    assert!(d.reason.contains("inline python code"), "{}", d.reason);
    assert!(d.reason.contains("Bash(rm:*)"), "{}", d.reason);
    let d = e.decide(&bash("GIT_EDITOR='rm v' git commit")).await;
    assert_eq!(d.behavior, Behavior::Deny);
    assert!(d.reason.contains("Bash(rm:*)"), "{}", d.reason);
}

#[tokio::test]
async fn without_bash_deny_rules_opaque_code_runs_in_bypass_mode() {
    let e = engine(&[], &["Read(.env)"], PermissionMode::BypassPermissions);
    for cmd in [
        "python3 -c 'print(1)'",
        "bash build.sh",
        "perl -e 'print 1'",
    ] {
        assert_eq!(
            e.decide(&bash(cmd)).await.behavior,
            Behavior::Allow,
            "{cmd}"
        );
    }
}

#[tokio::test]
async fn an_allow_rule_naming_the_command_exempts_it() {
    let e = engine(
        &[
            "Bash(python3 -m pytest:*)",
            "Bash(python3:*)",
            "Bash(bash ci.sh)",
        ],
        &["Bash(rm:*)"],
        PermissionMode::Default,
    );
    assert_eq!(
        e.decide(&bash("python3 -m pytest -q tests")).await.behavior,
        Behavior::Allow
    );
    assert_eq!(
        e.decide(&bash("bash ci.sh")).await.behavior,
        Behavior::Allow
    );
    // `Bash(python3:*)` does not name the inline code.
    let d = e.decide(&bash("python3 -c 'import os'")).await;
    assert_eq!(d.behavior, Behavior::Ask, "{}", d.reason);
    assert_eq!(
        d.decided_by,
        DecisionSource::Policy {
            name: "opaque-code".into()
        }
    );
    assert_eq!(
        e.decide(&bash("bash other.sh")).await.behavior,
        Behavior::Ask
    );
}

#[tokio::test]
async fn a_refusal_names_the_rule_that_matched() {
    let e = engine(
        &[],
        &["Bash(mkfs.*)", "Bash(rm:*)"],
        PermissionMode::Default,
    );
    let d = e.decide(&bash("echo {rm,-rf,victim}")).await;
    assert!(!d.reason.contains("mkfs"), "{}", d.reason);
    let d = e.decide(&bash("busybox rm victim")).await;
    assert_eq!(d.behavior, Behavior::Deny);
    assert!(d.reason.contains("Bash(rm:*)"), "{}", d.reason);
    let d = e.decide(&bash("git -C . push")).await;
    assert_ne!(d.behavior, Behavior::Deny, "no git rule here: {}", d.reason);
}

#[tokio::test]
async fn escalation_only_for_calls_alike_in_what_they_do() {
    let e = engine(
        &[
            "Bash(echo:*)",
            "Bash(cat:*)",
            "Bash(wc:*)",
            "Bash(ls:*)",
            "Bash(pwd)",
        ],
        &["Bash(rm:*)", "Bash(curl:*)"],
        PermissionMode::BypassPermissions,
    );
    for cmd in [
        "echo $(rm a)",
        "echo $(rm b)",
        "echo `curl x`",
        "echo \"$(rm c)\"",
        "echo $(curl y)",
    ] {
        let d = e.resolve_non_interactive(e.decide(&bash(cmd)).await);
        assert_eq!(d.behavior, Behavior::Deny, "{cmd}");
    }
    for cmd in [
        "echo \"$(pwd)\"",
        "cat <(echo hi)",
        "echo $HOME | wc -l",
        "ls $(echo docs)",
    ] {
        let d = e.decide(&bash(cmd)).await;
        assert_eq!(d.behavior, Behavior::Allow, "{cmd}: {}", d.reason);
    }
    // Same program and target, three times: the next alike call escalates.
    for cmd in ["rm victim", "/bin/rm victim", "r\\m -f victim"] {
        e.decide(&bash(cmd)).await;
    }
    let d = e.decide(&bash("busybox rm victim")).await;
    assert!(d.reason.contains("looks like a workaround"), "{}", d.reason);
}

#[tokio::test]
async fn strings_bash_runs_as_code_later_are_opaque_code() {
    let e = engine(&[], &["Bash(rm:*)"], PermissionMode::BypassPermissions);
    for (cmd, said) in [
        ("trap 'rm -rf ~/x' EXIT; true", "trap"),
        ("trap -- \"$H\" INT", "trap"),
        ("PROMPT_COMMAND='rm x' bash -i", "PROMPT_COMMAND"),
        ("export PS1='$(rm x)'", "PS1"),
        ("complete -C 'rm x' ls", "complete -C"),
        ("bind -x '\"\\C-x\": rm x'", "bind -x"),
        ("mapfile -C cleanup -c 1 lines < f", "mapfile -C"),
        ("fc -s ls", "fc"),
    ] {
        let d = e.resolve_non_interactive(e.decide(&bash(cmd)).await);
        assert_eq!(d.behavior, Behavior::Deny, "{cmd}: {}", d.reason);
        assert!(d.reason.contains("cannot see"), "{cmd}: {}", d.reason);
        assert!(d.reason.contains(said), "{cmd}: {}", d.reason);
    }
    // Listing and resetting traps, and the builtins without their code
    // options, run nothing.
    for cmd in [
        "trap -l",
        "trap -p",
        "trap - EXIT",
        "trap '' INT",
        "trap INT",
        "complete -p",
        "mapfile -t lines < f",
    ] {
        let d = e.decide(&bash(cmd)).await;
        assert_eq!(d.behavior, Behavior::Allow, "{cmd}: {}", d.reason);
    }
}

#[tokio::test]
async fn a_policy_ask_suggests_no_allow_rule_that_could_not_allow_it() {
    // The shell policy asks before touching a sensitive file; allow rules
    // come after policies, so suggesting them would mislead.
    let e = engine(&[], &[], PermissionMode::BypassPermissions);
    let d = e.decide(&bash("echo K=1 > .env")).await;
    assert_eq!(d.behavior, Behavior::Ask, "{}", d.reason);
    assert!(d.suggestions.is_empty(), "{:?}", d.suggestions);
    let d = e.resolve_non_interactive(d);
    assert!(!d.reason.contains("permissions.allow"), "{}", d.reason);
    assert!(d.reason.contains("approve it"), "{}", d.reason);
}

#[tokio::test]
async fn recorded_denials_never_quote_an_earlier_escalation() {
    let e = engine(&[], &["Bash(rm:*)"], PermissionMode::BypassPermissions);
    // Denials whose reasons already carry an escalation inside another
    // reason, as the `auto` mode words its refusals.
    for n in 1..=3 {
        e.record_denial(
            &bash("rm victim"),
            &format!(
                "auto mode: not granted (needs approval and no one can be asked: \
                 this looks like a workaround: {n} earlier alike call(s) (cmd:rm victim) \
                 were denied: Bash `rm victim` (denied))"
            ),
        );
    }
    let d = e.decide(&bash("/bin/rm victim")).await;
    assert_eq!(
        d.reason.matches("looks like a workaround").count(),
        1,
        "{}",
        d.reason
    );
    assert!(
        d.reason.contains(
            "Bash `rm victim` (auto mode: not granted (needs approval and no one can be asked)"
        ),
        "{}",
        d.reason
    );
}
