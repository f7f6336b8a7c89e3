//! The working-directory tarball: which files go in (`.gitignore` and
//! friends respected, exclusions, size limits), and reading it back.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{ArchiveError, Result, io_err};
use crate::manifest::{FileEntry, Skipped};

/// What goes into the working-directory tarball.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WorkdirPolicy {
    /// Files larger than this are left out (listed as skipped).
    pub max_file_bytes: u64,
    /// The archive is refused when the files to archive add up to more.
    pub max_total_bytes: u64,
    /// Extra exclusions, gitignore glob syntax (`target/`, `*.log`).
    pub exclude: Vec<String>,
    /// Respect `.gitignore`, `.ignore` and git's excludes (default true).
    pub respect_gitignore: bool,
}

impl Default for WorkdirPolicy {
    fn default() -> Self {
        WorkdirPolicy {
            max_file_bytes: 100 * 1024 * 1024,
            max_total_bytes: 2 * 1024 * 1024 * 1024,
            exclude: Vec::new(),
            respect_gitignore: true,
        }
    }
}

/// Always left out: git's own database (the working tree is what the
/// session saw; the history is the repository's business).
const ALWAYS_EXCLUDED: [&str; 1] = [".git/"];

/// What [`write_tarball`] put in and left out.
#[derive(Debug, Default)]
pub struct TarballListing {
    /// Files in the tarball, sorted by path.
    pub files: Vec<FileEntry>,
    /// Files left out, and why.
    pub skipped: Vec<Skipped>,
}

/// A reader that hashes what passes through it.
struct HashingReader<R> {
    inner: R,
    hasher: Sha256,
    count: u64,
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.count += n as u64;
        Ok(n)
    }
}

/// Lowercase hex SHA-256 and size of everything `reader` yields.
pub fn hash_reader(reader: impl Read) -> io::Result<(String, u64)> {
    let mut r = HashingReader {
        inner: reader,
        hasher: Sha256::new(),
        count: 0,
    };
    io::copy(&mut r, &mut io::sink())?;
    Ok((hex::encode(r.hasher.finalize()), r.count))
}

/// Writes a tar.gz of `dir` to `out` and lists every file in it with its
/// size and SHA-256 (hashed as it is written, one read per file).
/// Regular files only; symlinks and special files are listed as skipped.
pub fn write_tarball(dir: &Path, out: &Path, policy: &WorkdirPolicy) -> Result<TarballListing> {
    let mut overrides = OverrideBuilder::new(dir);
    for pattern in ALWAYS_EXCLUDED
        .iter()
        .copied()
        .chain(policy.exclude.iter().map(String::as_str))
    {
        overrides
            .add(&format!("!{pattern}"))
            .map_err(ArchiveError::Walk)?;
    }
    let overrides = overrides.build()?;
    let walker = WalkBuilder::new(dir)
        .hidden(false)
        .parents(false)
        .git_ignore(policy.respect_gitignore)
        .git_global(false)
        .git_exclude(policy.respect_gitignore)
        .ignore(policy.respect_gitignore)
        .require_git(false)
        .follow_links(false)
        .overrides(overrides)
        .sort_by_file_path(|a, b| a.cmp(b))
        .build();
    let file = File::create(out).map_err(io_err("cannot write", out))?;
    let mut tar = tar::Builder::new(GzEncoder::new(file, Compression::default()));
    tar.mode(tar::HeaderMode::Deterministic);
    let mut listing = TarballListing::default();
    let mut total = 0u64;
    for entry in walker {
        let entry = entry?;
        let path = entry.path();
        let Ok(rel) = path.strip_prefix(dir) else {
            continue;
        };
        if rel.as_os_str().is_empty() {
            continue;
        }
        let name = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        let Some(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            continue;
        }
        if !kind.is_file() {
            let what = if kind.is_symlink() {
                "symlink"
            } else {
                "not a regular file"
            };
            listing.skipped.push(Skipped {
                path: name,
                reason: what.into(),
            });
            continue;
        }
        let meta = entry.metadata().map_err(ArchiveError::Walk)?;
        if meta.len() > policy.max_file_bytes {
            listing.skipped.push(Skipped {
                path: name,
                reason: format!(
                    "{} bytes, larger than the {} byte limit per file",
                    meta.len(),
                    policy.max_file_bytes
                ),
            });
            continue;
        }
        total += meta.len();
        if total > policy.max_total_bytes {
            return Err(ArchiveError::TooLarge {
                dir: dir.to_path_buf(),
                limit: policy.max_total_bytes,
            });
        }
        let source = File::open(path).map_err(io_err("cannot read", path))?;
        let mut header = tar::Header::new_gnu();
        header.set_metadata_in_mode(&meta, tar::HeaderMode::Deterministic);
        header.set_size(meta.len());
        let mut reader = HashingReader {
            inner: source.take(meta.len()),
            hasher: Sha256::new(),
            count: 0,
        };
        tar.append_data(&mut header, &name, &mut reader)
            .map_err(io_err("cannot add to the tarball", path))?;
        listing.files.push(FileEntry {
            path: name,
            size: reader.count,
            sha256: hex::encode(reader.hasher.finalize()),
        });
    }
    let gz = tar.into_inner().map_err(io_err("cannot write", out))?;
    let mut file = gz.finish().map_err(io_err("cannot write", out))?;
    file.flush().map_err(io_err("cannot write", out))?;
    Ok(listing)
}

/// Reads a tarball, hashing every member; with `restore_to`, also writes
/// each regular file under that directory (never outside it).
pub fn read_tarball(tarball: &Path, restore_to: Option<&Path>) -> Result<Vec<FileEntry>> {
    let file = File::open(tarball).map_err(io_err("cannot read", tarball))?;
    let mut archive = tar::Archive::new(GzDecoder::new(file));
    let mut out = Vec::new();
    let entries = archive
        .entries()
        .map_err(io_err("cannot read the tarball", tarball))?;
    for entry in entries {
        let mut entry = entry.map_err(io_err("cannot read the tarball", tarball))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = entry
            .path()
            .map_err(io_err("cannot read the tarball", tarball))?
            .to_string_lossy()
            .into_owned();
        if let Some(dest) = restore_to {
            std::fs::create_dir_all(dest).map_err(io_err("cannot create", dest))?;
            // `unpack_in` refuses paths that leave `dest`.
            let written = entry
                .unpack_in(dest)
                .map_err(io_err("cannot restore into", dest))?;
            if !written {
                continue;
            }
            let path = dest.join(&name);
            let f = File::open(&path).map_err(io_err("cannot read", &path))?;
            let (sha256, size) = hash_reader(f).map_err(io_err("cannot read", &path))?;
            out.push(FileEntry {
                path: name,
                size,
                sha256,
            });
        } else {
            let (sha256, size) =
                hash_reader(&mut entry).map_err(io_err("cannot read the tarball", tarball))?;
            out.push(FileEntry {
                path: name,
                size,
                sha256,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitignore_exclusions_and_limits() {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path().join("w");
        std::fs::create_dir_all(w.join("src")).unwrap();
        std::fs::create_dir_all(w.join("target")).unwrap();
        std::fs::create_dir_all(w.join(".git")).unwrap();
        std::fs::write(w.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(w.join("src/a.rs"), "fn a() {}").unwrap();
        std::fs::write(w.join("target/big"), "x").unwrap();
        std::fs::write(w.join(".git/HEAD"), "ref").unwrap();
        std::fs::write(w.join("notes.log"), "log").unwrap();
        std::fs::write(w.join("huge.bin"), vec![0u8; 100]).unwrap();
        let policy = WorkdirPolicy {
            max_file_bytes: 50,
            exclude: vec!["*.log".into()],
            ..WorkdirPolicy::default()
        };
        let out = dir.path().join("w.tar.gz");
        let listing = write_tarball(&w, &out, &policy).unwrap();
        let names: Vec<_> = listing.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(names, [".gitignore", "src/a.rs"]);
        assert_eq!(listing.skipped.len(), 1);
        assert_eq!(listing.skipped[0].path, "huge.bin");
        assert_eq!(read_tarball(&out, None).unwrap(), listing.files);

        let too_small = WorkdirPolicy {
            max_total_bytes: 5,
            ..WorkdirPolicy::default()
        };
        assert!(matches!(
            write_tarball(&w, &out, &too_small),
            Err(ArchiveError::TooLarge { .. })
        ));
    }
}
