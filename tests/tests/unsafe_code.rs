//! `unsafe` is denied workspace-wide; the only place allowed to opt out is the enclave's one
//! commented module of boot syscalls.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() && !matches!(name.as_str(), "target" | "node_modules" | ".git" | ".cache" | "out") {
            rust_files(&path, out);
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

#[test]
fn only_the_boot_module_allows_unsafe_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("[workspace.lints.rust]\nunsafe_code = \"deny\""), "the workspace denies unsafe code");
    let mut files = Vec::new();
    rust_files(root, &mut files);
    assert!(files.len() > 50, "found the sources");
    let mut allowing: Vec<String> = files
        .iter()
        .filter(|f| std::fs::read_to_string(f).unwrap().contains("allow(unsafe_code)"))
        .map(|f| f.strip_prefix(root).unwrap().display().to_string())
        .collect();
    allowing.sort();
    // This file names the attribute too.
    assert_eq!(allowing, ["enclave/src/platform/boot.rs", "tests/tests/unsafe_code.rs"]);
}
