#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The `safety` and `webhooks` settings: their shape, the errors a
//! misspelt or meaningless value gets, merging across layers, and what
//! path classes and auto-approve do to permission decisions.

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use tascer_guard::permissions::{Behavior, DecisionSource, PermissionEngine, ToolCall};
use tascer_guard::reviewers::FailMode;
use tascer_guard::settings::{LoadSettings as _, SettingsError, SettingsLoader};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn load_inline(
    json: serde_json::Value,
) -> Result<tascer_guard::settings::LoadedSettings, SettingsError> {
    let dir = tempfile::tempdir().unwrap();
    SettingsLoader::new(dir.path())
        .sources(false, false, false)
        .flag_settings(json.to_string())
        .load()
}

fn error_of(json: serde_json::Value) -> String {
    load_inline(json).unwrap_err().to_string()
}

#[test]
fn the_documented_shape_loads_and_layers_merge_part_by_part() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (home, cwd) = (root.join("home"), root.join("proj"));
    write(
        &home.join(".tascer/settings.json"),
        &json!({
            "safety": {
                "autoApprove": {"tools": ["Read", "Grep"]},
                "pathClasses": {"trusted": ["~/notes"], "sensitive": ["*.tfstate"]},
                "reviewers": {
                    "model": "review-model",
                    "toolApprove": {"timeoutMs": 9000, "failMode": "open"},
                    "intentValidate": {"maxBlocks": 3},
                },
            },
            "webhooks": [{"url": "https://hooks.example/a", "events": ["PreToolUse", "Stop"]}],
        })
        .to_string(),
    );
    write(
        &cwd.join(".tascer/settings.json"),
        &json!({
            "safety": {
                "pathClasses": {"sensitive": ["secret.txt"], "sensitiveAction": "ask"},
                "reviewers": {
                    "toolApprove": {"model": "strict-model", "cacheTtlSeconds": 0},
                    "toolAppeal": {"contextMessages": 4},
                    "errorAcknowledge": {"enabled": false},
                },
            },
            "webhooks": [
                {"url": "https://hooks.example/b", "headers": {"Authorization": "Bearer t"},
                 "timeoutMs": 2000, "maxQueue": 50, "maxAttempts": 3, "backoffMs": 10},
                {"url": "https://hooks.example/a"},
            ],
        })
        .to_string(),
    );
    let loaded = SettingsLoader::new(&cwd).home(&home).load().unwrap();
    let safety = loaded.safety(Some(&home));
    assert_eq!(
        safety.auto_approve,
        Some(vec!["Read".to_string(), "Grep".to_string()])
    );
    let classes = safety.path_classes.expect("path classes on");
    assert_eq!(
        classes.trusted(),
        [home.join("notes").display().to_string()]
    );
    assert_eq!(
        classes.sensitive_read(),
        Behavior::Ask,
        "the project's action"
    );
    let patterns = classes.sensitive().patterns();
    assert!(patterns.iter().any(|p| p == "*.tfstate"));
    assert!(patterns.iter().any(|p| p == "secret.txt"));
    assert!(patterns.iter().any(|p| p == ".env"), "built-ins kept");

    let r = &safety.reviewers;
    let approve = r.tool_approve.as_ref().unwrap();
    assert_eq!(
        approve.model.as_deref(),
        Some("strict-model"),
        "the project's"
    );
    assert_eq!(approve.cache_ttl, Duration::ZERO);
    assert_eq!(
        approve.fail_mode,
        FailMode::Closed,
        "the default, not the user's"
    );
    let appeal = r.tool_appeal.as_ref().unwrap();
    assert_eq!(
        appeal.model.as_deref(),
        Some("review-model"),
        "reviewers.model"
    );
    assert_eq!(appeal.context_messages, 4);
    assert!(r.error_acknowledge.is_none(), "switched off");
    let intent = r.intent_validate.as_ref().unwrap();
    assert_eq!(intent.max_blocks, 3);
    assert_eq!(intent.fail_mode, FailMode::Open);

    let webhooks = loaded.webhooks();
    assert_eq!(webhooks.len(), 2);
    assert_eq!(webhooks[0].url, "https://hooks.example/b");
    assert_eq!(webhooks[1].url, "https://hooks.example/a");
    assert_eq!(
        webhooks[1].events, None,
        "the project's entry wins for its URL"
    );
}

#[test]
fn misspelt_or_meaningless_safety_settings_are_clear_errors() {
    let unknown = error_of(json!({"safety": {"autoAprove": {}}}));
    assert!(unknown.contains("unknown field `autoAprove`"), "{unknown}");
    assert!(unknown.contains("--settings"), "{unknown}");
    let nested = error_of(json!({"safety": {"reviewers": {"toolApprove": {"failmode": "open"}}}}));
    assert!(nested.contains("unknown field `failmode`"), "{nested}");
    let mode = error_of(json!({"safety": {"reviewers": {"toolApprove": {"failMode": "maybe"}}}}));
    assert!(mode.contains("unknown variant `maybe`"), "{mode}");
    let write_tool = error_of(json!({"safety": {"autoApprove": {"tools": ["Read", "Bash"]}}}));
    assert!(
        write_tool.contains("`Bash` is not a read-only tool"),
        "{write_tool}"
    );
    let blocks = error_of(json!({"safety": {"reviewers": {"toolApprove": {"maxBlocks": 1}}}}));
    assert!(
        blocks.contains("only intentValidate blocks Stops"),
        "{blocks}"
    );
    let zero = error_of(json!({"safety": {"reviewers": {"intentValidate": {"timeoutMs": 0}}}}));
    assert!(zero.contains("timeoutMs must be above 0"), "{zero}");
}

#[test]
fn bad_webhooks_are_clear_errors() {
    let scheme = error_of(json!({"webhooks": [{"url": "ftp://x.example/hook"}]}));
    assert!(
        scheme.contains("must be an http:// or https:// URL"),
        "{scheme}"
    );
    let event =
        error_of(json!({"webhooks": [{"url": "https://x.example", "events": ["PreTool"]}]}));
    assert!(
        event.contains("unknown webhook event \"PreTool\"")
            && event.contains("a hook event name or McpToolCall"),
        "{event}"
    );
    let key = error_of(json!({"webhooks": [{"url": "https://x.example", "retries": 3}]}));
    assert!(key.contains("unknown field `retries`"), "{key}");
    let zero = error_of(json!({"webhooks": [{"url": "https://x.example", "maxQueue": 0}]}));
    assert!(zero.contains("must be above 0"), "{zero}");
    let missing = error_of(json!({"webhooks": [{"events": ["Stop"]}]}));
    assert!(missing.contains("missing field `url`"), "{missing}");
}

#[tokio::test]
async fn path_classes_refuse_sensitive_files_and_auto_approve_trusted_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let (home, cwd, elsewhere) = (root.join("home"), root.join("proj"), root.join("other"));
    for d in [&home.join(".claude"), &cwd, &elsewhere] {
        std::fs::create_dir_all(d).unwrap();
    }
    let loaded = load_inline(json!({
        "safety": {"autoApprove": {}, "pathClasses": {"sensitive": ["*.tfstate"]}}
    }))
    .unwrap();
    let safety = loaded.safety(Some(&home));
    let engine = PermissionEngine::builder()
        .home_dir(&home)
        .default_policies()
        .path_classes(safety.path_classes.unwrap())
        .auto_approve(safety.auto_approve.unwrap())
        .build()
        .unwrap();
    let call = |tool: &str, input: serde_json::Value| ToolCall {
        tool_name: tool.into(),
        input,
        tool_use_id: "t".into(),
        cwd: cwd.clone(),
        session_id: "s".into(),
    };
    let settings = home.join(".claude/settings.json");
    let d = engine
        .decide(&call("Read", json!({"file_path": settings})))
        .await;
    assert_eq!(d.behavior, Behavior::Allow, "{}", d.reason);
    assert_eq!(
        d.decided_by,
        DecisionSource::Policy {
            name: "auto-approve".into()
        }
    );
    // Sensitive reads are refused (without path classes they are asked).
    for file in [".env", "prod.tfstate"] {
        let d = engine
            .decide(&call("Read", json!({"file_path": cwd.join(file)})))
            .await;
        assert_eq!(d.behavior, Behavior::Deny, "{file}: {}", d.reason);
        assert!(d.reason.contains("sensitive pattern"), "{}", d.reason);
    }
    let credentials = home.join(".claude/.credentials.json");
    let d = engine
        .decide(&call("Read", json!({"file_path": credentials})))
        .await;
    assert_eq!(d.behavior, Behavior::Deny, "{}", d.reason);
    // A read elsewhere is not trusted: the default asks.
    let d = engine
        .decide(&call("Read", json!({"file_path": elsewhere.join("a.md")})))
        .await;
    assert_eq!(d.behavior, Behavior::Ask, "{}", d.reason);
    // Files a search finds are screened with the same patterns.
    let engine = std::sync::Arc::new(engine);
    let search = engine.file_access(&cwd);
    std::fs::write(cwd.join("prod.tfstate"), "{}").unwrap();
    std::fs::write(cwd.join("main.tf"), "").unwrap();
    assert!(search.may_read(&cwd.join("prod.tfstate")).is_err());
    assert!(search.may_read(&cwd.join("main.tf")).is_ok());
    // Writes are never auto-approved.
    let d = engine
        .decide(&call(
            "Write",
            json!({"file_path": home.join(".claude/x.md"), "content": "x"}),
        ))
        .await;
    assert_eq!(d.behavior, Behavior::Ask, "{}", d.reason);
}

#[tokio::test]
async fn low_risk_tools_are_approved_and_configurable() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let call = |tool: &str, input: serde_json::Value| ToolCall {
        tool_name: tool.into(),
        input,
        tool_use_id: "t".into(),
        cwd: tmp.path().to_path_buf(),
        session_id: "s".into(),
    };
    let engine_for = |settings: serde_json::Value| {
        let safety = load_inline(settings).unwrap().safety(Some(&home));
        PermissionEngine::builder()
            .home_dir(&home)
            .default_policies()
            .low_risk_tools(safety.low_risk.unwrap())
            .build()
            .unwrap()
    };
    // The defaults: WebSearch and TodoWrite run; WebFetch and MCP tools
    // are not low-risk unless named.
    let engine = engine_for(json!({"safety": {"autoApprove": {}}}));
    let d = engine
        .decide(&call("WebSearch", json!({"query": "landlock abi"})))
        .await;
    assert_eq!(d.behavior, Behavior::Allow, "{}", d.reason);
    assert_eq!(
        d.decided_by,
        DecisionSource::Policy {
            name: "low-risk".into()
        }
    );
    for (tool, input) in [
        ("WebFetch", json!({"url": "https://example.com"})),
        ("mcp__docs__search", json!({"q": "x"})),
    ] {
        let d = engine.decide(&call(tool, input)).await;
        assert_ne!(d.behavior, Behavior::Allow, "{tool}: {}", d.reason);
    }
    // Named, they run.
    let engine = engine_for(json!({"safety": {"autoApprove": {
        "lowRiskTools": ["WebFetch", "mcp__docs__*"]
    }}}));
    for (tool, input) in [
        ("WebFetch", json!({"url": "https://example.com"})),
        ("mcp__docs__search", json!({"q": "x"})),
    ] {
        let d = engine.decide(&call(tool, input)).await;
        assert_eq!(d.behavior, Behavior::Allow, "{tool}: {}", d.reason);
    }
}

#[test]
fn the_validators_take_the_reviewer_keys_fail_open_by_default_and_refuse_unknown_ones() {
    let loaded = load_inline(json!({"safety": {"reviewers": {
        "model": "review-model",
        "planValidate": {"contextMessages": 6},
        "styleDrift": {"failMode": "closed", "timeoutMs": 5000, "cacheTtlSeconds": 0},
        "claudeMdValidate": {"model": "md-model"},
    }}}))
    .unwrap();
    let safety = loaded.safety(None);
    let r = &safety.reviewers;
    let plan = r.plan_validate.as_ref().unwrap();
    assert_eq!(plan.context_messages, 6);
    assert_eq!(plan.fail_mode, FailMode::Open);
    assert_eq!(plan.model.as_deref(), Some("review-model"));
    let style = r.style_drift.as_ref().unwrap();
    assert_eq!(style.fail_mode, FailMode::Closed);
    assert_eq!(style.timeout, Duration::from_millis(5000));
    assert_eq!(style.cache_ttl, Duration::ZERO);
    let md = r.claude_md_validate.as_ref().unwrap();
    assert_eq!(md.model.as_deref(), Some("md-model"));
    assert_eq!(md.fail_mode, FailMode::Open);
    assert!(!r.is_empty(), "validators alone turn the reviewers on");

    let off =
        load_inline(json!({"safety": {"reviewers": {"styleDrift": {"enabled": false}}}})).unwrap();
    assert!(off.safety(None).reviewers.is_empty());

    let unknown = error_of(json!({"safety": {"reviewers": {"styleDrift": {"strict": true}}}}));
    assert!(unknown.contains("unknown field `strict`"), "{unknown}");
    let misspelt = error_of(json!({"safety": {"reviewers": {"claudeMDValidate": {}}}}));
    assert!(
        misspelt.contains("unknown field `claudeMDValidate`"),
        "{misspelt}"
    );
    let blocks = error_of(json!({"safety": {"reviewers": {"planValidate": {"maxBlocks": 1}}}}));
    assert!(
        blocks.contains("safety.reviewers.planValidate.maxBlocks"),
        "{blocks}"
    );
    let zero = error_of(json!({"safety": {"reviewers": {"claudeMdValidate": {"timeoutMs": 0}}}}));
    assert!(zero.contains("claudeMdValidate"), "{zero}");
}
