//! A world for swap tests: the local chain with two mints (a 6-decimal stablecoin and a
//! 9-decimal token), the router stand-in with a pool of both, and a stack whose relay and
//! enclave are configured for them. Payers are real keys funded on that chain.

use std::path::PathBuf;

use chain::{Chain, RpcChain};
use ed25519_dalek::SigningKey;
use serde_json::{Value, json};
use shared::address::Address;
use shared::solana::programs::{ADDRESS_LOOKUP_TABLE_PROGRAM, JUPITER_PROGRAM};
use shared::swap::funding::token_account;

use crate::chain::{LocalChain, address_of, new_key};
use crate::{Stack, StackOptions};

pub const SOL: u64 = 1_000_000_000;
/// Pool reserves: a million stablecoins, five thousand tokens.
pub const POOL_USDC: u64 = 1_000_000 * 1_000_000;
pub const POOL_TOKEN: u64 = 5_000 * SOL;
/// Denominations of the stablecoin: 1, 10 and 100.
pub const USDC_BUCKETS: [u64; 3] = [1_000_000, 10_000_000, 100_000_000];
/// The shared-accounts id of the route program's pool in a [`SwapWorld::start_jupiter`] world.
pub const ROUTE_ID: u8 = 8;

/// An address lookup table account's data: the 56-byte header (`LookupTable`, never
/// deactivated, extended at slot 0, no authority) and the addresses (notes/jupiter.md §3).
pub fn lookup_table_data(addresses: &[Address]) -> Vec<u8> {
    let mut data = 1u32.to_le_bytes().to_vec();
    data.extend_from_slice(&u64::MAX.to_le_bytes());
    data.resize(56, 0);
    for address in addresses {
        data.extend_from_slice(&address.0);
    }
    data
}

/// A JSON string of base units, as a number.
pub fn units(v: &Value) -> u64 {
    v.as_str().unwrap_or_else(|| panic!("{v} is not a string")).parse().unwrap()
}

/// What the stand-in's pool pays for `amount` of the stablecoin, computed here from the constant
/// product (30 bps fee rounded up, output rounded down) rather than read from the stand-in.
pub fn pool_out(reserve_in: u64, reserve_out: u64, amount: u64) -> u64 {
    let after = u128::from(amount) - (u128::from(amount) * 30).div_ceil(10_000);
    (u128::from(reserve_out) * after / (u128::from(reserve_in) + after)) as u64
}

/// A token account's rent.
pub async fn token_account_rent(rpc: &RpcChain) -> u64 {
    rpc.minimum_balance_for_rent_exemption(shared::solana::token::ACCOUNT_LEN).await.unwrap()
}

pub struct SwapWorld {
    pub chain: LocalChain,
    pub rpc: RpcChain,
    /// 6 decimals.
    pub usdc: Address,
    /// 9 decimals.
    pub token: Address,
    pub router: standins::router::Router,
    pub router_url: String,
    _router_server: standins::Running,
    pub stack: Stack,
}

/// A funded wallet and its keypair file (Solana CLI format).
pub struct Wallet {
    pub key: SigningKey,
    pub address: Address,
    pub key_file: PathBuf,
}

impl SwapWorld {
    /// Everything up; `agents` is merged into the relay's `agents` section.
    pub async fn start(agents: Value) -> Self {
        Self::start_with(agents, json!({})).await
    }

    /// As [`SwapWorld::start`], with `relay` merged into the relay's configuration.
    pub async fn start_with(agents: Value, relay: Value) -> Self {
        Self::start_with_model(agents, relay, None).await
    }

    /// As [`SwapWorld::start_with`], with a model server (none is called otherwise).
    pub async fn start_with_model(agents: Value, relay: Value, model_base_url: Option<String>) -> Self {
        Self::start_full(agents, |_, _, _| relay, model_base_url).await
    }

    /// As [`SwapWorld::start_with_model`], the relay's extra configuration made from the
    /// chain's RPC URL and the two mints (stablecoin, token) once they exist.
    pub async fn start_full(
        agents: Value,
        relay: impl FnOnce(&str, &Address, &Address) -> Value,
        model_base_url: Option<String>,
    ) -> Self {
        Self::start_tuned(agents, relay, model_base_url, |_| {}).await
    }

    /// As [`SwapWorld::start_full`], with the stack's options changed by `tune` last (more
    /// enclaves, no witness thread).
    pub async fn start_tuned(
        agents: Value,
        relay: impl FnOnce(&str, &Address, &Address) -> Value,
        model_base_url: Option<String>,
        tune: impl FnOnce(&mut StackOptions),
    ) -> Self {
        Self::start_on(agents, relay, model_base_url, tune, false).await
    }

    /// As [`SwapWorld::start`], routed as Jupiter routes: the route program stand-in
    /// (`route_program`) deployed at Jupiter's id holds the pool, the router stand-in answers
    /// `/swap/v2/build` with its `shared_accounts_route_v2` and a lookup table on the chain
    /// (the pool's accounts, the mints, the event authority), and the enclave asks `/build`
    /// and checks with the Jupiter rule set.
    pub async fn start_jupiter(agents: Value) -> Self {
        Self::start_on(agents, |_, _, _| json!({}), None, |_| {}, true).await
    }

    async fn start_on(
        agents: Value,
        relay: impl FnOnce(&str, &Address, &Address) -> Value,
        model_base_url: Option<String>,
        tune: impl FnOnce(&mut StackOptions),
        jupiter: bool,
    ) -> Self {
        let chain = LocalChain::start();
        let rpc = chain.rpc();
        let (usdc, token) = (chain.create_mint(6).await, chain.create_mint(9).await);
        let liquidity = [(usdc, POOL_USDC), (token, POOL_TOKEN)];
        let mut pool = chain.create_pool(&liquidity, SOL).await;
        if jupiter {
            pool.route_id = Some(ROUTE_ID);
            chain.deploy(&JUPITER_PROGRAM, &crate::route_program::route_program_elf(&JUPITER_PROGRAM, ROUTE_ID));
            for (mint, amount) in liquidity {
                chain.mint_to(&mint, &pool.owner(), amount).await;
            }
        }
        let (server, router) = standins::router::start(&chain.rpc_url, pool.clone()).await;
        if jupiter {
            let table = Address(shared::sha256(b"swaps world: the route's lookup table"));
            let mut held = vec![pool.owner(), pool.account(&usdc), pool.account(&token), usdc, token];
            held.push(shared::solana::jupiter::EVENT_AUTHORITY);
            chain.set_account(&table, SOL, &lookup_table_data(&held), &ADDRESS_LOOKUP_TABLE_PROGRAM);
            router.lookup_tables(vec![(table, held)]);
        }
        let router_url = server.base_url.clone();
        let mut section = json!({
            "rpcUrl": chain.rpc_url,
            "routerUrl": router_url,
            "quotePricePerCall": 0,
            "sessionPricePerCall": 0,
            "timeoutSecs": 10,
            "leaseSecs": 15,
            "mints": {
                usdc.to_string(): {"symbol": "USDC", "decimals": 6, "buckets": USDC_BUCKETS,
                                   "minAmount": 100_000, "maxAmount": 1_000_000_000},
                token.to_string(): {"symbol": "TKN", "decimals": 9, "buckets": [SOL, 10 * SOL],
                                    "minAmount": 1_000_000, "maxAmount": 1_000 * SOL},
            },
        });
        if let (Some(base), Some(extra)) = (section.as_object_mut(), agents.as_object()) {
            base.extend(extra.clone());
        }
        let relay = relay(&chain.rpc_url, &usdc, &token);
        let mut relay_config = json!({"agents": section});
        if let (Some(base), Some(extra)) = (relay_config.as_object_mut(), relay.as_object()) {
            base.extend(extra.clone());
        }
        let mut options = StackOptions {
            // No model is called unless one is given.
            model_base_url: Some(model_base_url.unwrap_or_else(|| "http://127.0.0.1:9/v1".into())),
            relay: relay_config,
            // Payouts of managed wallets start five blocks (about 2 s) after a boot's first
            // payout request, not the production 151 (enclave::privacy).
            enclave: json!({"swaps": {"rpcUrl": chain.rpc_url, "routerUrl": router_url,
                                      "routerApi": if jupiter { "build" } else { "swap" },
                                      "timeoutSecs": 10, "payoutQuietBlocks": 5}}),
            ..StackOptions::default()
        };
        tune(&mut options);
        // The stack's start blocks (processes, provisioning); the router keeps serving on the
        // runtime's other threads.
        let stack = tokio::task::block_in_place(|| Stack::start_with(options));
        SwapWorld { chain, rpc, usdc, token, router, router_url, _router_server: server, stack }
    }

    /// A wallet with `lamports` and `usdc` base units of the stablecoin (minted for real).
    pub async fn payer(&self, lamports: u64, usdc: u64) -> Wallet {
        let key = new_key();
        let address = address_of(&key);
        self.chain.fund_sol(&address, lamports);
        if usdc > 0 {
            self.chain.mint_to(&self.usdc, &address, usdc).await;
        }
        let mut bytes = key.to_bytes().to_vec();
        bytes.extend_from_slice(&address.0);
        let key_file = self.stack.dir.path().join(format!("payer-{address}.json"));
        std::fs::write(&key_file, serde_json::to_string(&bytes).unwrap()).unwrap();
        Wallet { key, address, key_file }
    }

    /// `owner`'s balance of `mint` (0 without an account).
    pub async fn balance(&self, owner: &Address, mint: &Address) -> u64 {
        self.rpc.token_balance(&token_account(owner, mint)).await.unwrap().unwrap_or(0)
    }

    pub async fn lamports(&self, owner: &Address) -> u64 {
        self.rpc.balance(owner).await.unwrap()
    }

    /// Starts, checks, funds and executes a session of `payer` for `amount`; returns its id, the
    /// checked start and the funding signature.
    pub async fn run_session(&self, payer: &Wallet, amount: u64) -> (String, client::swap::Checked, String) {
        let client = self.client();
        let request = self.request(payer, amount);
        let start = client.start_oneshot(&request).await.unwrap();
        // The floor `svc swap oneshot --router-url` sets: its own quote of the router, not the relay's.
        let floor = client::swap::own_floor(&self.router_url, &request).await.unwrap();
        let limits = client::swap::Limits { min_out: floor, ..client::swap::Limits::default() };
        let checked = client.check_start(start, &request, limits).await.unwrap();
        let id = checked.start.session_id.clone();
        let signature = client::swap::fund(&self.rpc, &checked, &payer.key).await.unwrap();
        let running = client.execute_oneshot(&id, &signature).await.unwrap();
        assert_eq!(running, json!({"sessionId": id, "status": "running", "estimatedSeconds": 20}));
        (id, checked, signature)
    }

    /// A client with the stack's API key that verifies the enclave.
    pub fn client(&self) -> client::Client {
        self.stack.client()
    }

    /// The swap request of `payer` for `amount` of the stablecoin into the token, to a fresh
    /// destination.
    pub fn request(&self, payer: &Wallet, amount: u64) -> client::swap::OneshotRequest {
        client::swap::OneshotRequest {
            payer_pubkey: payer.address.to_string(),
            from_mint: self.usdc.to_string(),
            to_mint: self.token.to_string(),
            amount: amount.to_string(),
            destination_pubkey: address_of(&new_key()).to_string(),
            slippage_bps: 100,
        }
    }
}
