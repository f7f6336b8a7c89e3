//! The S3 target: `object_store`'s client, configured from the `AWS_*`
//! variables and the shared credentials file (see the parent module).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use object_store::ObjectStore;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};

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

/// The S3 store of `bucket`, configured from `env`.
pub(super) fn store(
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
}
