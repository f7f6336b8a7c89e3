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
//! loopback interface (or `AWS_ALLOW_HTTP=true`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use object_store::ObjectStore;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
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
            let store = s3_store(bucket, &env).map_err(|e| ArchiveError::BadUrl {
                url: url.to_string(),
                detail: e.to_string(),
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

/// True when `endpoint`'s host is on the loopback interface.
fn is_loopback_endpoint(endpoint: &str) -> bool {
    let rest = endpoint.split_once("://").map_or(endpoint, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or("");
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        authority.rsplit_once(':').map_or(authority, |(h, _)| h)
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn s3_store(
    bucket: &str,
    env: &BTreeMap<String, String>,
) -> object_store::Result<Arc<dyn ObjectStore>> {
    let mut builder = AmazonS3Builder::new();
    for (k, v) in env {
        if let Ok(key) = k.to_ascii_lowercase().parse::<AmazonS3ConfigKey>() {
            builder = builder.with_config(key, v);
        }
    }
    builder = builder.with_bucket_name(bucket);
    let endpoint = env
        .get("AWS_ENDPOINT_URL_S3")
        .or_else(|| env.get("AWS_ENDPOINT_URL"));
    if let Some(endpoint) = &endpoint {
        builder = builder
            .with_endpoint(endpoint.as_str())
            .with_virtual_hosted_style_request(false);
        if is_loopback_endpoint(endpoint) {
            builder = builder.with_allow_http(true);
        }
    }
    if !env.contains_key("AWS_REGION") && !env.contains_key("AWS_DEFAULT_REGION") {
        builder = builder.with_region("us-east-1");
    }
    if !env.contains_key("AWS_ACCESS_KEY_ID")
        && let Some(profile) = profile_credentials(env)
    {
        builder = builder
            .with_access_key_id(profile.access_key_id)
            .with_secret_access_key(profile.secret_access_key);
        if let Some(token) = profile.session_token {
            builder = builder.with_token(token);
        }
    }
    Ok(Arc::new(builder.build()?))
}

/// Static keys from the shared credentials file.
#[derive(Debug, PartialEq, Eq)]
struct ProfileCredentials {
    access_key_id: String,
    secret_access_key: String,
    session_token: Option<String>,
}

fn profile_credentials(env: &BTreeMap<String, String>) -> Option<ProfileCredentials> {
    let file = env
        .get("AWS_SHARED_CREDENTIALS_FILE")
        .map(PathBuf::from)
        .or_else(|| std::env::home_dir().map(|h| h.join(".aws/credentials")))?;
    let text = std::fs::read_to_string(file).ok()?;
    let profile = env.get("AWS_PROFILE").map_or("default", String::as_str);
    parse_profile(&text, profile)
}

/// The keys of `[profile]` in an AWS shared credentials file (INI).
fn parse_profile(text: &str, profile: &str) -> Option<ProfileCredentials> {
    let mut in_section = false;
    let (mut id, mut secret, mut token) = (None, None, None);
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            in_section = name.trim() == profile;
            continue;
        }
        if !in_section {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            let v = v.trim().to_string();
            match k.trim() {
                "aws_access_key_id" => id = Some(v),
                "aws_secret_access_key" => secret = Some(v),
                "aws_session_token" => token = Some(v),
                _ => {}
            }
        }
    }
    Some(ProfileCredentials {
        access_key_id: id?,
        secret_access_key: secret?,
        session_token: token,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_endpoints() {
        assert!(is_loopback_endpoint("http://127.0.0.1:5000"));
        assert!(is_loopback_endpoint("http://localhost:9000/"));
        assert!(is_loopback_endpoint("http://[::1]:9000"));
        assert!(!is_loopback_endpoint("http://10.0.0.1:9000"));
        assert!(!is_loopback_endpoint("https://s3.amazonaws.com"));
    }

    #[test]
    fn profile_file() {
        let text = "[default]\naws_access_key_id = A\naws_secret_access_key=B\n\n[other]\naws_access_key_id=C\naws_secret_access_key=D\naws_session_token=T\n";
        assert_eq!(
            parse_profile(text, "other"),
            Some(ProfileCredentials {
                access_key_id: "C".into(),
                secret_access_key: "D".into(),
                session_token: Some("T".into())
            })
        );
        assert_eq!(
            parse_profile(text, "default").map(|p| p.access_key_id),
            Some("A".into())
        );
        assert_eq!(parse_profile(text, "missing"), None);
    }

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
