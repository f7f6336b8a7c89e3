#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The bypass corpus (tests/data/bypass_corpus.toml): a few hundred ways
//! round Bash deny rules and file protections, and benign look-alikes, run
//! in `default`, `acceptEdits` and `bypassPermissions` through one engine
//! per mode (so workaround detection sees the whole sequence). No refused
//! case may be allowed in any mode; every benign case must be allowed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};
use tascer_guard::permissions::{Behavior, PermissionEngine, PermissionMode, ToolCall};
use tascer_guard::settings::{LoadSettings as _, SettingsLoader};

#[derive(Deserialize)]
struct Corpus {
    bash: Vec<Group>,
    file: Vec<FileGroup>,
}

#[derive(Deserialize)]
struct Group {
    family: String,
    expect: String,
    cases: Vec<(String, String)>,
}

#[derive(Deserialize)]
struct FileGroup {
    family: String,
    expect: String,
    cases: Vec<(String, String, String)>,
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The workspace and home the corpus refers to as `{ws}` and `{home}`.
struct Fixture {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    home: PathBuf,
}

fn rm_binary() -> PathBuf {
    ["/usr/bin/rm", "/bin/rm"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("rm binary")
}

fn fixture() -> Fixture {
    use std::os::unix::fs::symlink;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let ws = root.join("ws");
    let home = root.join("home");
    for f in [
        ".env",
        ".env.local",
        ".env.production",
        "credentials.json",
        "server.pem",
        "private.key",
        "id_rsa",
        ".netrc",
        ".git-credentials",
        ".aws/credentials",
        "secrets.yaml",
    ] {
        write(&ws.join(f), "SECRET=hunter2\n");
    }
    for f in [
        ".env.example",
        ".env.sample",
        ".env.template",
        "notes.txt",
        "src/main.rs",
        "docs/readme.md",
        "docs/ssh.md",
        "environment.md",
        "keys.md",
        "secret_santa.txt",
        "Makefile",
        "list.txt",
        "evil.sed",
        "evil.mk",
        "evil.py",
        "evil.pl",
        "evil.js",
        "evil.rb",
        "evil.cfg",
        "scripts/check.sh",
    ] {
        write(&ws.join(f), "rm victim\n");
    }
    write(&ws.join("evil.sh"), "rm victim\n");
    write(&ws.join("rmscript"), "#!/bin/sh\nrm \"$@\"\n");
    std::fs::create_dir_all(ws.join("build")).unwrap();
    write(&home.join(".ssh/id_ed25519"), "PRIVATE KEY\n");
    write(&home.join(".ssh/authorized_keys"), "ssh-ed25519 AAAA\n");
    write(&home.join(".aws/credentials"), "[default]\n");
    symlink(ws.join(".env"), ws.join("link_env")).unwrap();
    symlink(&ws, ws.join("linkdir")).unwrap();
    symlink(home.join(".ssh"), ws.join("sshlink")).unwrap();
    symlink(ws.join("notes.txt"), ws.join("notes_link")).unwrap();
    symlink(rm_binary(), ws.join("rmlink")).unwrap();
    std::fs::create_dir_all(ws.join("bin")).unwrap();
    symlink(rm_binary(), ws.join("bin/innocent")).unwrap();
    std::fs::hard_link(home.join(".ssh/id_ed25519"), ws.join("hl_key")).unwrap();
    std::fs::hard_link(ws.join(".env"), ws.join("docs/hl_env")).unwrap();
    std::fs::hard_link(ws.join("notes.txt"), ws.join("docs/hl_notes")).unwrap();
    Fixture {
        _tmp: tmp,
        ws,
        home,
    }
}

fn engine(fx: &Fixture, mode: PermissionMode) -> PermissionEngine {
    let settings = SettingsLoader::new(&fx.ws)
        .home(&fx.home)
        .sources(false, false, false)
        .flag_settings(data("bypass_settings.json").display().to_string())
        .load()
        .unwrap();
    settings
        .apply(PermissionEngine::builder(), Some(&fx.home))
        .home_dir(&fx.home)
        .default_policies()
        .mode(mode)
        .build()
        .unwrap()
}

fn file_input(tool: &str, path: &str) -> Value {
    match tool {
        "Read" => json!({ "file_path": path }),
        "Write" => json!({ "file_path": path, "content": "x" }),
        "Edit" => json!({ "file_path": path, "old_string": "a", "new_string": "b" }),
        "Grep" => json!({ "pattern": "SECRET", "path": path }),
        _ => json!({ "pattern": "*", "path": path }),
    }
}

struct Case {
    family: String,
    refuse: bool,
    tool: String,
    input: Value,
    shown: String,
    why: String,
}

fn cases(fx: &Fixture) -> Vec<Case> {
    let text = std::fs::read_to_string(data("bypass_corpus.toml")).unwrap();
    let corpus: Corpus = toml::from_str(&text).unwrap();
    let fill = |s: &str| {
        s.replace("{ws}", &fx.ws.display().to_string())
            .replace("{home}", &fx.home.display().to_string())
    };
    let mut out = Vec::new();
    for g in &corpus.bash {
        assert!(
            matches!(g.expect.as_str(), "refuse" | "allow"),
            "{}",
            g.expect
        );
        for (command, why) in &g.cases {
            out.push(Case {
                family: format!("bash/{}", g.family),
                refuse: g.expect == "refuse",
                tool: "Bash".into(),
                input: json!({ "command": fill(command) }),
                shown: command.clone(),
                why: why.clone(),
            });
        }
    }
    for g in &corpus.file {
        assert!(
            matches!(g.expect.as_str(), "refuse" | "allow"),
            "{}",
            g.expect
        );
        for (tool, path, why) in &g.cases {
            out.push(Case {
                family: format!("file/{}", g.family),
                refuse: g.expect == "refuse",
                tool: tool.clone(),
                input: file_input(tool, &fill(path)),
                shown: format!("{tool} {path}"),
                why: why.clone(),
            });
        }
    }
    out
}

#[tokio::test]
async fn corpus_holds_in_every_mode() {
    let fx = fixture();
    let all = cases(&fx);
    let bash = all.iter().filter(|c| c.tool == "Bash").count();
    assert!(bash >= 200, "only {bash} Bash cases");
    assert!(
        all.len() - bash >= 60,
        "only {} file cases",
        all.len() - bash
    );
    let mut failures = Vec::new();
    let mut summary: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::BypassPermissions,
    ] {
        let engine = engine(&fx, mode);
        for c in &all {
            let call = ToolCall::new(c.tool.clone(), c.input.clone(), &fx.ws);
            let d = engine.decide(&call).await;
            let d = engine.resolve_non_interactive(d);
            let allowed = d.behavior == Behavior::Allow;
            let ok = allowed != c.refuse;
            let entry = summary
                .entry((c.family.clone(), mode.to_string()))
                .or_default();
            entry.0 += 1;
            if ok {
                entry.1 += 1;
            } else {
                failures.push(format!(
                    "[{mode}] {} `{}` ({}): expected {}, got {:?} by {:?}: {}",
                    c.family,
                    c.shown,
                    c.why,
                    if c.refuse { "refusal" } else { "allow" },
                    d.behavior,
                    d.decided_by,
                    d.reason
                ));
            }
        }
    }
    println!("{:<32} {:<18} {:>5}/{:<5}", "family", "mode", "ok", "cases");
    for ((family, mode), (n, ok)) in &summary {
        println!("{family:<32} {mode:<18} {ok:>5}/{n:<5}");
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
