//! `swap-sandbox KEYPAIR_FILE [FEE_PAYER_FILE]`: the local world `make run` uses. Starts the local chain
//! (Surfpool, `tests/chain`), makes two mints with real transactions (a 6-decimal stablecoin
//! and a 9-decimal token), a pool holding both behind the router stand-in (the Jupiter Swap API
//! v1 wire, moving real tokens), and a demo payer with 10 SOL, 1,000 of the stablecoin and 10
//! of the token,
//! whose keypair it reads from KEYPAIR_FILE (Solana CLI format), or makes and writes there, so
//! a second `make run` keeps the owner of the first one's wallets. With FEE_PAYER_FILE, also the
//! x402 side: a fee payer with 10 SOL for the relay's built-in facilitator (its keypair written
//! there) and a pay-to wallet with a stablecoin account. Prints one JSON line
//! `{rpcUrl, routerUrl, usdc, token, payer, feePayer?, payTo?}` and serves until it is stopped (SIGINT or
//! SIGTERM) or its parent exits. Development only: never part of the service.

use e2e::chain::{LocalChain, address_of, new_key};

const SOL: u64 = 1_000_000_000;

#[tokio::main]
async fn main() {
    let Some(keypair_file) = std::env::args().nth(1) else {
        eprintln!("usage: swap-sandbox KEYPAIR_FILE");
        std::process::exit(2);
    };
    // 5 ms slots: a blockhash lives about a minute, long enough to paste a command.
    let chain = LocalChain::start_with(&["--slot-time-ms", "5"]);
    let (usdc, token) = (chain.create_mint(6).await, chain.create_mint(9).await);
    let pool = chain.create_pool(&[(usdc, 1_000_000 * 1_000_000), (token, 5_000 * SOL)], SOL).await;
    let (server, _router) = standins::router::start(&chain.rpc_url, pool).await;
    let payer = client::swap::read_keypair(std::path::Path::new(&keypair_file)).unwrap_or_else(|_| new_key());
    let address = address_of(&payer);
    chain.fund_sol(&address, 10 * SOL);
    chain.mint_to(&usdc, &address, 1_000 * 1_000_000).await;
    chain.mint_to(&token, &address, 10 * SOL).await;
    let mut bytes = payer.to_bytes().to_vec();
    bytes.extend_from_slice(&address.0);
    write_private(&keypair_file, &serde_json::to_string(&bytes).expect("bytes serialise"));
    let mut ready = serde_json::json!({
        "rpcUrl": chain.rpc_url, "routerUrl": server.base_url,
        "usdc": usdc.to_string(), "token": token.to_string(), "payer": address.to_string(),
    });
    if let Some(fee_payer_file) = std::env::args().nth(2) {
        let fee_payer = new_key();
        chain.fund_sol(&address_of(&fee_payer), 10 * SOL);
        let mut bytes = fee_payer.to_bytes().to_vec();
        bytes.extend_from_slice(&address_of(&fee_payer).0);
        write_private(&fee_payer_file, &serde_json::to_string(&bytes).expect("bytes serialise"));
        let pay_to = address_of(&new_key());
        chain.create_token_account(&pay_to, &usdc).await;
        ready["feePayer"] = address_of(&fee_payer).to_string().into();
        ready["payTo"] = pay_to.to_string().into();
    }
    println!("{ready}");
    // Serve until a signal stops the process or the parent that started it exits.
    let parent = std::os::unix::process::parent_id();
    let orphaned = async move {
        while std::os::unix::process::parent_id() == parent {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        }
    };
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = orphaned => {}
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    drop(server);
    drop(chain);
}

fn write_private(path: &str, text: &str) {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    file.write_all(text.as_bytes()).unwrap_or_else(|e| panic!("{path}: {e}"));
}
