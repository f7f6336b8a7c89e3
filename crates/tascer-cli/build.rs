//! Links the binaries with packed relative relocations (`-z
//! pack-relative-relocs`, `DT_RELR`) when building on and for a Linux with
//! glibc 2.36 or later, the first glibc that applies them.
//!
//! A position-independent executable carries one relocation per pointer in
//! its data (2.3 MB for `tascer`), which the dynamic loader reads at every
//! start; packed, they take a few KB: the binary is 2.4 MB smaller and a
//! session's peak resident memory about 5 MiB lower (BENCHMARKS.md,
//! 2026-12-03). A binary linked this way does not
//! start on an older glibc, so the flag is only passed when the glibc of
//! the building machine has it and the target is that machine.
//! `TASCER_PACKED_RELOCS=0` leaves it out (for a binary meant for older
//! systems), `=1` passes it regardless.

use std::process::Command;

fn main() {
    println!("cargo::rerun-if-env-changed=TASCER_PACKED_RELOCS");
    let wanted = match std::env::var("TASCER_PACKED_RELOCS").as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        _ => native_glibc_has_relr(),
    };
    if wanted {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// True when the target is this machine's, Linux with glibc ≥ 2.36.
fn native_glibc_has_relr() -> bool {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || var("TARGET") != var("HOST")
    {
        return false;
    }
    // `getconf GNU_LIBC_VERSION` prints `glibc 2.36`.
    let Ok(out) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (2, 36)
}
