//! [`explain_refusal`]: what the sandbox refused, said to the model.

use std::path::{Path, PathBuf};

use crate::policy::SandboxPolicy;

/// The error texts a refused system call leaves in a command's output.
const DENIED: &[&str] = &[
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
    "EACCES",
    "EPERM",
    "EROFS",
];

/// A note for a failed sandboxed command whose output shows a refusal:
/// one line per refused path saying what was refused and why, then what
/// the policy allows. `None` when the output shows no refusal.
pub fn explain_refusal(output: &str, policy: &SandboxPolicy) -> Option<String> {
    let mut lines: Vec<String> = Vec::new();
    for line in output
        .lines()
        .filter(|l| DENIED.iter().any(|d| l.contains(d)))
    {
        let why = match refused_path(line) {
            Some(path) => why_path(&path, line, policy),
            None => why_call(line, policy),
        };
        if !lines.contains(&why) {
            lines.push(why);
        }
        if lines.len() >= 5 {
            break;
        }
    }
    if lines.is_empty() {
        return None;
    }
    lines.push(policy.summary());
    Some(lines.join("\n"))
}

/// Why a refused path was refused.
fn why_path(path: &Path, line: &str, policy: &SandboxPolicy) -> String {
    let under = |roots: &[PathBuf]| roots.iter().any(|r| path.starts_with(r));
    let shown = path.display();
    if under(&policy.deny_read) {
        format!("the sandbox refused access to a secret location: {shown}")
    } else if under(&policy.read_only) || line.contains("Read-only file system") {
        format!("the sandbox keeps this path read-only: {shown}")
    } else if !under(&policy.writable) {
        format!("the sandbox refused a write outside the workspace: {shown}")
    } else {
        format!("the sandbox (or the file's permissions) refused access to {shown}")
    }
}

/// Why a refusal that names no path happened.
fn why_call(line: &str, policy: &SandboxPolicy) -> String {
    let lower = line.to_ascii_lowercase();
    if !policy.network
        && ["socket", "connect", "network", "resolve", "http", "curl"]
            .iter()
            .any(|w| lower.contains(w))
    {
        "the sandbox refused a network connection: sandbox.network is off".into()
    } else {
        "the sandbox refused a system call (ptrace, mount, unshare, setns, chroot, bpf, \
         module loading and non-local sockets are refused)"
            .into()
    }
}

/// The absolute path a refusal line names, if any: `touch: cannot touch
/// '/etc/x': Permission denied`, `bash: /etc/x: Permission denied`,
/// `PermissionError: [Errno 13] Permission denied: '/etc/x'`.
fn refused_path(line: &str) -> Option<PathBuf> {
    line.split([' ', '\'', '"', '`', '‘', '’'])
        .map(|w| w.trim_end_matches([':', ',', ')', ';']))
        .find(|w| w.starts_with('/') && w.len() > 1)
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> SandboxPolicy {
        SandboxPolicy::for_workspace(Path::new("/ws"), Some(Path::new("/home/u")))
    }

    #[test]
    fn names_a_write_outside_the_workspace() {
        let out = "touch: cannot touch '/etc/evil': Permission denied";
        let note = explain_refusal(out, &policy()).unwrap();
        assert!(
            note.contains("refused a write outside the workspace: /etc/evil"),
            "{note}"
        );
        assert!(note.contains("writes only under /ws"), "{note}");
    }

    #[test]
    fn names_secrets_read_only_paths_and_network() {
        let p = policy();
        let secret = explain_refusal("cat: /home/u/.ssh/id_rsa: Permission denied", &p).unwrap();
        assert!(
            secret.contains("secret location: /home/u/.ssh/id_rsa"),
            "{secret}"
        );
        let hook = explain_refusal("bash: /ws/.git/hooks/pre-commit: Read-only file system", &p);
        assert!(
            hook.unwrap()
                .contains("read-only: /ws/.git/hooks/pre-commit")
        );
        let net = explain_refusal("curl: (7) Couldn't connect: Operation not permitted", &p);
        assert!(net.unwrap().contains("sandbox.network is off"));
    }

    #[test]
    fn ordinary_failures_get_no_note() {
        assert_eq!(explain_refusal("error: test failed", &policy()), None);
    }
}
