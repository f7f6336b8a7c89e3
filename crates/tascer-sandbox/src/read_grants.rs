//! Which paths get read rights when some must stay unreadable.
//!
//! Landlock only allows: a rule on a directory covers everything beneath
//! it, and nothing can take a right back inside. To read "everything but
//! `~/.ssh`", the rights go on every child of `/` except the one leading
//! to `~/.ssh` (`/root`), then on every child of `/root` except `.ssh`,
//! and so on down each denied path. Entries created later directly in
//! such an ancestor (say a new file in `~`) are not readable; everything
//! else is.

use std::path::{Path, PathBuf};

/// The paths to grant read rights on so that everything under `root` is
/// readable except the `denied` paths (absolute; those that do not exist
/// are ignored). A symbolic link is granted only when its target leads to
/// no denied path.
pub fn read_grants(root: &Path, denied: &[PathBuf]) -> Vec<PathBuf> {
    let denied: Vec<PathBuf> = denied
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    let mut out = Vec::new();
    grant(root, &denied, &mut out);
    out
}

/// Grants `path` whole when no denied path is at or under it, else
/// descends into its children.
fn grant(path: &Path, denied: &[PathBuf], out: &mut Vec<PathBuf>) {
    if denied.iter().any(|d| d == path) {
        return;
    }
    if !denied.iter().any(|d| d.starts_with(path)) {
        out.push(path.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        let child = entry.path();
        let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
        if is_link {
            // A link's rule lands on its target: grant it only when the
            // target hides nothing denied.
            let Ok(target) = std::fs::canonicalize(&child) else {
                continue;
            };
            if !denied.iter().any(|d| d.starts_with(&target)) {
                out.push(child);
            }
            continue;
        }
        grant(&child, denied, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_siblings_but_not_the_denied_path_or_its_ancestors() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for d in ["home/.ssh", "home/src", "etc"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("home/.bashrc"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("home"), root.join("link-home")).unwrap();
        std::os::unix::fs::symlink(root.join("etc"), root.join("link-etc")).unwrap();
        let mut got = read_grants(&root, &[root.join("home/.ssh"), root.join("missing")]);
        got.sort();
        let mut want = vec![
            root.join("etc"),
            root.join("home/.bashrc"),
            root.join("home/src"),
            root.join("link-etc"),
        ];
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn nothing_denied_grants_the_root_whole() {
        assert_eq!(read_grants(Path::new("/"), &[]), vec![PathBuf::from("/")]);
    }
}
