//! DSSE v1 envelopes signed with Ed25519.
//!
//! The signature covers the pre-authentication encoding (PAE)
//! `"DSSEv1" SP len(type) SP type SP len(body) SP body`, lengths in ASCII
//! decimal bytes, never the bare payload.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};

use crate::error::{LedgerError, Result};

/// The payload type of an in-toto Statement.
pub const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";

/// One signature of an envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvelopeSignature {
    /// A hint naming the key (not trusted; DSSE makes it optional).
    #[serde(default)]
    pub keyid: String,
    /// Base64 of the 64-byte Ed25519 signature over the PAE.
    pub sig: String,
}

/// A DSSE envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// Base64 (standard, padded) of the payload bytes.
    pub payload: String,
    /// The payload's media type.
    #[serde(rename = "payloadType")]
    pub payload_type: String,
    /// Signatures over the PAE.
    pub signatures: Vec<EnvelopeSignature>,
}

/// DSSE v1 pre-authentication encoding.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + payload_type.len() + 32);
    out.extend_from_slice(b"DSSEv1 ");
    out.extend_from_slice(payload_type.len().to_string().as_bytes());
    out.push(b' ');
    out.extend_from_slice(payload_type.as_bytes());
    out.push(b' ');
    out.extend_from_slice(payload.len().to_string().as_bytes());
    out.push(b' ');
    out.extend_from_slice(payload);
    out
}

/// Decodes base64 as DSSE allows it: standard or URL-safe, padded or not.
pub fn decode_b64(text: &str) -> Result<Vec<u8>> {
    let text = text.trim();
    [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(text).ok())
        .ok_or_else(|| LedgerError::Dsse("not valid base64".into()))
}

impl Envelope {
    /// Signs `payload` of `payload_type` with `key`, naming it `keyid`.
    pub fn sign(payload_type: &str, payload: &[u8], key: &SigningKey, keyid: &str) -> Self {
        let signature: Signature = key.sign(&pae(payload_type, payload));
        Envelope {
            payload: STANDARD.encode(payload),
            payload_type: payload_type.to_string(),
            signatures: vec![EnvelopeSignature {
                keyid: keyid.to_string(),
                sig: STANDARD.encode(signature.to_bytes()),
            }],
        }
    }

    /// The decoded payload (not verified).
    pub fn payload_bytes(&self) -> Result<Vec<u8>> {
        decode_b64(&self.payload)
    }

    /// Verifies that the payload type is `expected_type` and that at least
    /// one signature over the PAE verifies with `key`; returns the payload.
    pub fn verify(&self, key: &VerifyingKey, expected_type: &str) -> Result<Vec<u8>> {
        if self.payload_type != expected_type {
            return Err(LedgerError::Dsse(format!(
                "payloadType is {:?}, want {expected_type:?}",
                self.payload_type
            )));
        }
        if self.signatures.is_empty() {
            return Err(LedgerError::Dsse("the envelope has no signatures".into()));
        }
        let payload = self.payload_bytes()?;
        let message = pae(&self.payload_type, &payload);
        for s in &self.signatures {
            let Ok(bytes) = decode_b64(&s.sig) else {
                continue;
            };
            let Ok(signature) = Signature::from_slice(&bytes) else {
                continue;
            };
            if key.verify_strict(&message, &signature).is_ok() {
                return Ok(payload);
            }
        }
        Err(LedgerError::Dsse(
            "no signature verifies with the given key over the DSSE PAE".into(),
        ))
    }

    /// Parses an envelope from JSON text.
    pub fn from_json(text: &str) -> Result<Self> {
        serde_json::from_str(text)
            .map_err(|e| LedgerError::Dsse(format!("not a DSSE envelope: {e}")))
    }
}
