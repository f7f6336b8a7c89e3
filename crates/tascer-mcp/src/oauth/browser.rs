//! Who opens the authorization URL: a person's browser (a command), or a
//! headless HTTP client that follows the redirects back to the loopback
//! listener (tests, the conformance suite).

use std::process::Stdio;

use futures::future::BoxFuture;

/// Opens an authorization URL. Returning `Ok` means it was handed over;
/// the login then waits for the redirect to the loopback listener.
pub trait Browser: Send + Sync {
    /// Opens `url`.
    fn open<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<(), String>>;
}

/// Runs a command with the URL as its last argument: `$BROWSER` when set
/// (split like a shell would), else `xdg-open` (`open` on macOS). The
/// command is not waited for.
#[derive(Debug, Clone, Default)]
pub struct CommandBrowser {
    /// The command; `None` reads `$BROWSER` when opening.
    pub command: Option<String>,
}

impl CommandBrowser {
    fn argv(&self) -> Result<Vec<String>, String> {
        let command = self.command.clone().or_else(|| {
            std::env::var("BROWSER")
                .ok()
                .filter(|b| !b.trim().is_empty())
        });
        match command {
            Some(c) => shlex::split(&c)
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("cannot parse the browser command {c:?}")),
            None if cfg!(target_os = "macos") => Ok(vec!["open".to_owned()]),
            None => Ok(vec!["xdg-open".to_owned()]),
        }
    }
}

impl Browser for CommandBrowser {
    fn open<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let argv = self.argv()?;
            let (program, args) = argv.split_first().ok_or("empty browser command")?;
            let mut child = tokio::process::Command::new(program)
                .args(args)
                .arg(url)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot run {program:?}: {e}"))?;
            // Reap it in the background: a browser may outlive the login.
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
            Ok(())
        })
    }
}

/// Fetches the authorization URL and follows its redirects, so an
/// authorization server that grants without a person (test servers, the
/// conformance suite's) sends it on to the loopback redirect.
#[derive(Debug, Clone, Default)]
pub struct HeadlessBrowser;

impl Browser for HeadlessBrowser {
    fn open<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let client = reqwest::Client::builder()
                .no_proxy()
                .build()
                .map_err(|e| e.to_string())?;
            let response = client
                .get(url)
                .send()
                .await
                .map_err(|e| format!("cannot fetch the authorization URL: {e}"))?;
            if response.status().is_success() {
                Ok(())
            } else {
                Err(format!(
                    "the authorization URL answered HTTP {}",
                    response.status()
                ))
            }
        })
    }
}
