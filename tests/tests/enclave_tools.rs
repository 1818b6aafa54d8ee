//! The enclave contains exactly the five tools of encrypted mode: the other thirteen, their
//! fetcher and BRAID live in `relay/tools`, outside the enclave's dependency graph, so no
//! configuration or prompt can reach them. Checked on the built image's initramfs (whose
//! `/init` is the enclave), on the development binary, and on the dependency graph itself.
//!
//! The image check needs `image/out` (make image); `make test` sets `SVC_IMAGE_DIR`.

use agent::tools::PRIVATE_TOOL_NAMES;
use relay_tools::ALL_TOOL_NAMES;

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
    assert_five_tools(&initrd, "the enclave image");
}

/// Development builds share one cargo invocation with the relay; the split into crates (not
/// features) keeps the thirteen out of this binary too.
#[test]
fn the_development_enclave_has_exactly_the_five_private_tools() {
    let binary = std::fs::read(e2e::binary("enclave")).unwrap();
    assert_five_tools(&binary, "the development enclave");
}

/// The tool names are string literals of each tool's `name()`: present iff compiled in.
fn assert_five_tools(bytes: &[u8], what: &str) {
    for name in PRIVATE_TOOL_NAMES {
        assert!(contains(bytes, name.as_bytes()), "`{name}` is missing from {what}");
    }
    let absent: Vec<&str> = ALL_TOOL_NAMES.iter().copied().filter(|n| !PRIVATE_TOOL_NAMES.contains(n)).collect();
    assert_eq!(absent.len(), 13);
    for name in absent {
        assert!(!contains(bytes, name.as_bytes()), "`{name}` is compiled into {what}");
    }
}

/// The enclave's own dependency graph (image features: none) holds no relay-only tools, no
/// development PKIs, no storage and no client code. It does hold dcap-qvl (and its p256), for
/// one reason: a GPU node's quote is checked before the node sees a prompt (issue 28), with the
/// same verifier the clients use.
#[test]
fn the_enclave_depends_on_nothing_of_the_relay_or_the_tests() {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["tree", "--offline", "--locked", "-p", "enclave", "-e", "normal", "--prefix", "none", "--format", "{p}"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let tree = String::from_utf8(out.stdout).unwrap();
    let crates: Vec<&str> = tree.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert!(crates.contains(&"agent") && crates.contains(&"shared"), "{tree}");
    for forbidden in
        ["relay-tools", "relay", "web-bundle", "dev-quote", "dev-gpu", "rcgen", "sqlx", "standins", "client"]
    {
        assert!(!crates.contains(&forbidden), "`{forbidden}` is in the enclave's dependency graph");
    }
}

#[test]
fn the_enclave_offers_the_five_in_contract_order() {
    let set = agent::toolset::ToolSet::private(&agent::tools::ToolsConfig::default(), None);
    assert_eq!(set.names(), PRIVATE_TOOL_NAMES);
    assert_eq!(PRIVATE_TOOL_NAMES, ["web_search", "token_price", "trending_tokens", "swap_quote", "solana_balance"]);
}

/// Most lines of our code the image's enclave may compile; docs/decisions.md records the count
/// and each raise with its reason. Every line here is code an auditor reads.
/// - 3,500: chat, encrypted agent, quotes, keys (issue 10: 3,464 when it was set);
/// - +600: custody, the provisioning channel and sealed objects (DESIGN §10);
/// - +2,400: swap session keys (DESIGN §11): the Solana codec to build and check what they
///   sign, the chain's RPC reader, the router's wire, the session rules (issue 12: 6,395);
/// - +1,000: managed wallets' pool (DESIGN §11, issue 13): wallet and pool keys, the sealed
///   books, owner signatures, solvency against the chain, payouts and their replacement
///   (issue 13: 7,499);
/// - +250: managed swaps and shields (DESIGN §11, issue 13): the wallet's funding of a swap
///   session under its owner's signature, a shield's intermediate key and its four legs, and
///   the drop of a book the relay never stored (issue 13: 7,741, after trimming the chain's
///   send path and the signed documents' verification, which only clients need);
/// - +550: funds against the host (DESIGN §13, issue 24): the pool split into a pure book core,
///   its lineage and an I/O shell; the witness's signed messages; per-mint locks; owner nonces
///   as idempotency keys; wallet certificates and signed balances; the chain view's checks
///   (issue 24: 8,292);
/// - +120: bounded books (DESIGN §13, issue 24): the book's fixed-width encoding, the credit
///   horizon, per-mint minimums, credits read at `finalized`, the one-shot floor from the
///   enclave's own quote, a managed session's SOL returned to the pool (issue 24: 8,403);
/// - +510: Jupiter routes (issue 27): the Swap API v2 `/build` client, the v0 compiler with
///   lookup tables that keeps checked keys static, the route instruction's fixed-offset
///   decoder, and the rule set with a named refusal per rule (issue 27: 8,926);
/// - +1,770: GPU nodes prove themselves before they see a prompt (issue 28): the clients' quote
///   verifier (`shared::attest`, 679) for the node's quote, NVIDIA GPU evidence (`shared::gpu`,
///   633), the node binding (128), the enclave's gate (114), the served-by statement (69) and
///   the wiring (issue 28: 10,686);
/// - +5: the DCAP step of the quote verifier as a hook, so that clients remember the platforms
///   they verified (`remember-platforms`, never compiled in here) (issue 30: 10,701);
/// - +120: the GPU report's opaque data parsed in full (`shared/src/gpu/opaque.rs`): what tells
///   an NVSwitch's report from a GPU's (type 26), the protected-PCIe fields and the PDIs. The
///   switch and topology checks themselves are behind `gpu-ppcie`, off here until GPU nodes
///   are asked for them (issue 28: 10,820);
/// - +55: the enclave in folders at the trust line, no file much over 300 lines (issue 29): the
///   new files' own imports and `impl` headers, the one body extractor and the error as a
///   response, less the dead `Verdict::exit_code` and a second copy of the pool's `sealed()`;
///   no new behaviour (issue 29: 10,872);
/// - +10: the enclave's error codes as one enum the relay parses (`EnclaveCode`): the list moved
///   from the relay's side into the type the enclave's error mapping names, plus the few lines
///   that give each variant its string and back (issue 29: 10,883);
/// - +15: the pool reads its payouts' statuses before its balance, and reads a book that looks
///   short while payouts are open again before refusing a step (`reconcile`); `Address` reads
///   and writes base58 in JSON, so the book's addresses are typed (four re-parses fewer)
///   (issue 29: 10,902); a swap step's answer as one variant per step (issue 29: 10,896);
/// - +15: amounts typed (`shared/src/amount.rs`: the contract's decimal strings read and written
///   in one place), so the pool's answers, the withdrawal order and the balance and reserves
///   statements hold typed addresses and amounts; the chain's and the router's errors keep
///   their types in the swap errors (issue 29: 10,917).
const MAX_ENCLAVE_LINES: usize =
    3_500 + 600 + 2_400 + 1_000 + 250 + 550 + 120 + 510 + 1_770 + 5 + 120 + 55 + 10 + 15 + 15;

/// Counts the lines of our code compiled into the image's enclave: every workspace source file
/// the image build's dep-info for the binary names, without blank lines, comments and test
/// modules.
#[test]
fn the_enclave_is_small() {
    let Ok(dir) = std::env::var("SVC_IMAGE_DIR") else {
        eprintln!("SVC_IMAGE_DIR not set: enclave size not counted (make test counts it)");
        return;
    };
    // Cargo's dep-info of the final binary names every source file compiled into it.
    let dep_info = std::path::Path::new(&dir).join(".target/x86_64-unknown-linux-musl/release/enclave.d");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().canonicalize().unwrap();
    let text = std::fs::read_to_string(&dep_info).unwrap();
    let (_, sources) = text.split_once(": ").unwrap();
    let files: std::collections::BTreeSet<std::path::PathBuf> = sources
        .split_whitespace()
        .map(std::path::PathBuf::from)
        .filter(|f| {
            f.extension().is_some_and(|e| e == "rs") && f.starts_with(&root) && !f.starts_with(root.join("image"))
        })
        .collect();
    let crates: std::collections::BTreeSet<String> = files
        .iter()
        .map(|f| f.strip_prefix(&root).unwrap().components().next().unwrap().as_os_str().to_string_lossy().into())
        .collect();
    assert_eq!(crates, ["agent", "enclave", "shared"].map(String::from).into(), "{files:?}");
    let lines: usize = files.iter().map(|f| code_lines(&std::fs::read_to_string(f).unwrap())).sum();
    eprintln!("our code compiled into the enclave: {lines} lines in {} files", files.len());
    assert!(lines <= MAX_ENCLAVE_LINES, "the enclave grew to {lines} lines of our code (budget {MAX_ENCLAVE_LINES})");
}

/// Features the image's enclave does not enable: items gated by them are not compiled in.
const OFF_FEATURES: [&str; 9] =
    ["sender", "ledger", "measure", "dev-quotes", "swap-client", "send", "remember-platforms", "gpu-ppcie", "mcp-args"];

/// Lines that are not blank and not comments, without items gated by a feature the image does
/// not enable, and up to a test module (`#[cfg(test)] mod … {`, which comes last in our files;
/// `mod tests;` files are not in a release build at all).
fn code_lines(source: &str) -> usize {
    let lines: Vec<&str> = source.lines().map(str::trim).collect();
    let mut n = 0;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let next = lines.get(i + 1).copied().unwrap_or_default();
        if line.starts_with("#[cfg(") && line.contains("test") && next.starts_with("mod ") && next.ends_with('{') {
            break;
        }
        if OFF_FEATURES.iter().any(|f| line == format!("#[cfg(feature = \"{f}\")]")) {
            i = skip_item(&lines, i + 1);
            continue;
        }
        if !line.is_empty() && !line.starts_with("//") {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The index after the item starting at `start` (its attributes and doc lines, then its body
/// to the balancing brace, or the line ending with `;`).
fn skip_item(lines: &[&str], start: usize) -> usize {
    let mut depth = 0i32;
    for (i, line) in lines.iter().enumerate().skip(start) {
        if line.starts_with("//") || line.starts_with("#[") {
            continue;
        }
        depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
        if depth <= 0 && (line.ends_with('}') || line.ends_with("};") || line.ends_with(';')) {
            return i + 1;
        }
    }
    lines.len()
}
