//! The hook server's settings: read once per working directory, and read
//! again when one of the files they come from changed.
//!
//! A hook process reads Tascer's and Claude Code's settings files for
//! every event; the server answers many events of the same directories.
//! Before it hands out settings it kept, it looks at every file
//! [`load_settings`](tascer::host::load_settings) would read
//! ([`settings_files`](tascer::host::settings_files)): a file created,
//! deleted, replaced or written since is a different stamp (device, inode,
//! size, modification and change times), and the settings are read again.
//! So an edit counts from the next event, as it does without the server.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use parking_lot::Mutex;
use tascer_guard::settings::LoadedSettings;

/// Directories whose settings are kept at most; past that the cache starts
/// over.
const MOST_DIRECTORIES: usize = 32;

/// How recent a file's modification may be for its settings to be kept: a
/// file written again within the file system's timestamp granularity could
/// keep its stamp, so settings read from a file this young are not kept
/// (as git treats an index entry as racy).
const SETTLED_AFTER: Duration = Duration::from_secs(2);

/// What identifies one version of a file; `None` when it does not exist.
type Stamp = Option<(u64, u64, u64, i64, i64, i64, i64)>;

/// A file's stamp and whether it was modified within [`SETTLED_AFTER`] of
/// `now`.
fn stamp(path: &Path, now: SystemTime) -> (Stamp, bool) {
    let Ok(meta) = std::fs::metadata(path) else {
        return (None, false);
    };
    let young = meta
        .modified()
        .ok()
        .and_then(|m| now.duration_since(m).ok())
        .is_none_or(|age| age < SETTLED_AFTER);
    let stamp = (
        meta.dev(),
        meta.ino(),
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
    );
    (Some(stamp), young)
}

/// Settings kept for one directory, with the stamps of their files.
struct Kept {
    files: Vec<(PathBuf, Stamp)>,
    settings: Arc<LoadedSettings>,
}

/// Settings read for the directories a hook server answers in.
#[derive(Default)]
pub(crate) struct SettingsCache {
    kept: Mutex<HashMap<PathBuf, Kept>>,
}

impl SettingsCache {
    /// The settings for a host's calls in `cwd` (user settings from
    /// `home`): those kept when none of their files changed, else read
    /// again.
    pub(crate) fn load(&self, cwd: &Path, home: &Path) -> Result<Arc<LoadedSettings>, String> {
        let now = SystemTime::now();
        let mut settled = true;
        let files: Vec<(PathBuf, Stamp)> = tascer::host::settings_files(cwd, home)
            .into_iter()
            .map(|path| {
                let (stamp, young) = stamp(&path, now);
                settled &= !young;
                (path, stamp)
            })
            .collect();
        if let Some(kept) = self.kept.lock().get(cwd)
            && kept.files == files
        {
            return Ok(Arc::clone(&kept.settings));
        }
        let settings = Arc::new(read(cwd, home)?);
        let mut kept = self.kept.lock();
        if !settled {
            kept.remove(cwd);
            return Ok(settings);
        }
        if kept.len() >= MOST_DIRECTORIES && !kept.contains_key(cwd) {
            kept.clear();
        }
        kept.insert(
            cwd.to_path_buf(),
            Kept {
                files,
                settings: Arc::clone(&settings),
            },
        );
        Ok(settings)
    }
}

/// Reads the settings for `cwd`, logging their warnings.
pub(crate) fn read(cwd: &Path, home: &Path) -> Result<LoadedSettings, String> {
    let settings = tascer::host::load_settings(cwd, home)
        .map_err(|e| format!("cannot read Tascer's settings: {e}"))?;
    for warning in &settings.warnings {
        tracing::warn!("{warning}");
    }
    Ok(settings)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A project with `.tascer/settings.json` denying `rule`, written
    /// `age` ago.
    fn write_settings(project: &Path, rule: &str, age: Duration) {
        let dir = project.join(".tascer");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("settings.json");
        std::fs::write(
            &path,
            format!(r#"{{"permissions": {{"deny": ["{rule}"]}}}}"#),
        )
        .unwrap();
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(SystemTime::now() - age).unwrap();
    }

    fn denies(settings: &LoadedSettings) -> Vec<String> {
        settings
            .rules
            .deny
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn settings_are_kept_until_one_of_their_files_changes() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir(project.path().join(".git")).unwrap();
        let old = Duration::from_secs(60);
        write_settings(project.path(), "Bash(rm:*)", old);
        let cache = SettingsCache::default();
        let first = cache.load(project.path(), home.path()).unwrap();
        assert_eq!(denies(&first), ["Bash(rm:*)"]);
        let again = cache.load(project.path(), home.path()).unwrap();
        assert!(Arc::ptr_eq(&first, &again), "kept");
        // Same size, an older time than before: still a new stamp.
        write_settings(project.path(), "Bash(cp:*)", old * 2);
        let edited = cache.load(project.path(), home.path()).unwrap();
        assert_eq!(denies(&edited), ["Bash(cp:*)"], "read again");
        // A file that appears (the local one) counts too.
        let local = project.path().join(".tascer/settings.local.json");
        std::fs::write(&local, r#"{"permissions": {"deny": ["Bash(mv:*)"]}}"#).unwrap();
        let file = std::fs::File::options().write(true).open(&local).unwrap();
        file.set_modified(SystemTime::now() - old).unwrap();
        let added = cache.load(project.path(), home.path()).unwrap();
        assert!(denies(&added).contains(&"Bash(mv:*)".to_string()));
    }

    #[test]
    fn settings_from_a_file_written_just_now_are_not_kept() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir(project.path().join(".git")).unwrap();
        write_settings(project.path(), "Bash(rm:*)", Duration::ZERO);
        let cache = SettingsCache::default();
        let first = cache.load(project.path(), home.path()).unwrap();
        let again = cache.load(project.path(), home.path()).unwrap();
        assert!(!Arc::ptr_eq(&first, &again), "read again while young");
        assert_eq!(denies(&again), ["Bash(rm:*)"]);
    }
}
