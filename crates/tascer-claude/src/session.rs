//! One hook event's view of its Claude Code session (shared by every
//! part of the answer): where it runs, its ledger session, the settings and
//! the local database it reads once, the files it keeps between two hook
//! processes, and the small helpers every event uses.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};
use tascer_core::HookEvent;
use tascer_guard::hooks::HookCommon;
use tascer_guard::settings::LoadedSettings;
use tascer_ledger::{EntryKind, Evidence, GitHeads, Ledger, SessionStart};
use tascer_store::{Db, PendingCalls};

use crate::settings_cache::{self, SettingsCache};

/// One event's view of its Claude Code session: where it runs, its ledger
/// session, and what it read once (the settings, the local database).
pub(crate) struct HookSession {
    pub(crate) session_id: String,
    pub(crate) cwd: PathBuf,
    pub(crate) home: PathBuf,
    pub(crate) ledger: Arc<Ledger>,
    /// The repositories the hook server keeps open between events; `None`
    /// in a hook process of its own.
    pub(crate) heads: Option<Arc<GitHeads>>,
    pub(crate) hook_common: HookCommon,
    settings: OnceLock<Result<Arc<LoadedSettings>, String>>,
    /// The hook server's settings, kept between events.
    settings_cache: Option<Arc<SettingsCache>>,
    local_db: OnceLock<Result<Arc<Db>, String>>,
    /// The agents' verdicts this event produced, for the webhooks
    /// (`tascer.agents`).
    agents: parking_lot::Mutex<Vec<Value>>,
}

/// What the hook server keeps open between events (nothing in a hook
/// process of its own).
#[derive(Default)]
pub(crate) struct Warm {
    /// The home's ledger; `None` opens it for the event.
    pub(crate) ledger: Option<Arc<Ledger>>,
    /// The repositories read for each call's `HEAD`; `None` opens the
    /// repository for the event.
    pub(crate) heads: Option<Arc<GitHeads>>,
    /// The settings read for earlier events; `None` reads them for the
    /// event.
    pub(crate) settings: Option<Arc<SettingsCache>>,
}

impl HookSession {
    /// Opens the ledger (starting the session's ledger session on its
    /// first event), or takes what the hook server keeps open.
    pub(crate) fn open(
        input: &Value,
        session_id: &str,
        home: &Path,
        warm: Warm,
    ) -> Result<Self, String> {
        let cwd = input
            .get("cwd")
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok())
            .ok_or("no cwd in the hook input and no current directory")?;
        let ledger = match warm.ledger {
            Some(ledger) => ledger,
            None => Arc::new(open_ledger(home)?),
        };
        let session = HookSession {
            session_id: session_id.to_string(),
            hook_common: HookCommon {
                session_id: session_id.to_string(),
                transcript_path: text(input, "transcript_path"),
                cwd: cwd.display().to_string(),
                permission_mode: None,
            },
            cwd,
            home: home.to_path_buf(),
            ledger,
            heads: warm.heads,
            settings: OnceLock::new(),
            settings_cache: warm.settings,
            local_db: OnceLock::new(),
            agents: parking_lot::Mutex::new(Vec::new()),
        };
        session.start_if_new(input)?;
        Ok(session)
    }

    /// Ends this process's use of the database: the connection closes
    /// without a checkpoint (the ledger was opened short-lived, see
    /// [`open_ledger`]), and the store keeps its WAL bounded
    /// ([`Backend::bound_wal`](tascer_store::Backend::bound_wal)).
    pub(crate) fn close(self) {
        self.ledger.store().backend().bound_wal();
    }

    /// Ends an event of the hook server, which keeps the ledger open: the
    /// WAL is checkpointed in place once it has grown
    /// ([`Backend::checkpoint_wal_in_place`](tascer_store::Backend::checkpoint_wal_in_place));
    /// the server bounds it when it stops.
    pub(crate) fn close_kept_open(self) {
        self.ledger.store().backend().checkpoint_wal_in_place();
    }

    /// True when [`close_kept_open`](Self::close_kept_open) has work to do.
    pub(crate) fn wal_checkpoint_due(&self) -> bool {
        self.ledger.store().backend().wal_checkpoint_due()
    }

    /// Keeps the reviewers' verdicts of this event for its webhook
    /// payload; `told` is what Claude Code was told when they refused
    /// the call or blocked the stop.
    pub(crate) fn note_agents(
        &self,
        records: &[tascer_guard::reviewers::ReviewRecord],
        told: Option<&str>,
    ) {
        self.agents
            .lock()
            .extend(tascer::reviewer::agent_verdicts(records, told));
    }

    /// The agents' verdicts kept by [`Self::note_agents`].
    pub(crate) fn agents(&self) -> Vec<Value> {
        self.agents.lock().clone()
    }

    /// The session's first event opens its ledger session.
    fn start_if_new(&self, input: &Value) -> Result<(), String> {
        let head = self
            .ledger
            .head(&self.session_id)
            .map_err(|e| format!("cannot read the ledger: {e}"))?;
        if head.is_some() {
            return Ok(());
        }
        // What the digests cover: crate::start.
        let options = crate::start::options_value(self.settings(), &text(input, "permission_mode"));
        let claude_config = std::env::var_os("CLAUDE_CONFIG_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::home_dir().map(|h| h.join(".claude")));
        let root = tascer::host::project_root(&self.cwd);
        let memory = crate::start::memory_files(&root, claude_config.as_deref());
        let start = SessionStart {
            model: input
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("claude-code")
                .to_string(),
            options_digest: crate::start::options_digest(&options),
            system_prompt_digest: crate::start::memory_digest(&memory),
            signing_key_id: None,
            context: json!({
                "cwd": self.cwd.display().to_string(),
                "project_root": root.display().to_string(),
                "host": "claude-code",
                "transcript_path": text(input, "transcript_path"),
                "tascer_version": tascer::VERSION,
                "options_digest_covers": "the settings layers Tascer read and Claude Code's permission_mode",
                "system_prompt_digest_covers": {
                    "what": "the memory files Claude Code adds to its system prompt (its own prompt is not visible to a hook)",
                    "files": memory.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
                },
            }),
        };
        self.ledger
            .start_session(&self.session_id, &start)
            .map_err(|e| format!("cannot write the ledger: {e}"))?;
        self.observe_opened(input);
        Ok(())
    }

    /// Appends `entries` with the evidence they refer to, in one
    /// transaction.
    /// Returns the hash of the last entry written.
    pub(crate) fn write(
        &self,
        entries: Vec<(EntryKind, Value)>,
        evidence: &[Evidence],
    ) -> Result<Option<String>, String> {
        self.ledger
            .append_batch(&self.session_id, entries, evidence)
            .map(|written| written.last().map(|e| e.hash.clone()))
            .map_err(|e| format!("cannot write the ledger: {e}"))
    }

    /// Tascer's settings for `cwd` (read once per event, or kept by the
    /// hook server while their files stay the same).
    pub(crate) fn settings(&self) -> Result<&LoadedSettings, String> {
        self.settings
            .get_or_init(|| match &self.settings_cache {
                Some(cache) => cache.load(&self.cwd, &self.home),
                None => settings_cache::read(&self.cwd, &self.home).map(Arc::new),
            })
            .as_ref()
            .map(|settings| &**settings)
            .map_err(Clone::clone)
    }

    /// The home's local SQLite database, for the reviewers' cache and the
    /// webhook outbox: the ledger's own when it is SQLite, else
    /// `tascer.db` in the home (as the loop's sessions find theirs).
    pub(crate) fn local_db(&self) -> Result<Arc<Db>, String> {
        self.local_db
            .get_or_init(|| {
                self.ledger
                    .store()
                    .backend()
                    .local_db(&self.home)
                    .map_err(|e| format!("cannot open the local store: {e}"))
            })
            .clone()
    }

    /// Where an admitted call's record waits for its `PostToolUse`: the
    /// home's local database.
    pub(crate) fn pending_calls(&self) -> Result<PendingCalls, String> {
        PendingCalls::with_db(self.local_db()?)
            .map_err(|e| format!("cannot open the pending calls: {e}"))
    }

    /// The session's file under `<home>/claude-code/<what>/` (the session
    /// id made safe as a file name: `[A-Za-z0-9_-]` kept, anything else
    /// `_`).
    pub(crate) fn session_file(&self, what: &str) -> PathBuf {
        let session = tascer_mcp::sanitize_name(&self.session_id);
        self.home
            .join("claude-code")
            .join(what)
            .join(format!("{session}.json"))
    }
}

/// Opens the home's ledger the way a hook event uses it: signed with the
/// home's key, opened short-lived (a hook process writes a few entries and
/// exits; its connection leaves the WAL for the next one instead of
/// checkpointing it on close, see
/// [`StoreConfig::open_short_lived`](tascer_store::StoreConfig::open_short_lived)).
pub fn open_ledger(home: &Path) -> Result<Ledger, String> {
    let key = tascer_ledger::load_home_signing_key(home)
        .map_err(|e| format!("cannot load the signing key from {}: {e}", home.display()))?;
    Ledger::open_in_home_short_lived(home, key)
        .map_err(|e| format!("cannot open the ledger in {}: {e}", home.display()))
}

/// A checkpoint entry for an event that decides nothing here.
pub(crate) fn event_note(input: &Value, event: HookEvent) -> Value {
    let mut note = json!({"event": event.as_str(), "source": "claude-code"});
    for key in [
        "reason",
        "trigger",
        "message",
        "notification_type",
        "stop_hook_active",
    ] {
        if let (Some(v), Some(obj)) = (input.get(key), note.as_object_mut()) {
            obj.insert(key.into(), v.clone());
        }
    }
    if event == HookEvent::SessionStart
        && let (Some(v), Some(obj)) = (input.get("source"), note.as_object_mut())
    {
        obj.insert("start_source".into(), v.clone());
    }
    note
}

/// The string field `key` of the event, or empty.
pub(crate) fn text(input: &Value, key: &str) -> String {
    input
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// What a record that cannot be encoded says.
pub(crate) fn encode(e: impl std::fmt::Display) -> String {
    format!("cannot encode the record: {e}")
}

/// Now, as the ledger writes times (RFC 3339, milliseconds, UTC).
pub(crate) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
