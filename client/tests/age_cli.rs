//! A real peer: files that Debian's `age` CLI (1.1.1) encrypts decrypt with `client::age`.
//! `tools/test.sh` installs the `age` package; without it these tests say so and pass.

use std::path::Path;
use std::process::{Command, Stdio};

use client::age::{AgeError, Identity, decrypt};
use zeroize::Zeroizing;

/// Whether the `age` and `age-keygen` commands are here; if not, says why the test is skipped.
fn have_age() -> bool {
    let found = ["age", "age-keygen"].iter().all(|tool| Command::new(tool).arg("--version").output().is_ok());
    if !found {
        eprintln!("SKIP: the `age` CLI is not installed (Debian package `age`; tools/test.sh installs it)");
    }
    found
}

fn run(command: &mut Command) -> Vec<u8> {
    let output = command.output().expect("the command runs");
    assert!(output.status.success(), "{command:?}: {}", String::from_utf8_lossy(&output.stderr));
    output.stdout
}

/// A fresh `age-keygen -o` identity file, parsed, and its recipient (`age1…`).
fn keygen(dir: &Path, name: &str) -> (Vec<Identity>, String) {
    let path = dir.join(name);
    run(Command::new("age-keygen").arg("-o").arg(&path));
    let identities = Identity::parse_file(&std::fs::read_to_string(&path).unwrap()).expect("age-keygen's file parses");
    let recipient = String::from_utf8(run(Command::new("age-keygen").arg("-y").arg(&path))).unwrap();
    (identities, recipient.trim().to_owned())
}

/// `age [-a] -r R… -o out in`, and the encrypted file.
fn encrypt(dir: &Path, plaintext: &[u8], recipients: &[&str], armor: bool) -> Vec<u8> {
    let (input, output) = (dir.join("plain"), dir.join("out.age"));
    std::fs::write(&input, plaintext).unwrap();
    let mut age = Command::new("age");
    if armor {
        age.arg("--armor");
    }
    for recipient in recipients {
        age.arg("-r").arg(recipient);
    }
    run(age.arg("-o").arg(&output).arg(&input));
    std::fs::read(&output).unwrap()
}

fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

#[test]
fn x25519_files_of_every_chunk_shape() {
    if !have_age() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (alice, alice_recipient) = keygen(dir.path(), "alice.txt");
    for len in [0, 1, 64 * 1024, 64 * 1024 + 1, 200 * 1024 + 7] {
        for armor in [false, true] {
            let plaintext = payload(len);
            let file = encrypt(dir.path(), &plaintext, &[&alice_recipient], armor);
            assert_eq!(file.starts_with(b"-----BEGIN AGE ENCRYPTED FILE-----"), armor);
            let decrypted = decrypt(&file, &alice).unwrap_or_else(|e| panic!("{len} bytes, armor {armor}: {e}"));
            assert!(decrypted.as_slice() == plaintext, "{len} bytes, armor {armor}: plaintext differs");
        }
    }
}

#[test]
fn two_recipients_and_a_stranger() {
    if !have_age() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (alice, alice_recipient) = keygen(dir.path(), "alice.txt");
    let (bob, bob_recipient) = keygen(dir.path(), "bob.txt");
    let (carol, _) = keygen(dir.path(), "carol.txt");
    let plaintext = payload(70_000);
    for armor in [false, true] {
        let file = encrypt(dir.path(), &plaintext, &[&alice_recipient, &bob_recipient], armor);
        for identities in [&alice[..], &bob[..]] {
            assert!(decrypt(&file, identities).unwrap().as_slice() == plaintext);
        }
        // A non-matching identity first is skipped.
        let carol_then_bob = Identity::parse_file(
            &[dir.path().join("carol.txt"), dir.path().join("bob.txt")]
                .iter()
                .map(|p| std::fs::read_to_string(p).unwrap())
                .collect::<String>(),
        )
        .unwrap();
        assert_eq!(carol_then_bob.len(), 2);
        assert!(decrypt(&file, &carol_then_bob).unwrap().as_slice() == plaintext);
        assert_eq!(decrypt(&file, &carol).unwrap_err(), AgeError::NoMatch);
    }
    let only_bob = encrypt(dir.path(), b"for bob", &[&bob_recipient], false);
    assert_eq!(decrypt(&only_bob, &alice).unwrap_err(), AgeError::NoMatch);
    let passphrase = Identity::Passphrase(Zeroizing::new("not a key".into()));
    assert_eq!(decrypt(&only_bob, &[passphrase]).unwrap_err(), AgeError::NoMatch);
}

#[test]
fn altered_cli_files_are_refused() {
    if !have_age() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (alice, alice_recipient) = keygen(dir.path(), "alice.txt");
    let file = encrypt(dir.path(), &payload(200 * 1024 + 7), &[&alice_recipient], false);
    let header_end = file.windows(4).position(|w| w == b"\n---").unwrap() + 1;
    let mac_end = header_end + file[header_end..].iter().position(|&b| b == b'\n').unwrap() + 1;

    let mut altered_mac = file.clone();
    let c = &mut altered_mac[mac_end - 10]; // a base64 character inside the MAC
    *c = if *c == b'A' { b'B' } else { b'A' };
    assert_eq!(decrypt(&altered_mac, &alice).unwrap_err(), AgeError::HeaderMac);

    let mut flipped_payload = file.clone();
    flipped_payload[mac_end + 16 + 100] ^= 1;
    assert_eq!(decrypt(&flipped_payload, &alice).unwrap_err(), AgeError::PayloadAuth);

    let chunk = 64 * 1024 + 16;
    let without_last_chunk = &file[..mac_end + 16 + 3 * chunk];
    assert_eq!(decrypt(without_last_chunk, &alice).unwrap_err(), AgeError::Truncated);
    assert_eq!(decrypt(&file[..file.len() - 1], &alice).unwrap_err(), AgeError::PayloadAuth);
    assert_eq!(decrypt(&[&file[..], b"x"].concat(), &alice).unwrap_err(), AgeError::PayloadAuth);
    assert!(matches!(decrypt(&file[..mac_end + 10], &alice), Err(AgeError::Header(_))));
}

/// `age -p` reads the passphrase from a terminal only; `script` (util-linux) gives it one.
#[test]
fn scrypt_file_from_the_age_cli() {
    if !have_age() {
        return;
    }
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("SKIP: `script` (util-linux) is missing, so `age -p` has no terminal");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("plain"), dir.path().join("out.age"));
    let plaintext = payload(1000);
    std::fs::write(&input, &plaintext).unwrap();
    let age = format!("age --passphrase --armor -o '{}' '{}'", output.display(), input.display());
    let mut script = Command::new("script")
        .args(["-q", "-e", "-c", &age, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::io::Write::write_all(script.stdin.as_mut().unwrap(), b"correct horse\ncorrect horse\n").unwrap();
    assert!(script.wait().unwrap().success(), "age --passphrase under script failed");
    let file = std::fs::read(&output).unwrap();
    let text = String::from_utf8(file.clone()).unwrap();
    assert!(text.starts_with("-----BEGIN AGE ENCRYPTED FILE-----"));

    let right = Identity::Passphrase(Zeroizing::new("correct horse".into()));
    let wrong = Identity::Passphrase(Zeroizing::new("battery staple".into()));
    assert_eq!(decrypt(&file, std::slice::from_ref(&wrong)).unwrap_err(), AgeError::NoMatch);
    assert!(decrypt(&file, &[wrong, right]).unwrap().as_slice() == plaintext);
}
