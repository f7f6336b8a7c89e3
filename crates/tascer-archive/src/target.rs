//! Where archives live: an S3 bucket (and prefix) or a local directory,
//! behind one [`ObjectStore`].
//!
//! S3 credentials come from the standard AWS chain as `object_store`
//! implements it (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/
//! `AWS_SESSION_TOKEN`, web identity, ECS container credentials, instance
//! metadata), plus the shared credentials file (`AWS_PROFILE`, default
//! `default`, in `AWS_SHARED_CREDENTIALS_FILE` or `~/.aws/credentials`) when
//! the environment names no key. `AWS_ENDPOINT_URL` (or
//! `AWS_ENDPOINT_URL_S3`) points at an S3-compatible server; requests are
//! path-style, and plain HTTP is allowed only when that endpoint is on the
//! loopback interface (or `AWS_ALLOW_HTTP=true`). S3 is the cargo feature
//! `s3` (on by default); a build without it refuses `s3://` with an error
//! that says so.

#[cfg(feature = "s3")]
mod s3;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;

use crate::error::{ArchiveError, Result, io_err};

/// A parsed archive location: a store and a prefix inside it.
#[derive(Debug, Clone)]
pub struct Location {
    store: Arc<dyn ObjectStore>,
    prefix: ObjectPath,
    base_url: String,
}

impl Location {
    /// Parses `s3://bucket[/prefix]`, `file:///dir`, or a directory path
    /// (created if missing); S3 settings come from the process environment.
    pub fn parse(url: &str) -> Result<Location> {
        Location::parse_with_env(url, std::env::vars())
    }

    /// [`parse`](Self::parse) with the `AWS_*` variables taken from `env`
    /// instead of the process environment.
    pub fn parse_with_env(
        url: &str,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Location> {
        if let Some(rest) = url.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(ArchiveError::BadUrl {
                    url: url.to_string(),
                    detail: "no bucket name".into(),
                });
            }
            let env: BTreeMap<String, String> = env
                .into_iter()
                .filter(|(k, _)| k.starts_with("AWS_"))
                .collect();
            let store = s3_store(bucket, &env).map_err(|detail| ArchiveError::BadUrl {
                url: url.to_string(),
                detail,
            })?;
            return Ok(Location::new(store, prefix, format!("s3://{bucket}")));
        }
        if url.contains("://") && !url.starts_with("file://") {
            return Err(ArchiveError::BadUrl {
                url: url.to_string(),
                detail: "only s3:// and local directories are supported".into(),
            });
        }
        let dir = PathBuf::from(url.strip_prefix("file://").unwrap_or(url));
        Location::local(&dir)
    }

    /// A local directory (created if missing).
    pub fn local(dir: &Path) -> Result<Location> {
        std::fs::create_dir_all(dir).map_err(io_err("cannot create", dir))?;
        let root = dir.canonicalize().map_err(io_err("cannot resolve", dir))?;
        let store = LocalFileSystem::new_with_prefix(&root)?;
        Ok(Location::new(
            Arc::new(store),
            "",
            format!("file://{}", root.display()),
        ))
    }

    /// A location on a store given directly (tests wrap stores this way).
    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str, base_url: String) -> Location {
        let prefix = ObjectPath::from(prefix.trim_matches('/'));
        Location {
            store,
            prefix,
            base_url: base_url.trim_end_matches('/').to_string(),
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The prefix inside the store.
    pub fn prefix(&self) -> &ObjectPath {
        &self.prefix
    }

    /// `prefix/child` (child `/`-separated).
    pub fn child(&self, child: &str) -> ObjectPath {
        let mut parts: Vec<String> = self
            .prefix
            .parts()
            .map(|p| p.as_ref().to_string())
            .collect();
        parts.extend(
            child
                .split('/')
                .filter(|p| !p.is_empty())
                .map(str::to_string),
        );
        ObjectPath::from_iter(parts)
    }

    /// The URL of a path in this store.
    pub fn url_of(&self, path: &ObjectPath) -> String {
        if path.as_ref().is_empty() {
            self.base_url.clone()
        } else {
            format!("{}/{}", self.base_url, path)
        }
    }

    /// The URL of the prefix itself.
    pub fn url(&self) -> String {
        self.url_of(&self.prefix)
    }

    /// The same store with `child` appended to the prefix.
    pub fn join(&self, child: &str) -> Location {
        Location {
            store: Arc::clone(&self.store),
            prefix: self.child(child),
            base_url: self.base_url.clone(),
        }
    }
}

/// The S3 store of `bucket`, configured from the `AWS_*` variables in `env`.
#[cfg(feature = "s3")]
fn s3_store(bucket: &str, env: &BTreeMap<String, String>) -> Result<Arc<dyn ObjectStore>, String> {
    s3::store(bucket, env).map_err(|e| e.to_string())
}

/// This build has no S3 client: a clear error instead of a store.
#[cfg(not(feature = "s3"))]
fn s3_store(
    _bucket: &str,
    _env: &BTreeMap<String, String>,
) -> Result<Arc<dyn ObjectStore>, String> {
    Err(
        "this build of Tascer has no S3 support (it was built without the `s3` cargo \
         feature); rebuild with the default features, or archive to a local directory"
            .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert!(matches!(
            Location::parse("s3://"),
            Err(ArchiveError::BadUrl { .. })
        ));
        assert!(matches!(
            Location::parse("gs://b/x"),
            Err(ArchiveError::BadUrl { .. })
        ));
        #[cfg(not(feature = "s3"))]
        {
            let Err(ArchiveError::BadUrl { detail, .. }) = Location::parse("s3://bucket/x") else {
                panic!("an s3:// location parsed without the s3 feature")
            };
            assert!(detail.contains("no S3 support"), "{detail}");
        }
        let dir = tempfile::tempdir().unwrap();
        let loc = Location::parse(dir.path().to_str().unwrap()).unwrap();
        let a = loc.join("s1/20260101T000000Z");
        assert!(a.url().ends_with("/s1/20260101T000000Z"), "{}", a.url());
        assert_eq!(
            a.child("evidence/sha256/ab").as_ref(),
            "s1/20260101T000000Z/evidence/sha256/ab"
        );
    }
}
