//! `tools/launch-td.sh`, which `svc-enclave-host.service` runs: it boots exactly what the
//! image's own `launch.sh` boots (the same QEMU arguments, so the same RTMR0 host profile),
//! changes only what its options name, and refuses a tampered image, an image whose
//! measurements are not the published ones, odd option values, and a host without TDX.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// An image folder as `image/build.sh` lays it out (stand-in bytes for the big files), with
/// `launch.sh` written from `image/launch.sh.in` the way the build writes it.
fn image(dir: &Path) -> PathBuf {
    let image = dir.join("image");
    std::fs::create_dir(&image).unwrap();
    for (name, bytes) in [("OVMF.fd", &b"firmware"[..]), ("vmlinuz", b"kernel"), ("initrd.cpio", b"initrd")] {
        std::fs::write(image.join(name), bytes).unwrap();
    }
    let cmdline = std::fs::read_to_string(repo().join("image/cmdline")).unwrap();
    std::fs::write(image.join("cmdline"), &cmdline).unwrap();
    std::fs::write(image.join("measurements.json"), "{\"schemaVersion\": 1}\n").unwrap();
    let template = std::fs::read_to_string(repo().join("image/launch.sh.in")).unwrap();
    // build.sh: sed "s|@CMDLINE@|$(cat image/cmdline)|" (the shell drops the final newline).
    std::fs::write(image.join("launch.sh"), template.replace("@CMDLINE@", cmdline.trim_end_matches('\n'))).unwrap();
    let files = ["OVMF.fd", "vmlinuz", "initrd.cpio", "cmdline", "launch.sh", "measurements.json"];
    let sums = Command::new("sha256sum").args(files).current_dir(&image).output().unwrap();
    assert!(sums.status.success());
    std::fs::write(image.join("SHA256SUMS"), sums.stdout).unwrap();
    image
}

/// A `qemu-system-x86_64` that prints its name and arguments, one per line, and exits.
fn stub_qemu(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let qemu = bin.join("qemu-system-x86_64");
    std::fs::write(&qemu, "#!/bin/sh\nprintf '%s\\n' qemu-system-x86_64 \"$@\"\n").unwrap();
    std::fs::set_permissions(&qemu, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

fn path_with(bin: &Path) -> String {
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

fn launch_td(bin: &Path, args: &[&str]) -> Output {
    Command::new(repo().join("tools/launch-td.sh"))
        .args(args)
        .env("PATH", path_with(bin))
        .env_remove("SVC_IMAGE_DIR")
        .env_remove("SVC_EXPECT_MEASUREMENTS")
        .output()
        .unwrap()
}

fn lines(out: &Output) -> Vec<String> {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect()
}

fn refused(out: &Output, why: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "not refused: {}", String::from_utf8_lossy(&out.stdout));
    assert!(stderr.contains(why), "{stderr}");
    assert!(out.stdout.is_empty(), "QEMU ran: {}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn launches_what_the_image_launches_and_refuses_what_it_should() {
    let dir = tempfile::tempdir().unwrap();
    let image = image(dir.path());
    let bin = stub_qemu(dir.path());
    let path = image.to_str().unwrap();

    // The image's own launch.sh, run with the stub, against the script's command.
    let own = Command::new("sh").arg(image.join("launch.sh")).env("PATH", path_with(&bin)).output().unwrap();
    let own = lines(&own);
    assert!(own.len() > 20 && own.iter().any(|a| a.contains("tdx-guest")), "{own:?}");
    let ours = lines(&launch_td(&bin, &["--image", path, "--dry-run"]));
    assert_eq!(ours, own, "launch-td.sh must boot with the image's own arguments");

    // Options change only their own arguments.
    let changed = lines(&launch_td(
        &bin,
        &["--image", path, "--dry-run", "--memory", "8G", "--cpus", "4", "--port", "7071", "--qgs-port", "4051"],
    ));
    let expected: Vec<String> = own
        .iter()
        .map(|a| match a.as_str() {
            "4G" => "8G".to_string(),
            "2" => "4".to_string(),
            a => a.replace("\"port\":\"4050\"", "\"port\":\"4051\"").replace("127.0.0.1:7070-", "127.0.0.1:7071-"),
        })
        .collect();
    assert_eq!(changed, expected);
    assert_ne!(changed, own);

    // The published measurements: the same file passes, another is refused.
    let published = dir.path().join("published.json");
    std::fs::copy(image.join("measurements.json"), &published).unwrap();
    let same = launch_td(&bin, &["--image", path, "--dry-run", "--expect-measurements", published.to_str().unwrap()]);
    assert_eq!(lines(&same), own);
    std::fs::write(&published, "{\"schemaVersion\": 1, \"images\": []}\n").unwrap();
    let other = launch_td(&bin, &["--image", path, "--dry-run", "--expect-measurements", published.to_str().unwrap()]);
    refused(&other, "not the published image");

    // Values that would smuggle arguments in, and unknown options.
    refused(&launch_td(&bin, &["--image", path, "--dry-run", "--memory", "4G -device x"]), "--memory");
    refused(&launch_td(&bin, &["--image", path, "--dry-run", "--port", "70000"]), "--port");
    refused(&launch_td(&bin, &["--image", path, "--dry-run", "--bios", "x"]), "unknown argument");
    refused(&launch_td(&bin, &["--dry-run"]), "--image");

    // A host without KVM or TDX (this one): refused before QEMU starts.
    let host = launch_td(&bin, &["--image", path]);
    assert!(!host.status.success() && host.stdout.is_empty(), "{host:?}");

    // A file changed after the build: refused, even for a dry run.
    std::fs::write(image.join("initrd.cpio"), b"initrd, changed").unwrap();
    refused(&launch_td(&bin, &["--image", path, "--dry-run"]), "differs from SHA256SUMS");
}
