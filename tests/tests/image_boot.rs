//! Boots the built enclave image under QEMU (TCG: no TDX here) with the TDVF firmware, and
//! checks that the enclave comes up as PID 1, finds no quote provider, says so, keeps serving
//! its key through the relay, sees exactly the command line RTMR2 hashes, and takes a secrets
//! bundle through the relay and the port forward. It boots the image's test variant
//! (`test/initrd.cpio`: the same binary and modules, the configuration plus the test suite's
//! provisioner key), since the published image lists no provisioner anyone could test with.
//!
//! Needs `image/out` (make image) and qemu-system-x86_64 ≥ 10; `make test` provides both and
//! sets `SVC_IMAGE_DIR`. Without it the test says why and does nothing.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use e2e::{Process, free_port};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread")]
async fn image_boots_serves_and_measures_its_cmdline() {
    let Ok(dir) = std::env::var("SVC_IMAGE_DIR") else {
        eprintln!("SVC_IMAGE_DIR not set: image boot test not run (make test runs it)");
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let cmdline = std::fs::read_to_string(dir.join("cmdline")).unwrap().trim_end().to_string();
    let port = free_port();
    let console = dir.join(format!("console-{port}.log"));
    let started = Instant::now();
    let mut qemu = Command::new("qemu-system-x86_64")
        .args(["-accel", "tcg", "-machine", "q35", "-cpu", "max", "-m", "1G", "-smp", "1"])
        .args(["-nographic", "-nodefaults", "-no-reboot", "-serial"])
        .arg(format!("file:{}", console.display()))
        .arg("-bios")
        .arg(dir.join("OVMF.fd"))
        .arg("-kernel")
        .arg(dir.join("vmlinuz"))
        .arg("-initrd")
        .arg(dir.join("test/initrd.cpio"))
        .arg("-append")
        .arg(&cmdline)
        .args([
            "-netdev",
            &format!("user,id=n0,hostfwd=tcp:127.0.0.1:{port}-:7070"),
            "-device",
            "virtio-net-pci,netdev=n0",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("qemu-system-x86_64 (make test installs it)");
    let guard = KillOnDrop(&mut qemu);

    // Wait for the enclave to answer through the forwarded port (TCG boots take a while).
    let http = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().unwrap();
    let url = format!("http://127.0.0.1:{port}");
    let deadline = started + Duration::from_secs(600);
    let key: Value = loop {
        if let Ok(r) = http.get(format!("{url}/public-key")).send().await
            && r.status() == 200
        {
            break r.json().await.unwrap();
        }
        assert!(Instant::now() < deadline, "enclave did not serve within 600 s; console:\n{}", read(&console));
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let boot_to_serving = started.elapsed();
    eprintln!("boot-to-serving under TCG: {:.1} s", boot_to_serving.as_secs_f64());
    assert_eq!(key["algorithm"], "x25519");

    // Through the relay, as a client would.
    let relay_dir = tempfile::tempdir().unwrap();
    let relay_port = free_port();
    let config = relay_dir.path().join("relay.json");
    std::fs::write(
        &config,
        serde_json::json!({"listen": format!("127.0.0.1:{relay_port}"), "enclaveUrl": url, "dataDir": relay_dir.path().join("d")}).to_string(),
    )
    .unwrap();
    let _relay = Process::spawn_binary("relay", &config, relay_dir.path().join("relay.log"));
    e2e::wait_http(&format!("http://127.0.0.1:{relay_port}/health"));
    let att: Value =
        http.get(format!("http://127.0.0.1:{relay_port}/tee/attestation")).send().await.unwrap().json().await.unwrap();
    assert!(att["tdxQuote"].is_null(), "{att}");
    assert_eq!(att["tdxQuoteError"], "tdx_quote_unavailable");
    assert_eq!(att["teePublicKey"], key["publicKey"]);
    let via_relay: Value =
        http.get(format!("http://127.0.0.1:{relay_port}/tee/public-key")).send().await.unwrap().json().await.unwrap();
    assert_eq!(via_relay, key);

    // The guest saw exactly the command line that RTMR2's first event hashes.
    let text = read(&console);
    let seen = text
        .split("init: /proc/cmdline=[")
        .nth(1)
        .and_then(|r| r.split(']').next())
        .unwrap_or_else(|| panic!("no cmdline on the console:\n{text}"));
    assert_eq!(seen, shared::measure::load_options(&cmdline));
    assert!(text.contains("init: eth0 is 10.0.2.15/24"), "{text}");

    // Provisioned through the relay, as a key holder would (no TDX here: the key holder is told
    // to accept an unattested enclave, which it says).
    assert_eq!(att["provisioning"]["provisioned"], false, "{att}");
    let mut options = client::attest::AttestOptions::new(shared::attest::TrustRoot::Intel, e2e::dev_measurements());
    options.allow_unattested = true;
    let keyholder = client::Client::new(&format!("http://127.0.0.1:{relay_port}"), None).with_attestation(options);
    let secrets = client::provision::Secrets {
        version: 1,
        kek: shared::provision::Secret::new(shared::b64::encode([9u8; 32])),
        previous_keks: Vec::new(),
        credentials: Default::default(),
    };
    let out = keyholder.provision(&secrets, &e2e::provisioner(), None, None).await.unwrap();
    assert!(out.report.unattested);
    let state = out.state.expect("the image took the bundle");
    assert_eq!((state.provisioned, state.bundle_version), (true, Some(1)));
    let att: Value =
        http.get(format!("http://127.0.0.1:{relay_port}/tee/attestation")).send().await.unwrap().json().await.unwrap();
    assert_eq!(att["provisioning"]["provisioned"], true, "{att}");
    assert_eq!(att["provisioning"]["provisionerKey"], e2e::provisioner_public());
    drop(guard);
}

/// The image's test variant lists the test suite's provisioner (and the published one none).
#[test]
fn the_test_variant_lists_the_test_provisioner() {
    assert_eq!(e2e::IMAGE_TEST_PROVISIONER, e2e::provisioner_public());
    let published: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../image/enclave.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(published["provisioners"], serde_json::json!([]), "the published image lists no provisioner");
    let script = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../image/build.sh")).unwrap();
    assert!(script.contains(&format!("TEST_PROVISIONER={}", e2e::IMAGE_TEST_PROVISIONER)));
}

fn read(path: &std::path::Path) -> String {
    let mut s = String::new();
    if let Ok(mut f) = std::fs::File::open(path) {
        let _ = f.read_to_string(&mut s);
    }
    s
}

struct KillOnDrop<'a>(&'a mut std::process::Child);

impl Drop for KillOnDrop<'_> {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The committed `measurements/measurements.json` must equal what the current source builds
/// (`make measurements` refreshes it).
#[test]
fn published_measurements_match_the_built_image() {
    let Ok(dir) = std::env::var("SVC_IMAGE_DIR") else {
        eprintln!("SVC_IMAGE_DIR not set: published-measurements check not run (make test runs it)");
        return;
    };
    let built = std::fs::read_to_string(std::path::Path::new(&dir).join("measurements.json")).unwrap();
    let published =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/measurements.json")).unwrap();
    let built = shared::attest::Measurements::from_json(&built).unwrap();
    let published = shared::attest::Measurements::from_json(&published).unwrap();
    assert_eq!(
        published.images, built.images,
        "measurements/measurements.json is stale: run `make measurements` and commit it"
    );
    assert!(!published.images.is_empty());
}
