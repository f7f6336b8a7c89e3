//! DSSE / in-toto vectors from `tests/vectors/dsse` (see `tests/vectors/README.md`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use serde_json::Value;
use tascer_ledger::keys::{load_verifying_key, signing_key_from_seed_hex};
use tascer_ledger::{Envelope, IN_TOTO_PAYLOAD_TYPE, Statement, jcs, pae, sha256_hex, sslib_keyid};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/dsse")
}

fn read(name: &str) -> String {
    std::fs::read_to_string(dir().join(name)).unwrap()
}

fn expected() -> Value {
    serde_json::from_str(&read("expected.json")).unwrap()
}

#[test]
fn python_signed_envelope_verifies() {
    let key = load_verifying_key(dir().join("ed25519-test.pub.pem")).unwrap();
    let env = Envelope::from_json(&read("envelope.python-signed.json")).unwrap();
    let payload = env.verify(&key, IN_TOTO_PAYLOAD_TYPE).unwrap();
    assert_eq!(
        payload,
        std::fs::read(dir().join("statement.json")).unwrap()
    );
    // the statement parses as ours and re-canonicalizes to the same bytes
    let st: Statement = serde_json::from_slice(&payload).unwrap();
    assert_eq!(st.to_canonical().unwrap(), payload);
    let subject = std::fs::read(dir().join("subject.bin")).unwrap();
    assert_eq!(st.subject[0].digest["sha256"], sha256_hex(&subject));
}

#[test]
fn raw_hex_public_key_loads_too() {
    let pem = load_verifying_key(dir().join("ed25519-test.pub.pem")).unwrap();
    let hex = load_verifying_key(dir().join("ed25519-test.pub.hex")).unwrap();
    assert_eq!(pem, hex);
}

#[test]
fn signature_reproduced_byte_for_byte() {
    let exp = expected();
    let key = signing_key_from_seed_hex(&read("ed25519-test.seed.hex")).unwrap();
    assert_eq!(
        hex::encode(key.verifying_key().as_bytes()),
        exp["public_key_hex"].as_str().unwrap()
    );
    let statement = std::fs::read(dir().join("statement.json")).unwrap();
    // the statement is already canonical
    assert_eq!(
        jcs::canonicalize_text(std::str::from_utf8(&statement).unwrap()).unwrap(),
        statement
    );
    assert_eq!(
        sha256_hex(&statement),
        exp["payload_sha256"].as_str().unwrap()
    );
    let p = pae(IN_TOTO_PAYLOAD_TYPE, &statement);
    assert_eq!(hex::encode(&p), read("pae.hex").trim());
    assert!(p.starts_with(exp["pae_prefix"].as_str().unwrap().as_bytes()));
    assert_eq!(sha256_hex(&p), exp["pae_sha256"].as_str().unwrap());
    let keyid = sslib_keyid(&key.verifying_key());
    assert_eq!(keyid, exp["keyid"].as_str().unwrap());
    let env = Envelope::sign(IN_TOTO_PAYLOAD_TYPE, &statement, &key, &keyid);
    assert_eq!(env.payload, exp["payload_b64"].as_str().unwrap());
    assert_eq!(env.signatures[0].sig, exp["sig_b64"].as_str().unwrap());
    // and the whole envelope equals the Python one
    let python: Envelope = Envelope::from_json(&read("envelope.python-signed.json")).unwrap();
    assert_eq!(env, python);
}

#[test]
fn every_negative_envelope_is_rejected() {
    let key = load_verifying_key(dir().join("ed25519-test.pub.pem")).unwrap();
    let mut checked = 0;
    for entry in std::fs::read_dir(dir().join("negative")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let env = Envelope::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(
            env.verify(&key, IN_TOTO_PAYLOAD_TYPE).is_err(),
            "{} was accepted",
            path.display()
        );
        checked += 1;
    }
    assert_eq!(checked, 4);
    // the good envelope with another key
    let other = load_verifying_key(dir().join("negative/other-key.pub.pem")).unwrap();
    let good = Envelope::from_json(&read("envelope.python-signed.json")).unwrap();
    assert!(good.verify(&other, IN_TOTO_PAYLOAD_TYPE).is_err());
}

#[test]
fn rust_signed_sample_verifies() {
    let d = dir().join("rust-signed-sample");
    let key = load_verifying_key(d.join("rust.pub.pem")).unwrap();
    let env =
        Envelope::from_json(&std::fs::read_to_string(d.join("envelope.rust-signed.json")).unwrap())
            .unwrap();
    env.verify(&key, IN_TOTO_PAYLOAD_TYPE).unwrap();
}

#[test]
fn garbage_envelopes_are_errors_not_panics() {
    let key = load_verifying_key(dir().join("ed25519-test.pub.pem")).unwrap();
    assert!(Envelope::from_json("{").is_err());
    assert!(Envelope::from_json("[]").is_err());
    let env = Envelope {
        payload: "%%%".into(),
        payload_type: IN_TOTO_PAYLOAD_TYPE.into(),
        signatures: vec![tascer_ledger::EnvelopeSignature {
            keyid: String::new(),
            sig: "AAAA".into(),
        }],
    };
    assert!(env.verify(&key, IN_TOTO_PAYLOAD_TYPE).is_err());
}
