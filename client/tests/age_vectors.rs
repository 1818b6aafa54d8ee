//! Known answers: every C2SP CCTV age vector in `tests/vectors/age` (X25519, scrypt, armor,
//! header, STREAM). Success vectors must decrypt to the payload's SHA-256; failure vectors must
//! fail with the error kind of their class.

use std::io::Read;
use std::path::Path;

use client::age::{AgeError, Identity, decrypt};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

/// One vector: its textual header and the age file after the empty line.
struct Vector {
    expect: String,
    payload: Option<String>,
    identities: Vec<Identity>,
    file: Vec<u8>,
}

fn parse(bytes: &[u8]) -> Vector {
    let split = bytes.windows(2).position(|w| w == b"\n\n").expect("header and body are split by an empty line");
    let header = std::str::from_utf8(&bytes[..split]).expect("the header is text");
    let mut body = bytes[split + 2..].to_vec();
    let (mut expect, mut payload, mut identities) = (None, None, Vec::new());
    for line in header.lines() {
        let (key, value) = line.split_once(": ").expect("key: value");
        match key {
            "expect" => expect = Some(value.to_owned()),
            "payload" => payload = Some(value.to_owned()),
            "identity" => identities.push(Identity::from_secret_key(value).expect("the vector's identity parses")),
            "passphrase" => identities.push(Identity::Passphrase(Zeroizing::new(value.to_owned()))),
            "compressed" => {
                assert_eq!(value, "zlib");
                let mut out = Vec::new();
                flate2::read::ZlibDecoder::new(&body[..]).read_to_end(&mut out).expect("zlib");
                body = out;
            }
            // Armor is detected from the file itself; the rest only aids debugging.
            "armored" | "file key" | "comment" => {}
            other => {
                panic!("unknown vector key {other:?}: the CCTV format says to ignore such a file, so do not copy it")
            }
        }
    }
    Vector { expect: expect.expect("every vector has an expect line"), payload, identities, file: body }
}

/// Whether the outcome is the one the vector's class names; `None` if it is.
fn check(vector: &Vector) -> Option<String> {
    let result = decrypt(&vector.file, &vector.identities);
    let ok = match (vector.expect.as_str(), &result) {
        ("success", Ok(plaintext)) => {
            let digest = hex::encode(Sha256::digest(plaintext.as_slice()));
            return (Some(&digest) != vector.payload.as_ref()).then(|| format!("payload sha256 {digest}"));
        }
        ("no match", Err(AgeError::NoMatch)) => true,
        ("HMAC failure", Err(AgeError::HeaderMac)) => true,
        ("header failure", Err(AgeError::Header(_) | AgeError::Stanza { .. })) => true,
        ("armor failure", Err(AgeError::Armor(_))) => true,
        (
            "payload failure",
            Err(AgeError::Truncated | AgeError::TrailingData | AgeError::EmptyFinalChunk | AgeError::PayloadAuth),
        ) => true,
        _ => false,
    };
    (!ok).then(|| format!("expected {}, got {:?}", vector.expect, result.map(|p| p.len())))
}

#[test]
fn cctv_age_vectors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/age");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/vectors/age exists")
        .map(|entry| entry.expect("readable").file_name().into_string().expect("ASCII names"))
        .filter(|name| !name.starts_with('.') && !name.ends_with(".md"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 124, "the copied vectors (see tests/vectors/age/README.md)");
    let mut failures = Vec::new();
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    for name in &names {
        let vector = parse(&std::fs::read(dir.join(name)).expect("readable"));
        *kinds.entry(vector.expect.clone()).or_default() += 1;
        if let Some(problem) = check(&vector) {
            failures.push(format!("{name}: {problem}"));
        }
    }
    println!("{} vectors by class: {kinds:?}", names.len());
    assert!(failures.is_empty(), "{} of {} vectors failed:\n{}", failures.len(), names.len(), failures.join("\n"));
}

#[test]
fn error_messages_carry_no_secret() {
    let file = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/age/x25519_no_match")).unwrap();
    let vector = parse(&file);
    let err = decrypt(&vector.file, &vector.identities).unwrap_err();
    assert_eq!(err, AgeError::NoMatch);
    assert!(!format!("{err} {err:?} {:?}", vector.identities).contains("AGE-SECRET-KEY"));
    let passphrase = Identity::Passphrase(Zeroizing::new("hunter2".into()));
    assert!(!format!("{passphrase:?}").contains("hunter2"));
}

#[test]
fn identity_files() {
    // age-keygen's layout: comments, one key; CRLF and blank lines tolerated.
    let key = "AGE-SECRET-KEY-1EGTZVFFV20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0";
    let text = format!("# created: 2024-01-01T00:00:00Z\r\n# public key: age1…\r\n\r\n{key}\r\n");
    assert_eq!(Identity::parse_file(&text).unwrap().len(), 1);
    assert_eq!(Identity::parse_file("# nothing\n").unwrap_err(), AgeError::NoIdentities);
    let cases = [
        (key.to_lowercase(), "lower case"),
        (format!(" {key}"), "leading space"),
        (key.replace("LM0", "LM1"), "bad checksum"),
        (key.replace("-1E", "-1e"), "mixed case"),
        ("AGE-SECRET-KEY-PQ-1QQQQQQQ".to_owned(), "post-quantum"),
        ("AGE-PLUGIN-YUBIKEY-1QQQQQQQ".to_owned(), "plugin"),
    ];
    for (line, what) in cases {
        let err = Identity::parse_file(&format!("# c\n{line}\n")).unwrap_err();
        assert!(matches!(err, AgeError::Identity { line: 2, .. }), "{what}: {err:?}");
    }
}

#[test]
fn no_identities_is_refused() {
    let vector = parse(&std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/age/x25519")).unwrap());
    assert_eq!(decrypt(&vector.file, &[]).unwrap_err(), AgeError::NoIdentities);
    // The header is still checked first.
    assert!(matches!(decrypt(b"age-encryption.org/v2\n", &[]), Err(AgeError::Header(_))));
}
