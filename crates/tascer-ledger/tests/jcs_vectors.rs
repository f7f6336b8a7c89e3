//! RFC 8785 vectors from `tests/vectors/jcs` (see `tests/vectors/README.md`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use tascer_ledger::jcs;

fn vectors() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/jcs")
}

#[test]
fn every_input_canonicalizes_to_its_output() {
    let dir = vectors();
    let mut checked = 0;
    for entry in std::fs::read_dir(dir.join("input")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_owned();
        let input = std::fs::read_to_string(&path).unwrap();
        let expected = std::fs::read(dir.join("output").join(&name)).unwrap();
        let got = jcs::canonicalize_text(&input).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&expected),
            "{name:?}"
        );
        // outhex holds the same bytes as hex
        let hex_name = PathBuf::from(&name).with_extension("txt");
        let hex_text = std::fs::read_to_string(dir.join("outhex").join(hex_name)).unwrap();
        let hex_clean: String = hex_text.split_whitespace().collect();
        assert_eq!(
            hex_clean.to_lowercase(),
            hex::encode(&got),
            "{name:?} (outhex)"
        );
        checked += 1;
    }
    assert_eq!(checked, 6);
}

#[test]
fn es6_number_formatting() {
    let csv = std::fs::read_to_string(vectors().join("es6-numbers.csv")).unwrap();
    let mut checked = 0;
    for line in csv.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (hex_bits, expected) = line.split_once(',').unwrap();
        let bits = u64::from_str_radix(hex_bits, 16).unwrap();
        let x = f64::from_bits(bits);
        let got = jcs::format_f64(x);
        if expected == "ERROR" {
            assert_eq!(got, Err(jcs::JcsError::NonFinite), "{hex_bits}");
        } else {
            assert_eq!(got.unwrap(), expected, "{hex_bits}");
            // and through a serde_json value
            if x.fract() != 0.0 || x.abs() >= 1e16 {
                let v = serde_json::Value::from(x);
                assert_eq!(jcs::canonical_string(&v).unwrap(), expected, "{hex_bits}");
            }
        }
        checked += 1;
    }
    assert_eq!(checked, 26);
}
