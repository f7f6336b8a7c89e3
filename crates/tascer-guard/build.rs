//! Turns the embedded gitleaks rules (`data/gitleaks-v8.30.0.toml`) into a
//! Rust table (`$OUT_DIR/gitleaks_rules.rs`) when Tascer is built, so a
//! process that scans for secrets does not parse 100 KiB of TOML first:
//! `tascer hook` is a new process on every Claude Code tool call.
//!
//! The table holds the fields `src/gates/builtin/secrets/rules.rs` reads,
//! as written in the file (keywords and stopwords lowercased, as scanning
//! matches them); a unit test there checks it against the TOML parsed at
//! run time.

use std::fmt::Write as _;

const RULES: &str = "data/gitleaks-v8.30.0.toml";

fn main() {
    println!("cargo::rerun-if-changed={RULES}");
    let text =
        std::fs::read_to_string(RULES).unwrap_or_else(|e| panic!("cannot read {RULES}: {e}"));
    let config: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("{RULES} is not valid TOML: {e}"));
    let mut out = String::from("&[\n");
    let rules = config
        .get("rules")
        .and_then(toml::Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for rule in rules {
        let Some(rule) = rule.as_table() else {
            panic!("{RULES}: a [[rules]] entry is not a table");
        };
        let allowlists: String = rule
            .get("allowlists")
            .and_then(toml::Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(toml::Value::as_table)
            .map(|a| {
                format!(
                    "StaticAllowlist {{ regexes: &{:?}, regex_target: {:?}, stopwords: &{:?} }}, ",
                    strings(a, "regexes"),
                    a.get("regexTarget").and_then(toml::Value::as_str),
                    lowercase(strings(a, "stopwords")),
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "StaticRule {{ id: {:?}, description: {:?}, regex: {:?}, entropy: {:?}, \
             secret_group: {:?}, keywords: &{:?}, allowlists: &[{allowlists}] }},",
            str_field(rule, "id"),
            str_field(rule, "description"),
            rule.get("regex").and_then(toml::Value::as_str),
            rule.get("entropy")
                .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64))),
            rule.get("secretGroup")
                .and_then(toml::Value::as_integer)
                .map(|g| usize::try_from(g).unwrap_or_else(|_| panic!("{RULES}: secretGroup {g}"))),
            lowercase(strings(rule, "keywords")),
        );
    }
    out.push_str("]\n");
    let dir = std::env::var_os("OUT_DIR").unwrap_or_else(|| panic!("cargo sets OUT_DIR"));
    let path = std::path::Path::new(&dir).join("gitleaks_rules.rs");
    std::fs::write(&path, out).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

/// Keywords and stopwords are matched against lowercased text.
fn lowercase(words: Vec<&str>) -> Vec<String> {
    words.into_iter().map(str::to_lowercase).collect()
}

fn str_field<'a>(table: &'a toml::Table, key: &str) -> &'a str {
    table
        .get(key)
        .and_then(toml::Value::as_str)
        .unwrap_or_default()
}

fn strings<'a>(table: &'a toml::Table, key: &str) -> Vec<&'a str> {
    table
        .get(key)
        .and_then(toml::Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(toml::Value::as_str)
        .collect()
}
