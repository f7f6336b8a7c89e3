//! Change notification for context capture.
//!
//! A cached git status depends on a set of paths (the directories that
//! hold tracked files, the changed paths, the git directory). Checking them
//! with one `stat` each costs about 1 µs per directory at every capture. On
//! Linux a [`WorktreeWatch`] puts an inotify watch on each instead, so a
//! capture asks the kernel once whether anything happened. Watching a
//! directory also reports writes to the files directly inside it, so an
//! in-place rewrite of a clean tracked file is seen too, which `stat`
//! signatures miss.
//!
//! Elsewhere, or when a watch cannot be added (the user's inotify watch
//! limit is reached), [`WorktreeWatch::new`] returns `None` and the caller
//! keeps checking signatures.

use std::path::Path;

/// Inotify watches on a fixed set of paths, none recursive.
pub(crate) struct WorktreeWatch {
    #[cfg(target_os = "linux")]
    inotify: inotify::Inotify,
    /// Set once a change (or anything that might hide one) was seen.
    changed: bool,
}

impl WorktreeWatch {
    /// Watches `paths`. Paths that do not exist are skipped: a path that
    /// appears later shows up as an event in its watched parent directory.
    /// `None` when watching is not possible here.
    #[cfg(target_os = "linux")]
    pub(crate) fn new<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Option<Self> {
        use inotify::{Inotify, WatchMask};

        let mask = WatchMask::MODIFY
            | WatchMask::ATTRIB
            | WatchMask::CLOSE_WRITE
            | WatchMask::CREATE
            | WatchMask::DELETE
            | WatchMask::DELETE_SELF
            | WatchMask::MOVE_SELF
            | WatchMask::MOVED_FROM
            | WatchMask::MOVED_TO
            | WatchMask::DONT_FOLLOW;
        let inotify = Inotify::init().ok()?;
        let mut watches = inotify.watches();
        for path in paths {
            match watches.add(path, mask) {
                Ok(_) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(_) => return None,
            }
        }
        Some(WorktreeWatch {
            inotify,
            changed: false,
        })
    }

    /// Watching needs inotify: not available on this platform.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn new<'a>(_paths: impl IntoIterator<Item = &'a Path>) -> Option<Self> {
        None
    }

    /// True while no event has arrived since the watches were added. Any
    /// event, a queue overflow or a read error counts as a change, and a
    /// change is remembered.
    pub(crate) fn unchanged(&mut self) -> bool {
        if !self.changed {
            self.changed = self.poll_changed();
        }
        !self.changed
    }

    #[cfg(target_os = "linux")]
    fn poll_changed(&mut self) -> bool {
        let mut buffer = [0u8; 1024];
        match self.inotify.read_events(&mut buffer) {
            Ok(mut events) => events.next().is_some(),
            Err(err) => err.kind() != std::io::ErrorKind::WouldBlock,
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn poll_changed(&mut self) -> bool {
        true
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn sees_writes_inside_a_watched_directory_and_remembers_them() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "one").unwrap();
        let missing = dir.path().join("not-there");
        let mut watch = WorktreeWatch::new([dir.path(), missing.as_path()]).unwrap();
        assert!(watch.unchanged());
        std::fs::read(&file).unwrap();
        assert!(watch.unchanged(), "reading is not a change");
        // Same size, same directory entries: only the write itself shows.
        std::fs::write(&file, "two").unwrap();
        assert!(!watch.unchanged());
        assert!(!watch.unchanged(), "a change is remembered");
    }
}
