//! Hard links to protected files: a second name for the same inode reads
//! the same bytes, so a workspace file that is a hard link to
//! `~/.ssh/id_ed25519` (or to a `.env`) is that file.
//!
//! Only a regular file with more than one link is looked into (one `stat`
//! per checked path otherwise). Its `(device, inode)` is compared with
//! those of the protected files: the files matching the sensitive
//! patterns under the home directory's credential directories and under
//! the given roots (bounded walks).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::sensitive::SensitivePatterns;

/// Credential places under the home directory.
const HOME_PLACES: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".netrc",
    ".git-credentials",
    ".docker",
    ".kube",
    ".config/gh",
    ".config/gcloud",
    ".azure",
];
/// Most entries one walk looks at.
const MAX_ENTRIES: usize = 20_000;
/// Deepest directory level one walk enters.
const MAX_DEPTH: usize = 8;
/// Directories never entered (large, and holding no secrets of ours).
const SKIP_DIRS: &[&str] = &[".git", "node_modules", "target", ".venv", "__pycache__"];

/// The protected file `path` is a hard link to, if any (`path` itself
/// excluded).
pub(crate) fn protected_twin(
    path: &Path,
    home: Option<&Path>,
    roots: &[PathBuf],
    sensitive: &SensitivePatterns,
) -> Option<PathBuf> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.nlink() < 2 {
        return None;
    }
    let id = (meta.dev(), meta.ino());
    let mut budget = MAX_ENTRIES;
    let mut found = None;
    let mut visit = |p: &Path, m: &std::fs::Metadata| {
        if found.is_none() && (m.dev(), m.ino()) == id && p != path {
            found = Some(p.to_path_buf());
        }
    };
    if let Some(h) = home {
        for place in HOME_PLACES {
            walk(&h.join(place), 0, &mut budget, &mut |p, m| visit(p, m));
        }
    }
    for root in roots {
        walk(root, 0, &mut budget, &mut |p, m| {
            if sensitive.matching(p).is_some() {
                visit(p, m)
            }
        });
    }
    found
}

fn walk(
    path: &Path,
    depth: usize,
    budget: &mut usize,
    visit: &mut dyn FnMut(&Path, &std::fs::Metadata),
) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if meta.is_file() {
        visit(path, &meta);
    } else if meta.is_dir() && depth < MAX_DEPTH {
        let skip = path
            .file_name()
            .is_some_and(|n| SKIP_DIRS.iter().any(|s| n == *s));
        if skip && depth > 0 {
            return;
        }
        let Ok(entries) = std::fs::read_dir(path) else {
            return;
        };
        for e in entries.flatten() {
            walk(&e.path(), depth + 1, budget, visit);
        }
    }
}
