//! The tools `tascer mcp serve` offers: `check` → `confirm` → `commit` →
//! `push` (a gate chain bound to one working-tree state), `validate_intent`,
//! and read access to the session store and ledger.
//!
//! State: the last check and confirm per repository live in the server
//! process (keyed by the repo's top-level path) and carry the working-tree
//! digest they were made for; every check, confirm, commit and push is also
//! appended to the ledger as a `gate_result` entry of one ledger session per
//! server process (`mcp-serve-<uuid>`, signed when the home has a key), so
//! `tascer report` / `tascer verify` cover them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use serde_json::{Map, Value, json};
use tascer::mcp::{McpServerSpec, ServeToolResult, ServedTool, ToolCallContext};
use tascer::{ContentBlock, Message, SessionStore, UserContent};
use tascer_ledger::{EntryKind, Ledger, SessionStart, sha256_ref};

use crate::mcp_admit::{Admitter, Refused};
use crate::mcp_check::{self, CheckPlan, CommandRun};
use crate::mcp_git;
use crate::mcp_review::{self, Reviewer};

/// How much diff a reviewer model gets.
const REVIEW_DIFF_BYTES: usize = 120_000;
/// How much transcript `validate_intent` sends.
const TRANSCRIPT_BYTES: usize = 150_000;

/// The last check of a repository.
#[derive(Debug, Clone)]
struct CheckRecord {
    digest: String,
    passed: bool,
    failed: Vec<String>,
}

/// The last confirm of a repository.
#[derive(Debug, Clone)]
struct ConfirmRecord {
    digest: String,
    confirmed: bool,
}

#[derive(Debug, Default)]
struct RepoState {
    check: Option<CheckRecord>,
    confirm: Option<ConfirmRecord>,
}

/// Shared state of one `tascer mcp serve` process.
struct Server {
    home: PathBuf,
    cwd: PathBuf,
    repos: Mutex<HashMap<PathBuf, RepoState>>,
    ledger_session: String,
    ledger: Mutex<Option<Ledger>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

fn str_arg<'a>(args: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    args.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// An error as a tool error result (`isError: true`, the error chain as text).
fn tool_error(err: &anyhow::Error) -> ServeToolResult {
    ServeToolResult::error(format!("{err:#}"))
}

impl Server {
    /// The repository a call works on: `path` (relative to the server's
    /// cwd) or the cwd, resolved to its work-tree root.
    async fn repo(&self, args: &Map<String, Value>) -> anyhow::Result<PathBuf> {
        let path = match str_arg(args, "path") {
            Some(p) => self.cwd.join(p),
            None => self.cwd.clone(),
        };
        mcp_git::repo_root(&path).await
    }

    /// Appends a `gate_result` entry for `gate` to this server's ledger
    /// session (opened on first use). A failure is returned as the text to
    /// give the caller: a gate that is not on record must not look passed
    /// (see [`Self::recorded`]).
    fn record(
        &self,
        gate: &str,
        passed: bool,
        message: &str,
        duration_ms: u64,
        details: Value,
    ) -> Result<(), String> {
        let result = (|| -> anyhow::Result<()> {
            let mut guard = lock(&self.ledger);
            if guard.is_none() {
                std::fs::create_dir_all(&self.home)?;
                // Signed by default, like every session (TASCER_SIGNING=off
                // turns it off).
                let key = if tascer::signing_from_env() {
                    Some(tascer_ledger::load_or_create_home_signing_key(&self.home)?.0)
                } else {
                    None
                };
                let ledger = Ledger::open_in_home(&self.home, key)?;
                ledger.start_session(
                    &self.ledger_session,
                    &SessionStart {
                        model: "none".into(),
                        options_digest: sha256_ref(b"{}"),
                        system_prompt_digest: sha256_ref(b""),
                        signing_key_id: None,
                        context: json!({
                            "source": "tascer mcp serve",
                            "cwd": self.cwd.display().to_string(),
                            "version": tascer::VERSION,
                        }),
                    },
                )?;
                *guard = Some(ledger);
            }
            if let Some(ledger) = guard.as_ref() {
                ledger.append(
                    &self.ledger_session,
                    EntryKind::GateResult,
                    json!({
                        "gate": gate,
                        "passed": passed,
                        "message": message,
                        "duration_ms": duration_ms,
                        "details": details,
                    }),
                )?;
            }
            Ok(())
        })();
        result.map_err(|err| {
            let text = format!(
                "{gate} could not be recorded in the ledger in {}: {err:#}",
                self.home.display()
            );
            tracing::error!("{text}");
            text
        })
    }

    /// `result`, or an error result saying the call is not on record when
    /// `recorded` failed.
    fn recorded(result: ServeToolResult, recorded: Result<(), String>) -> ServeToolResult {
        match recorded {
            Ok(()) => result,
            Err(text) => ServeToolResult::error(format!(
                "{text}. The call's outcome is not on record; treat it as not done."
            )),
        }
    }

    /// Admission of `tool`'s calls in `repo`. When Tascer's settings
    /// cannot be read, that is the refusal: nothing runs unadmitted.
    fn admitter(&self, repo: &Path, tool: &'static str) -> Result<Admitter, Refused> {
        Admitter::load(repo, &self.home, &self.ledger_session, tool).map_err(|e| Refused {
            call: tool.to_owned(),
            reason: format!("cannot read Tascer's settings: {e:#}"),
        })
    }

    /// `tool` (`commit`, `push`) not done because admission refused one
    /// of its calls: recorded, and a tool error naming the call and
    /// Tascer's reason.
    fn refused(&self, tool: &str, repo: &Path, refused: &Refused) -> ServeToolResult {
        let reason = format!("refused by Tascer: {refused}");
        // Already an error result; a recording failure is logged.
        let _ = self.record(
            &format!("mcp.{tool}"),
            false,
            &reason,
            0,
            json!({"repo": repo.display().to_string(), "refused": refused.call}),
        );
        ServeToolResult::error(format!("{tool} refused: {reason}"))
    }

    /// A check whose commands admission refused: recorded as a failed
    /// check of this working-tree state (so `confirm` declines), and an
    /// error result naming the command and Tascer's reason.
    async fn check_refused(&self, repo: &Path, refused: Refused) -> ServeToolResult {
        let digest = match mcp_git::tree_digest(repo).await {
            Ok(d) => d,
            Err(e) => return tool_error(&e),
        };
        lock(&self.repos)
            .entry(repo.to_path_buf())
            .or_default()
            .check = Some(CheckRecord {
            digest: digest.clone(),
            passed: false,
            failed: vec![refused.call.clone()],
        });
        let message = format!("refused by Tascer: {refused}");
        let data = json!({
            "passed": false,
            "repo": repo.display().to_string(),
            "tree_digest": digest,
            "refused": {"command": refused.call, "reason": refused.reason},
        });
        let on_record = self.record("mcp.check", false, &message, 0, data.clone());
        Self::recorded(
            ServeToolResult::structured(
                format!("check REFUSED in {}: {message}", repo.display()),
                data,
                true,
            ),
            on_record,
        )
    }

    async fn check(&self, args: Map<String, Value>, ctx: ToolCallContext) -> ServeToolResult {
        let repo = match self.repo(&args).await {
            Ok(r) => r,
            Err(e) => return tool_error(&e),
        };
        let mut plan: CheckPlan = match mcp_check::plan(&repo) {
            Ok(p) => p,
            Err(e) => return tool_error(&e),
        };
        if let Some(secs) = args.get("timeout_secs").and_then(Value::as_u64) {
            plan.timeout = std::time::Duration::from_secs(secs.max(1));
        }
        let commands: Vec<&str> = plan
            .lint
            .iter()
            .chain(&plan.test)
            .map(String::as_str)
            .collect();
        let refused = match self.admitter(&repo, "check") {
            Ok(admitter) => admitter.commands(&commands).await,
            Err(refused) => Some(refused),
        };
        if let Some(refused) = refused {
            return self.check_refused(&repo, refused).await;
        }
        let started = Instant::now();
        let _ = ctx
            .log(
                "info",
                json!(format!(
                    "check: {} command(s) in {}",
                    plan.lint.len() + plan.test.len(),
                    repo.display()
                )),
            )
            .await;
        let runs = mcp_check::run_plan(&repo, &plan, ctx.cancellation()).await;
        let digest = match mcp_git::tree_digest(&repo).await {
            Ok(d) => d,
            Err(e) => return tool_error(&e),
        };
        let total = plan.lint.len() + plan.test.len();
        let failed: Vec<String> = runs
            .iter()
            .filter(|r| !r.passed())
            .map(|r| r.command.clone())
            .collect();
        let passed = runs.len() == total && failed.is_empty();
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        lock(&self.repos).entry(repo.clone()).or_default().check = Some(CheckRecord {
            digest: digest.clone(),
            passed,
            failed: failed.clone(),
        });
        let text = check_text(&repo, &plan, &runs, passed, &digest);
        let data = json!({
            "passed": passed,
            "repo": repo.display().to_string(),
            "tree_digest": digest,
            "source": plan.source,
            "timeout_secs": plan.timeout.as_secs(),
            "commands": runs,
            "duration_ms": duration_ms,
        });
        let recorded = json!({
            "repo": data["repo"], "tree_digest": data["tree_digest"], "source": data["source"],
            "commands": runs.iter().map(|r| json!({
                "phase": r.phase, "command": r.command, "exit_code": r.exit_code,
                "timed_out": r.timed_out, "duration_ms": r.duration_ms,
            })).collect::<Vec<_>>(),
        });
        let message = if passed {
            format!("{total} command(s) passed")
        } else {
            format!("failed: {}", failed.join(", "))
        };
        let on_record = self.record("mcp.check", passed, &message, duration_ms, recorded);
        Self::recorded(ServeToolResult::structured(text, data, false), on_record)
    }

    async fn confirm(&self, args: Map<String, Value>) -> ServeToolResult {
        let repo = match self.repo(&args).await {
            Ok(r) => r,
            Err(e) => return tool_error(&e),
        };
        let started = Instant::now();
        let (verdict, reasons, reviewed_by, digest) = self.decide(&repo, &args).await;
        let confirmed = verdict == "CONFIRMED";
        if let Some(digest) = &digest {
            lock(&self.repos).entry(repo.clone()).or_default().confirm = Some(ConfirmRecord {
                digest: digest.clone(),
                confirmed,
            });
        }
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let data = json!({
            "verdict": verdict,
            "reasons": reasons,
            "reviewed_by": reviewed_by,
            "repo": repo.display().to_string(),
            "tree_digest": digest,
        });
        let on_record = self.record(
            "mcp.confirm",
            confirmed,
            &reasons.join("; "),
            duration_ms,
            data.clone(),
        );
        if on_record.is_err() {
            // A confirmation that is not on record does not allow a commit.
            if let Some(state) = lock(&self.repos).get_mut(&repo) {
                state.confirm = None;
            }
        }
        let mut text = verdict.to_owned();
        for r in &reasons {
            text.push_str(&format!("\n- {r}"));
        }
        Self::recorded(ServeToolResult::structured(text, data, false), on_record)
    }

    /// The confirm decision: `(verdict, reasons, reviewer, digest)`.
    async fn decide(
        &self,
        repo: &Path,
        args: &Map<String, Value>,
    ) -> (&'static str, Vec<String>, Option<String>, Option<String>) {
        let declined =
            |reason: String, digest: Option<String>| ("DECLINED", vec![reason], None, digest);
        let digest = match mcp_git::tree_digest(repo).await {
            Ok(d) => d,
            Err(e) => return declined(format!("cannot read the working tree: {e:#}"), None),
        };
        let check = lock(&self.repos).get(repo).and_then(|s| s.check.clone());
        let Some(check) = check else {
            return declined(
                format!(
                    "no check has run for {} in this server: call `check` first",
                    repo.display()
                ),
                Some(digest),
            );
        };
        if check.digest != digest {
            return declined(
                "the working tree changed since the last check: call `check` again".into(),
                Some(digest),
            );
        }
        if !check.passed {
            return declined(
                format!("the last check failed ({})", check.failed.join(", ")),
                Some(digest),
            );
        }
        let changes = match mcp_git::changes(repo).await {
            Ok(c) if c.is_empty() => {
                return declined(
                    "nothing to confirm: no changes against HEAD".into(),
                    Some(digest),
                );
            }
            Ok(c) => c,
            Err(e) => return declined(format!("cannot list changes: {e:#}"), Some(digest)),
        };
        let written: Vec<&str> = changes
            .iter()
            .filter(|c| c.kind != "deleted")
            .map(|c| c.path.as_str())
            .collect();
        let refused = match self.admitter(repo, "confirm") {
            Ok(admitter) => admitter.writes(&written).await,
            Err(refused) => Some(refused),
        };
        if let Some(refused) = refused {
            return declined(format!("refused by Tascer: {refused}"), Some(digest));
        }
        let Some(reviewer) = Reviewer::from_env() else {
            return (
                "CONFIRMED",
                vec![
                    "check passed for this working-tree state".into(),
                    format!(
                        "no reviewer model is configured ({}), so the diff was not reviewed: \
                         this confirmation rests on the check alone",
                        mcp_review::MODEL_ENV_HINT
                    ),
                ],
                None,
                Some(digest),
            );
        };
        let diff = match mcp_git::review_diff(repo, REVIEW_DIFF_BYTES).await {
            Ok(d) => d,
            Err(e) => return declined(format!("cannot read the diff: {e:#}"), Some(digest)),
        };
        let intent = str_arg(args, "intent").unwrap_or("(not given)");
        let prompt = format!("What the change is meant to do: {intent}\n\nDiff:\n{diff}");
        let answer = match reviewer.ask(mcp_review::CONFIRM_SYSTEM, prompt).await {
            Ok(a) => a,
            Err(e) => {
                return (
                    "DECLINED",
                    vec![
                        format!("{e:#}"),
                        "fails closed: no review, no confirmation".into(),
                    ],
                    Some(reviewer.name()),
                    Some(digest),
                );
            }
        };
        let parsed = mcp_review::extract_json(&answer);
        let verdict = parsed
            .as_ref()
            .and_then(|v| v.get("verdict"))
            .and_then(Value::as_str)
            .map(str::to_ascii_uppercase);
        let mut reasons: Vec<String> = parsed
            .as_ref()
            .and_then(|v| v.get("reasons"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|r| r.as_str().map_or_else(|| r.to_string(), str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        match verdict.as_deref() {
            Some("CONFIRMED") => {
                reasons.insert(0, "check passed for this working-tree state".into());
                ("CONFIRMED", reasons, Some(reviewer.name()), Some(digest))
            }
            Some("DECLINED") => ("DECLINED", reasons, Some(reviewer.name()), Some(digest)),
            _ => (
                "DECLINED",
                vec![format!(
                    "the reviewer's answer has no verdict: {}",
                    answer.chars().take(500).collect::<String>()
                )],
                Some(reviewer.name()),
                Some(digest),
            ),
        }
    }

    async fn commit(&self, args: Map<String, Value>) -> ServeToolResult {
        let repo = match self.repo(&args).await {
            Ok(r) => r,
            Err(e) => return tool_error(&e),
        };
        let digest = match mcp_git::tree_digest(&repo).await {
            Ok(d) => d,
            Err(e) => return tool_error(&e),
        };
        let confirm = lock(&self.repos).get(&repo).and_then(|s| s.confirm.clone());
        let refusal = match &confirm {
            None => Some("no `confirm` has passed for this repository: run check, then confirm"),
            Some(c) if c.digest != digest => {
                Some("the working tree changed since `confirm`: run check and confirm again")
            }
            Some(c) if !c.confirmed => Some("the last `confirm` DECLINED this state"),
            Some(_) => None,
        };
        if let Some(reason) = refusal {
            // Already an error result; a recording failure is logged.
            let _ = self.record(
                "mcp.commit",
                false,
                reason,
                0,
                json!({"repo": repo.display().to_string()}),
            );
            return ServeToolResult::error(format!("commit refused: {reason}"));
        }
        let changes = match mcp_git::changes(&repo).await {
            Ok(c) => c,
            Err(e) => return tool_error(&e),
        };
        let (message, author) = match str_arg(&args, "message") {
            Some(m) => (m.to_owned(), "caller"),
            None => match self.model_message(&repo).await {
                Some(m) => (m, "model"),
                None => (mcp_git::fallback_message(&changes), "fallback"),
            },
        };
        let git_commit = format!("git commit -q -m {}", crate::install::shell_quote(&message));
        let refused = match self.admitter(&repo, "commit") {
            Ok(admitter) => {
                admitter
                    .commands(&["git add -A", git_commit.as_str()])
                    .await
            }
            Err(refused) => Some(refused),
        };
        if let Some(refused) = refused {
            return self.refused("commit", &repo, &refused);
        }
        let commit = match mcp_git::commit_all(&repo, &message).await {
            Ok(c) => c,
            Err(e) => {
                // Already an error result; a recording failure is logged.
                let _ = self.record(
                    "mcp.commit",
                    false,
                    &format!("{e:#}"),
                    0,
                    json!({"repo": repo.display().to_string()}),
                );
                return tool_error(&e);
            }
        };
        if let Some(state) = lock(&self.repos).get_mut(&repo) {
            state.confirm = None;
        }
        let data = json!({
            "commit": commit,
            "message": message,
            "message_from": author,
            "files": changes.iter().map(|c| json!({"path": c.path, "change": c.kind})).collect::<Vec<_>>(),
            "repo": repo.display().to_string(),
            "tree_digest": digest,
        });
        let on_record = self.record("mcp.commit", true, &message, 0, data.clone());
        Self::recorded(
            ServeToolResult::structured(format!("committed {commit}: {message}"), data, false),
            on_record,
        )
    }

    /// A commit message from the reviewer model (none without a model, or
    /// when it fails).
    async fn model_message(&self, repo: &Path) -> Option<String> {
        let reviewer = Reviewer::from_env()?;
        let diff = mcp_git::review_diff(repo, REVIEW_DIFF_BYTES).await.ok()?;
        match reviewer.ask(mcp_review::COMMIT_SYSTEM, diff).await {
            Ok(m) => {
                let m = m.trim().trim_matches('`').trim().to_owned();
                (!m.is_empty()).then_some(m)
            }
            Err(e) => {
                tracing::warn!("commit message from the model failed, using the fallback: {e:#}");
                None
            }
        }
    }

    async fn push(&self, args: Map<String, Value>) -> ServeToolResult {
        let repo = match self.repo(&args).await {
            Ok(r) => r,
            Err(e) => return tool_error(&e),
        };
        let mut git_args = vec!["push"];
        if let Some(remote) = str_arg(&args, "remote") {
            git_args.push(remote);
            if let Some(branch) = str_arg(&args, "branch") {
                git_args.push(branch);
            }
        }
        let command = format!("git {}", git_args.join(" "));
        let refused = match self.admitter(&repo, "push") {
            Ok(admitter) => admitter.commands(&[command.as_str()]).await,
            Err(refused) => Some(refused),
        };
        if let Some(refused) = refused {
            return self.refused("push", &repo, &refused);
        }
        let started = Instant::now();
        let out = match mcp_git::git(&repo, &git_args).await {
            Ok(o) => o,
            Err(e) => return tool_error(&e),
        };
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let output = format!("{}{}", out.stdout, out.stderr).trim().to_owned();
        tracing::info!(repo = %repo.display(), code = out.code, "git push: {output}");
        let data = json!({
            "command": format!("git {}", git_args.join(" ")),
            "exit_code": out.code,
            "output": output,
            "repo": repo.display().to_string(),
        });
        let on_record = self.record("mcp.push", out.ok(), &output, duration_ms, data.clone());
        let text = format!("git {} exited {}\n{output}", git_args.join(" "), out.code);
        Self::recorded(
            ServeToolResult::structured(text, data, !out.ok()),
            on_record,
        )
    }

    async fn validate_intent(&self, args: Map<String, Value>) -> ServeToolResult {
        let Some(reviewer) = Reviewer::from_env() else {
            return ServeToolResult::error(format!(
                "validate_intent needs a model and none is configured: set {}",
                mcp_review::MODEL_ENV_HINT
            ));
        };
        let transcript = match (str_arg(&args, "transcript"), str_arg(&args, "session_id")) {
            (Some(t), _) => t.to_owned(),
            (None, Some(id)) => match self.session_transcript(id) {
                Ok(t) => t,
                Err(e) => return tool_error(&e),
            },
            (None, None) => {
                return ServeToolResult::error(
                    "validate_intent needs `transcript` (text) or `session_id`",
                );
            }
        };
        let mut transcript = transcript;
        if transcript.len() > TRANSCRIPT_BYTES {
            let mut cut = transcript.len() - TRANSCRIPT_BYTES;
            while !transcript.is_char_boundary(cut) {
                cut += 1;
            }
            transcript = format!("[… start cut]\n{}", &transcript[cut..]);
        }
        let request = str_arg(&args, "request")
            .unwrap_or("(not given separately: take it from the first user message)");
        let prompt = format!("User's request: {request}\n\nTranscript:\n{transcript}");
        match reviewer.ask(mcp_review::INTENT_SYSTEM, prompt).await {
            Ok(answer) => match mcp_review::extract_json(&answer) {
                Some(mut data) => {
                    data["reviewed_by"] = json!(reviewer.name());
                    let aligned = data["aligned"].as_bool().unwrap_or(false);
                    let summary = data["summary"].as_str().unwrap_or_default().to_owned();
                    let mut text =
                        format!("{}: {summary}", if aligned { "ALIGNED" } else { "DRIFT" });
                    for d in data["drift"].as_array().into_iter().flatten() {
                        text.push_str(&format!(
                            "\n- [{}] {} ({})",
                            d["severity"].as_str().unwrap_or("?"),
                            d["what"].as_str().unwrap_or_default(),
                            d["evidence"].as_str().unwrap_or_default()
                        ));
                    }
                    ServeToolResult::structured(text, data, false)
                }
                None => ServeToolResult::text(answer),
            },
            Err(e) => tool_error(&e),
        }
    }

    /// A stored session as text for a reviewer.
    fn session_transcript(&self, id: &str) -> anyhow::Result<String> {
        let store = self
            .store()?
            .ok_or_else(|| anyhow::anyhow!("no session store in {}", self.home.display()))?;
        if store.session(id)?.is_none() {
            anyhow::bail!("No conversation found with session ID: {id}");
        }
        let mut out = String::new();
        for m in store.messages(id)? {
            match m {
                Message::User(u) => match &u.message.content {
                    UserContent::Text(t) => out.push_str(&format!("USER: {t}\n")),
                    UserContent::Blocks(blocks) => {
                        for b in blocks {
                            match b {
                                ContentBlock::Text { text } => {
                                    out.push_str(&format!("USER: {text}\n"));
                                }
                                ContentBlock::ToolResult {
                                    content, is_error, ..
                                } => {
                                    let text: String =
                                        content.to_text().chars().take(1500).collect();
                                    let mark = if is_error.unwrap_or(false) {
                                        " (error)"
                                    } else {
                                        ""
                                    };
                                    out.push_str(&format!("TOOL RESULT{mark}: {text}\n"));
                                }
                                _ => {}
                            }
                        }
                    }
                },
                Message::Assistant(a) => {
                    for b in &a.message.content {
                        match b {
                            ContentBlock::Text { text } => {
                                out.push_str(&format!("ASSISTANT: {text}\n"));
                            }
                            ContentBlock::ToolUse { name, input, .. } => {
                                out.push_str(&format!("TOOL CALL {name}: {input}\n"));
                            }
                            _ => {}
                        }
                    }
                }
                Message::Result(r) => out.push_str(&format!(
                    "RESULT: {}\n",
                    serde_json::to_string(&r).unwrap_or_default()
                )),
                Message::System(_) | Message::StreamEvent(_) => {}
            }
        }
        Ok(out)
    }

    /// The session store, or `None` when the home has no database yet
    /// (the tools do not create one just to say it is empty).
    fn store(&self) -> anyhow::Result<Option<SessionStore>> {
        if !tascer::store::StoreConfig::for_home(&self.home)?.exists() {
            return Ok(None);
        }
        Ok(Some(SessionStore::open_in_home(&self.home)?))
    }

    fn sessions_list(&self, args: &Map<String, Value>) -> ServeToolResult {
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(20, |l| usize::try_from(l).unwrap_or(usize::MAX));
        let sessions = match self.store() {
            Ok(Some(store)) => match store.list(limit) {
                Ok(s) => s,
                Err(e) => return tool_error(&e.into()),
            },
            Ok(None) => Vec::new(),
            Err(e) => return tool_error(&e),
        };
        let data = json!({"sessions": sessions, "home": self.home.display().to_string()});
        let text = if sessions.is_empty() {
            format!("no sessions in {}", self.home.display())
        } else {
            sessions
                .iter()
                .map(|s| {
                    let prompt: String = s
                        .first_prompt
                        .clone()
                        .unwrap_or_default()
                        .replace('\n', " ")
                        .chars()
                        .take(60)
                        .collect();
                    format!(
                        "{}  {}  {} turns  ${:.4}  {}  {prompt}",
                        s.id, s.updated_at, s.num_turns, s.total_cost_usd, s.status
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        ServeToolResult::structured(text, data, false)
    }

    fn session_report(&self, args: &Map<String, Value>) -> ServeToolResult {
        let Some(id) = str_arg(args, "session_id") else {
            return ServeToolResult::error("session_report needs `session_id`");
        };
        match tascer_ledger::audit::report_session(&self.home, id) {
            Ok(report) => {
                let text = report.lines().join("\n");
                let verify_json = match &report.verify {
                    Ok(v) => serde_json::to_value(v).unwrap_or(Value::Null),
                    Err(e) => json!({"ok": false, "error": tascer::error_chain(e)}),
                };
                let value = json!({
                    "report": serde_json::to_value(&report.data).unwrap_or(Value::Null),
                    "verify": verify_json,
                });
                ServeToolResult::structured(text, value, false)
            }
            Err(e) => tool_error(&e.into()),
        }
    }

    fn session_verify(&self, args: &Map<String, Value>) -> ServeToolResult {
        let session = str_arg(args, "session_id");
        let all = args.get("all").and_then(Value::as_bool).unwrap_or(false);
        if session.is_none() && !all {
            return ServeToolResult::error("session_verify needs `session_id` or `all: true`");
        }
        match tascer_ledger::audit::verify_sessions(&self.home, session.filter(|_| !all), None) {
            Ok(outcome) => {
                let data = json!({"ok": outcome.ok, "reports": outcome.reports});
                ServeToolResult::structured(outcome.lines.join("\n"), data, !outcome.ok)
            }
            Err(e) => tool_error(&e.into()),
        }
    }
}

/// The text summary of a check.
fn check_text(
    repo: &Path,
    plan: &CheckPlan,
    runs: &[CommandRun],
    passed: bool,
    digest: &str,
) -> String {
    let mut text = format!(
        "check {} in {} ({}; commands from {})\n",
        if passed { "PASSED" } else { "FAILED" },
        repo.display(),
        digest,
        plan.source
    );
    for r in runs {
        let status = match (r.exit_code, r.timed_out) {
            (_, true) => format!("timed out after {}s", plan.timeout.as_secs()),
            (Some(c), _) => format!("exit {c}"),
            (None, _) => "killed".into(),
        };
        text.push_str(&format!(
            "\n[{}] {} — {status}, {:.1}s\n",
            r.phase,
            r.command,
            r.duration_ms as f64 / 1000.0
        ));
        if !r.tail.is_empty() {
            for line in r.tail.lines() {
                text.push_str("    ");
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    text
}

fn path_prop() -> Value {
    json!({"type": "string", "description": "Repository path (default: the server's working directory)"})
}

/// Registers one tool whose handler calls `f` on the shared server.
fn tool<F, Fut>(
    server: &Arc<Server>,
    name: &str,
    description: &str,
    schema: Value,
    read_only: bool,
    f: F,
) -> ServedTool
where
    F: Fn(Arc<Server>, Map<String, Value>, ToolCallContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ServeToolResult> + Send + 'static,
{
    let server = server.clone();
    ServedTool::new(name, description, schema, move |args, ctx| {
        f(server.clone(), args, ctx)
    })
    .annotations(json!({"readOnlyHint": read_only}))
}

/// The server `tascer mcp serve` runs: its tools over `cwd` (default repo)
/// and `home` (store and ledger).
pub(crate) fn tascer_spec(cwd: PathBuf, home: PathBuf) -> McpServerSpec {
    let server = Arc::new(Server {
        home,
        cwd,
        repos: Mutex::default(),
        ledger_session: format!("mcp-serve-{}", uuid::Uuid::new_v4()),
        ledger: Mutex::new(None),
    });
    McpServerSpec::new("tascer", tascer::VERSION)
        .instructions(
            "Tascer's gate chain for a git repository: `check` runs the configured lint and test \
             commands; `confirm` is a binary gate (CONFIRMED/DECLINED) that needs a passing check \
             of the same working-tree state; `commit` needs a CONFIRMED confirm of that state; \
             `push` pushes. `validate_intent` reports drift from the user's request; \
             `sessions_list`, `session_report` and `session_verify` read Tascer's session store \
             and signed ledger.",
        )
        .tool(tool(
            &server,
            "check",
            "Run the repository's lint and test commands (from .tascer/settings.json `check`, or \
             detected from Cargo.toml / package.json / go.mod / pyproject.toml) and record the \
             result for the current working-tree state. Returns each command's exit code, \
             duration and output tail.",
            json!({"type": "object", "properties": {
                "path": path_prop(),
                "timeout_secs": {"type": "integer", "minimum": 1, "description": "Per-command timeout (default: settings' check.timeoutSecs, else 600)"},
            }}),
            false,
            |s, args, ctx| async move { s.check(args, ctx).await },
        ))
        .tool(tool(
            &server,
            "confirm",
            "Binary gate: CONFIRMED or DECLINED, with reasons. Requires a passing `check` of the \
             current working-tree state; with a model configured a reviewer model judges the \
             diff, otherwise the confirmation rests on the check alone (and says so).",
            json!({"type": "object", "properties": {
                "path": path_prop(),
                "intent": {"type": "string", "description": "What the change is meant to do (given to the reviewer)"},
            }}),
            false,
            |s, args, _ctx| async move { s.confirm(args).await },
        ))
        .tool(tool(
            &server,
            "commit",
            "Commit every change (git add -A; git commit) after `confirm` passed for this exact \
             working-tree state. The message is `message`, else written by the model, else a \
             summary of the changed files.",
            json!({"type": "object", "properties": {
                "path": path_prop(),
                "message": {"type": "string", "description": "Commit message (optional)"},
            }}),
            false,
            |s, args, _ctx| async move { s.commit(args).await },
        ))
        .tool(tool(
            &server,
            "push",
            "git push (optionally to `remote` and `branch`); returns and records git's output.",
            json!({"type": "object", "properties": {
                "path": path_prop(),
                "remote": {"type": "string"},
                "branch": {"type": "string", "description": "Refspec to push (needs `remote`)"},
            }}),
            false,
            |s, args, _ctx| async move { s.push(args).await },
        ))
        .tool(tool(
            &server,
            "validate_intent",
            "Report where an agent's session drifted from the user's request. Give `transcript` \
             (text) or `session_id` (a stored Tascer session), and optionally `request`. Needs a \
             model (ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL).",
            json!({"type": "object", "properties": {
                "transcript": {"type": "string"},
                "session_id": {"type": "string"},
                "request": {"type": "string", "description": "The user's request (default: the transcript's first user message)"},
            }}),
            true,
            |s, args, _ctx| async move { s.validate_intent(args).await },
        ))
        .tool(tool(
            &server,
            "sessions_list",
            "List recent Tascer sessions (id, updated, turns, cost, status, first prompt).",
            json!({"type": "object", "properties": {
                "limit": {"type": "integer", "minimum": 1, "description": "How many (default 20)"},
            }}),
            true,
            |s, args, _ctx| async move { s.sessions_list(&args) },
        ))
        .tool(tool(
            &server,
            "session_report",
            "A session's ledger report: tool calls with status, gates, permission, proof hash; \
             ledger head and verification.",
            json!({"type": "object", "properties": {"session_id": {"type": "string"}}, "required": ["session_id"]}),
            true,
            |s, args, _ctx| async move { s.session_report(&args) },
        ))
        .tool(tool(
            &server,
            "session_verify",
            "Verify a session's ledger (or all with `all: true`): hashes, chain, evidence, \
             head signature; names the first broken entry.",
            json!({"type": "object", "properties": {
                "session_id": {"type": "string"},
                "all": {"type": "boolean"},
            }}),
            true,
            |s, args, _ctx| async move { s.session_verify(&args) },
        ))
}
