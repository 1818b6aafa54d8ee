//! The enclave reads in an afternoon (issue 29): its README lists every source file in reading
//! order with its line count, and no file is much over 300 lines.

use std::path::{Path, PathBuf};

/// Most lines one file may have ("about 300"); unit tests live apart, in `tests.rs` files.
const MAX_FILE_LINES: usize = 320;

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("tests.rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_readme_lists_every_file_with_its_current_length() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    assert!(files.len() > 30, "{files:?}");
    let mut too_long = Vec::new();
    for file in &files {
        let name = file.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        let lines = std::fs::read_to_string(file).unwrap().lines().count();
        let entry = format!("- `{name}` ({lines})");
        assert!(
            readme.contains(&entry),
            "README.md's reading order lacks `{entry}` (a new file, or its count changed)"
        );
        if lines > MAX_FILE_LINES {
            too_long.push(format!("{name}: {lines}"));
        }
    }
    let listed = readme.lines().filter(|l| l.starts_with("- `src/")).count();
    assert_eq!(listed, files.len(), "README.md lists a file that is gone");
    assert!(too_long.is_empty(), "files over {MAX_FILE_LINES} lines: {too_long:?}");
}
