//! The enclave image contains exactly the five tools of encrypted mode: the other thirteen
//! are not compiled into its binary at all (cargo features), so no configuration or prompt
//! can reach them. Checked on the built image's initramfs, whose `/init` is the enclave.
//!
//! Needs `image/out` (make image); `make test` sets `SVC_IMAGE_DIR`.

use agent::tools::{ALL_TOOL_NAMES, PRIVATE_TOOL_NAMES};

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn the_image_enclave_has_exactly_the_five_private_tools() {
    let Ok(dir) = std::env::var("SVC_IMAGE_DIR") else {
        eprintln!("SVC_IMAGE_DIR not set: enclave tool check not run (make test runs it)");
        return;
    };
    let initrd = std::fs::read(std::path::Path::new(&dir).join("initrd.cpio")).unwrap();
    // The tool names are string literals of each tool's `name()`: present iff compiled in.
    for name in PRIVATE_TOOL_NAMES {
        assert!(contains(&initrd, name.as_bytes()), "`{name}` is missing from the enclave image");
    }
    let absent: Vec<&str> = ALL_TOOL_NAMES.iter().copied().filter(|n| !PRIVATE_TOOL_NAMES.contains(n)).collect();
    assert_eq!(absent.len(), 13);
    for name in absent {
        assert!(!contains(&initrd, name.as_bytes()), "`{name}` is compiled into the enclave image");
    }
}

#[test]
fn the_enclave_offers_the_five_in_contract_order() {
    let set = agent::toolset::ToolSet::private(&agent::tools::ToolsConfig::default());
    assert_eq!(set.names(), PRIVATE_TOOL_NAMES);
    assert_eq!(PRIVATE_TOOL_NAMES, ["web_search", "token_price", "trending_tokens", "swap_quote", "solana_balance"]);
}
