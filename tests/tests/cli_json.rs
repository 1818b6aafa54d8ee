//! `svc --json` (issue 18, operations): every command prints one JSON document on stdout with
//! the fields docs/cli-json.md lists (a failure `{error, exitCode}`), and `keyholder --json`
//! writes JSON log lines. `svc measure --json` is checked against its own text output, the
//! measurements file and the library, on the pinned firmware and kernel.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use e2e::{Process, Stack, StackOptions, binary};
use serde_json::{Value, json};
use standins::openai::{self, Turn};

/// Runs `svc` with `args`; its exit code, stdout parsed as JSON, and stderr.
fn run(args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(binary("svc")).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("svc {args:?}: stdout is not one JSON document ({e}):\n{stdout}\n{stderr}"));
    (out.status.code().unwrap_or(-1), value, stderr)
}

fn is_hex(v: &Value, len: usize) -> bool {
    v.as_str().is_some_and(|s| s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()))
}

/// The pinned inputs the image is built from (image/lib.sh's default place).
fn image_inputs() -> PathBuf {
    std::env::var("IMAGE_INPUTS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/image-inputs"))
}

/// One file out of a pinned .deb.
fn from_deb(deb: &str, member: &str, to: &Path) {
    let tar = Command::new("dpkg-deb").arg("--fsys-tarfile").arg(image_inputs().join(deb)).output().unwrap();
    assert!(tar.status.success(), "dpkg-deb --fsys-tarfile {deb}");
    let dir = tempfile::tempdir().unwrap();
    let tar_path = dir.path().join("data.tar");
    std::fs::write(&tar_path, tar.stdout).unwrap();
    let ok = Command::new("tar").arg("-xf").arg(&tar_path).arg("-C").arg(dir.path()).arg(member).status().unwrap();
    assert!(ok.success(), "{member} from {deb}");
    std::fs::copy(dir.path().join(member), to).unwrap();
}

/// An image folder from the pinned firmware and kernel, a small initrd and the real cmdline.
fn image_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    from_deb("ovmf_2025.02-8+deb13u1_all.deb", "./usr/share/ovmf/OVMF.fd", &dir.path().join("OVMF.fd"));
    from_deb(
        "linux-image-6.12.107+deb13-cloud-amd64-unsigned_6.12.107-1_amd64.deb",
        "./boot/vmlinuz-6.12.107+deb13-cloud-amd64",
        &dir.path().join("vmlinuz"),
    );
    std::fs::write(dir.path().join("initrd.cpio"), b"070701 not a real initramfs, measured as bytes").unwrap();
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("../image/cmdline"), dir.path().join("cmdline")).unwrap();
    dir
}

#[test]
fn measure_json_agrees_with_the_text_the_measurements_file_and_the_library() {
    let dir = image_dir();
    let path = dir.path().to_str().unwrap();
    let (code, doc, _) = run(&["measure", path, "--json"]);
    assert_eq!(code, 0, "{doc}");
    for (field, len) in
        [("/mrtd/singlePass", 96), ("/mrtd/twoPass", 96), ("/rtmr1", 96), ("/rtmr2", 96), ("/imageId", 64)]
    {
        assert!(is_hex(doc.pointer(field).unwrap_or(&Value::Null), len), "{field}: {doc}");
    }
    assert_eq!(doc["rtmr0"], Value::Null, "no host profile given");
    assert!(doc.get("sections").is_none(), "sections only with --diagnose");

    // The library, on the same bytes.
    let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap();
    let cmdline = String::from_utf8(read("cmdline")).unwrap();
    let cmdline = cmdline.trim_end_matches('\n');
    let m = shared::measure::measure_image(&read("OVMF.fd"), &read("vmlinuz"), &read("initrd.cpio"), cmdline).unwrap();
    assert_eq!(doc["mrtd"]["singlePass"], hex::encode(m.mrtd_single_pass));
    assert_eq!(doc["mrtd"]["twoPass"], hex::encode(m.mrtd_two_pass));
    assert_eq!(doc["rtmr1"], hex::encode(m.rtmr1));
    assert_eq!(doc["rtmr2"], hex::encode(m.rtmr2));
    assert_eq!(doc["imageId"], hex::encode(m.image_id));
    assert_eq!(doc["cmdline"], cmdline);
    assert_eq!(doc["loadOptions"], shared::measure::load_options(cmdline));

    // The text summary names the same values.
    let text = Command::new(binary("svc")).args(["measure", path]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    let word = |prefix: &str, n: usize| {
        text.lines()
            .filter(|l| l.starts_with(prefix))
            .nth(n)
            .and_then(|l| l.split_whitespace().nth(1))
            .unwrap()
            .to_string()
    };
    assert_eq!(doc["mrtd"]["singlePass"], word("MRTD ", 0));
    assert_eq!(doc["mrtd"]["twoPass"], word("MRTD ", 1));
    assert_eq!(doc["rtmr2"], word("RTMR2 ", 0));
    assert_eq!(doc["imageId"], word("image_id ", 0));

    // `--measurements-json` wins over `--json` and carries the same registers.
    let (code, file, _) = run(&["--json", "measure", path, "--measurements-json"]);
    assert_eq!(code, 0);
    assert_eq!(file["schemaVersion"], 1, "{file}");
    assert_eq!(file["images"][0]["mrtd"], doc["mrtd"]["singlePass"]);
    assert_eq!(file["images"][1]["mrtd"], doc["mrtd"]["twoPass"]);

    // --diagnose adds every section and event.
    let (_, diag, _) = run(&["--json", "measure", path, "--diagnose"]);
    let sections = diag["sections"].as_array().unwrap();
    assert!(sections.iter().any(|s| s["kind"] == "Bfv" && s["extends"] == true), "{diag}");
    for rtmr in ["rtmr1", "rtmr2"] {
        let events = diag["events"][rtmr].as_array().unwrap();
        assert!(!events.is_empty() && events.iter().all(|e| is_hex(&e["digest"], 96) && e["description"].is_string()));
    }

    // A failure is JSON too.
    let (code, error, stderr) = run(&["measure", "/nonexistent/image", "--json"]);
    assert_eq!((code, error["exitCode"].as_i64()), (30, Some(30)), "{error}");
    assert!(error["error"].as_str().is_some_and(|e| e.contains("/nonexistent/image")), "{error}");
    assert!(stderr.starts_with("svc: "), "{stderr}");
}

fn has_age() -> bool {
    Command::new("age").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// `secrets` encrypted with the real `age` CLI to a new identity: (secrets file, identity file).
fn age_encrypt(dir: &Path, secrets: &Value) -> (PathBuf, PathBuf) {
    let identity = dir.join("holder.identity");
    assert!(Command::new("age-keygen").arg("-o").arg(&identity).output().unwrap().status.success());
    let recipient = Command::new("age-keygen").arg("-y").arg(&identity).output().unwrap();
    let recipient = String::from_utf8(recipient.stdout).unwrap().trim().to_string();
    let plain = dir.join("secrets.json");
    std::fs::write(&plain, secrets.to_string()).unwrap();
    let sealed = dir.join("secrets.age");
    let out = Command::new("age").args(["-r", &recipient, "-o"]).arg(&sealed).arg(&plain).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::remove_file(&plain).unwrap();
    (sealed, identity)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_command_prints_json_and_the_key_holder_logs_json_lines() {
    if !has_age() {
        eprintln!("the `age` CLI is not installed: svc --json test not run (tools/test.sh installs it)");
        return;
    }
    let (model, _seen) = openai::start(vec![Turn::text("json answer")]).await;
    let options = StackOptions {
        model_base_url: Some(format!("{}/v1", model.base_url)),
        provision: false,
        ..StackOptions::default()
    };
    let stack = tokio::task::spawn_blocking(move || Stack::start_with(options)).await.unwrap();
    let dir = stack.dir.path().to_path_buf();
    let measurements = Path::new(env!("CARGO_MANIFEST_DIR")).join("../measurements/dev.json");
    let root = stack.dev_root_pem_path();
    let common: Vec<String> = vec![
        "--relay".into(),
        stack.relay_url.clone(),
        "--measurements".into(),
        measurements.to_string_lossy().into(),
        "--dev-root".into(),
        root.to_string_lossy().into(),
        "--api-key".into(),
        stack.api_key.clone(),
    ];
    let svc = |args: &[&str]| {
        let all: Vec<&str> = common.iter().map(String::as_str).chain(args.iter().copied()).collect();
        run(&all)
    };

    // provisioner-key: the public key and the file.
    let key_file = dir.join("provisioner.key");
    let (code, out, _) = svc(&["provisioner-key", key_file.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["file"], key_file.to_str().unwrap());
    assert_eq!(shared::address::Address::parse(out["publicKey"].as_str().unwrap()).map(|a| a.0.len()), Some(32));

    // keyholder --json: JSON log lines on stderr, one of them the release. It releases only to
    // the provisioner key the enclave lists, the test one.
    let test_key = dir.join("test-provisioner.key");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(&test_key, hex::encode(e2e::provisioner().to_bytes())).unwrap();
        std::fs::set_permissions(&test_key, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let secrets = json!({"version": 1, "kek": shared::b64::encode([9u8; 32]), "previousKeks": [], "credentials": {}});
    let (sealed, identity) = age_encrypt(&dir, &secrets);
    // The key holder never releases to an unattested enclave, and takes a development root only
    // on its own command line: one left in SVC_DEV_ROOT from development is refused (exit 30)
    // before any secret is read.
    let holder_files = |c: &mut Command| {
        c.arg("--secrets").arg(&sealed).arg("--identity").arg(&identity).arg("--provisioner-key").arg(&test_key);
    };
    let without_root: Vec<&String> =
        common.iter().filter(|a| **a != "--dev-root" && **a != root.to_string_lossy()).collect();
    let mut from_env = Command::new(binary("svc"));
    from_env.args(&without_root).args(["--json", "keyholder"]).env("SVC_DEV_ROOT", &root);
    holder_files(&mut from_env);
    let mut unattested = Command::new(binary("svc"));
    unattested.args(&common).args(["--json", "--allow-unattested", "provision"]);
    holder_files(&mut unattested);
    for (mut refused, says) in [(from_env, "not from SVC_DEV_ROOT"), (unattested, "--allow-unattested is refused")] {
        let out = refused.output().unwrap();
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!((out.status.code(), answer["exitCode"].as_i64()), (Some(30), Some(30)), "{answer}");
        assert!(answer["error"].as_str().unwrap().contains(says), "{answer}");
    }

    let mut command = Command::new(binary("svc"));
    command.args(&common).args(["keyholder", "--json", "--interval", "1", "--secrets"]).arg(&sealed);
    command.arg("--identity").arg(&identity).arg("--provisioner-key").arg(&test_key);
    let mut holder = Process::spawn_command(&mut command, dir.join("keyholder.log"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !holder.log_text().contains("released the secrets bundle") {
        assert!(Instant::now() < deadline, "no release logged:\n{}", holder.log_text());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    holder.stop();
    let lines: Vec<Value> = holder
        .log_text()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l:?}")))
        .collect();
    let release = lines.iter().find(|l| l["message"] == "released the secrets bundle").unwrap();
    assert_eq!((release["level"].as_str(), release["version"].as_u64()), (Some("INFO"), Some(1)), "{release}");
    assert!(is_hex(&release["key_id"], 64) && release["timestamp"].is_string(), "{release}");

    // key: the enclave's public key.
    let (code, key, _) = svc(&["key", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(key["algorithm"], "x25519");
    assert!(is_hex(&key["publicKeySha256"], 64), "{key}");

    // attest: the verification document, provisioned now.
    let (code, report, _) = svc(&["attest", "--json"]);
    assert_eq!((code, report["verdict"].as_str()), (0, Some("accept")), "{report}");
    assert_eq!(report["provisioning"]["bundleVersion"], 1, "{report}");

    // chat, with the flag before the command (it is global).
    let (code, chat, _) = svc(&["--json", "chat", "hello"]);
    assert_eq!(code, 0, "{chat}");
    assert_eq!(chat["reply"], "json answer");
    let address = chat["onchainAttestation"]["address"].as_str().unwrap().to_string();
    assert!(chat["log"]["leafIndex"].is_u64(), "{chat}");

    // receipt --proof: the receipt, its ledger status and the log check, in one document.
    let (code, receipt, _) = svc(&["receipt", &address, "--proof", "--json"]);
    assert_eq!(code, 0, "{receipt}");
    assert_eq!(receipt["receipt"]["address"], address.as_str());
    assert_eq!(receipt["ledger"]["address"], address.as_str());
    assert_eq!(receipt["log"]["leafIndex"], chat["log"]["leafIndex"], "{receipt}");
    assert_eq!(receipt["chain"], Value::Null, "no --rpc");
    let (code, plain, _) = svc(&["receipt", &address]);
    assert_eq!((code, &plain["address"]), (0, &json!(address)), "without --json the receipt alone, as before");

    // Failures of relay calls are JSON too.
    let (code, error, _) = svc(&["deposit", "--json"]);
    assert_eq!(code, 1, "{error}");
    assert_eq!(error["exitCode"], 1);
    assert!(error["error"].is_string(), "{error}");
    let (code, error, _) = svc(&["swap", "status", "0000", "--json"]);
    assert_eq!((code, error["exitCode"].as_i64()), (1, Some(1)), "{error}");
}
