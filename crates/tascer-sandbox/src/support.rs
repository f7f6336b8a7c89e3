//! [`support`]: what the running kernel can enforce.

/// What this machine's kernel offers the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Support {
    /// Landlock (file-system rules) is available.
    pub landlock: bool,
    /// seccomp-bpf filters are available for this architecture.
    pub seccomp: bool,
    /// Unprivileged user namespaces (for the read-only protected paths).
    pub user_namespaces: bool,
}

impl Support {
    /// True when commands can run sandboxed (Landlock at least).
    pub fn usable(&self) -> bool {
        self.landlock
    }

    /// What is missing, for a warning at start; `None` when nothing is.
    pub fn missing(&self) -> Option<String> {
        if !cfg!(target_os = "linux") {
            return Some(format!(
                "Tascer has no OS sandbox on {} yet: commands run unconfined",
                std::env::consts::OS
            ));
        }
        let mut parts = Vec::new();
        if !self.landlock {
            parts.push("Landlock (file reads and writes are not restricted)");
        }
        if !self.seccomp {
            parts.push("seccomp (system calls are not filtered)");
        }
        if !self.user_namespaces {
            parts.push("user namespaces (.git/hooks, .tascer/, .claude/ stay writable)");
        }
        (!parts.is_empty()).then(|| format!("this kernel lacks {}", parts.join(", ")))
    }
}

/// Probes the running kernel (cheap: one Landlock ruleset created and
/// dropped, two files read).
pub fn support() -> Support {
    #[cfg(target_os = "linux")]
    {
        let max_userns = std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(0);
        Support {
            landlock: crate::landlock_fs::available(),
            seccomp: std::path::Path::new("/proc/sys/kernel/seccomp/actions_avail").exists()
                && matches!(std::env::consts::ARCH, "x86_64" | "aarch64" | "riscv64"),
            user_namespaces: max_userns > 0,
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        Support {
            landlock: false,
            seccomp: false,
            user_namespaces: false,
        }
    }
}
