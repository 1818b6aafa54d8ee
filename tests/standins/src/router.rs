//! Stand-in for a swap router speaking the Jupiter Swap API v1 wire (`GET /swap/v1/quote`,
//! `POST /swap/v1/swap`) that swaps for real on a local Solana chain, against a pool it owns.
//!
//! The pool is a key the stand-in holds ([`PoolConfig::authority`]) and its associated token
//! accounts (SPL Token) of two or more mints; any two of them make a pair. Quotes price against
//! the pool's balances read through RPC at quote time, as a constant product with a fee
//! (`router/amm.rs`). `/swap` prices the quote's input again against the pool as it is now, then builds
//! a legacy transaction paid by the user: create the user's output account (idempotent), move
//! the input from the user to the pool, move the output from the pool to the user; the
//! stand-in signs it as the pool and leaves the user's slot empty. Real Jupiter transactions
//! call the Jupiter program and need only the user's signature: this co-signing is where the
//! stand-in differs (`tests/standins/README.md`).
//!
//! [`start`] serves on loopback; the returned [`Router`] lists every request, makes later
//! requests fail ([`Router::fail_with`]) and makes `/swap` hand out transactions that break the
//! rules a careful client checks ([`Router::tamper`]). A pool on the local chain of the
//! end-to-end tests is made by `e2e::chain::LocalChain::create_pool`.

mod amm;
mod build;
mod quote;
mod swap;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chain::{Chain, ChainError, RpcChain};
use ed25519_dalek::SigningKey;
use serde_json::json;
use shared::address::Address;
use shared::solana::associated_token;
use shared::solana::programs::TOKEN_PROGRAM;

pub use crate::{Failure, Seen};
use amm::{BPS, NoFill};

/// The `label` of the pool's route step.
pub const LABEL: &str = "svc-test-pool";
/// The fee a [`PoolConfig::new`] pool takes, in basis points of the input.
pub const DEFAULT_FEE_BPS: u16 = 30;
/// `slippageBps` when a quote does not name one (Jupiter's default).
pub const DEFAULT_SLIPPAGE_BPS: u16 = 50;
/// The compute unit limit every swap transaction sets (two transfers and an account creation
/// use well under it).
pub const COMPUTE_UNIT_LIMIT: u32 = 200_000;
/// The body of a forced failure.
pub const FAILURE_BODY: &str = r#"{"error":"router-internal-detail-5e07"}"#;
/// Per-request timeout of the stand-in's RPC reads.
const RPC_TIMEOUT: Duration = Duration::from_secs(10);

/// The pool the stand-in trades against.
#[derive(Clone)]
pub struct PoolConfig {
    /// Owns the pool's token accounts; the stand-in co-signs each swap with it. It is the route
    /// step's `ammKey`.
    pub authority: SigningKey,
    /// The mints the pool holds (its associated accounts of them carry the liquidity).
    pub mints: Vec<Address>,
    /// Taken from the input, at most 10 000.
    pub fee_bps: u16,
    pub label: String,
    /// Set: the liquidity sits with Jupiter's program authority PDA(["authority", [id]]) (the
    /// route program's pool) rather than with `authority`; `/swap/v2/build` answers for it
    /// and `/swap/v1/swap` (which needs the pool's signature) refuses.
    pub route_id: Option<u8>,
}

impl PoolConfig {
    /// A pool of `mints` held by `authority`, with a 30 bps fee and the label [`LABEL`].
    pub fn new(authority: SigningKey, mints: Vec<Address>) -> Self {
        PoolConfig { authority, mints, fee_bps: DEFAULT_FEE_BPS, label: LABEL.to_string(), route_id: None }
    }

    /// Who holds the liquidity: the route program's authority for a [`PoolConfig::route_id`]
    /// pool, else [`PoolConfig::authority`].
    pub fn owner(&self) -> Address {
        match self.route_id {
            Some(id) => program_authority(id),
            None => self.authority_address(),
        }
    }

    pub fn authority_address(&self) -> Address {
        Address(self.authority.verifying_key().to_bytes())
    }

    /// The pool's token account of `mint` (its owner's associated account under SPL Token).
    pub fn account(&self, mint: &Address) -> Address {
        associated_token::address(&self.owner(), mint, &TOKEN_PROGRAM)
    }
}

/// Jupiter's program authority for the shared-accounts `id`: PDA(["authority", [id]]).
pub fn program_authority(id: u8) -> Address {
    let pda = shared::address::find_program_address(&[b"authority", &[id]], &shared::solana::programs::JUPITER_PROGRAM);
    pda.expect("a program address exists").0
}

/// A transaction `/swap` hands out that breaks a rule, for testing the checks of a client that
/// signs what a router builds. Each is still signed by the pool, so it would land.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tamper {
    /// A second transfer of `inAmount` of the input mint from the user's account to the pool.
    ExtraTransferOutOfUser,
    /// The output transfer pays one base unit less than the quote's `otherAmountThreshold`.
    OutputBelowQuote,
    /// The pool authority pays the fee instead of `userPublicKey` (the user still signs).
    WrongFeePayer,
    /// The output goes to another wallet's account of the output mint (created for it).
    OutputElsewhere,
    /// `/swap/v2/build` only: the route quotes twice the pool's balance of the output, so its
    /// minimum is more than the pool can pay and the route program fails with 6001 on chain.
    QuoteAbovePool,
}

/// The wallet [`Tamper::OutputElsewhere`] pays: a fixed key nobody is meant to use.
pub fn elsewhere() -> Address {
    Address(shared::sha256(b"standins router: the wallet a tampered swap pays"))
}

/// The test's handle on a running router: what it was asked, forced failures and tampering.
#[derive(Clone)]
pub struct Router {
    recorder: crate::Recorder<Seen>,
    tamper: Arc<Mutex<Option<Tamper>>>,
    pool: Arc<PoolConfig>,
    tables: LookupTables,
}

/// Lookup tables `/swap/v2/build` reports: their addresses and the addresses they hold.
type LookupTables = Arc<Mutex<Vec<(Address, Vec<Address>)>>>;

impl Router {
    /// Makes later `/swap/v2/build` answers report these lookup tables (which the test put on
    /// the chain; the stand-in does not read them).
    pub fn lookup_tables(&self, tables: Vec<(Address, Vec<Address>)>) {
        *self.tables.lock().unwrap_or_else(|e| e.into_inner()) = tables;
    }

    /// Every request so far, in order (body included for `/swap`).
    pub fn requests(&self) -> Vec<Seen> {
        self.recorder.requests()
    }

    /// Makes every later request fail (`None`: answer normally again).
    pub fn fail_with(&self, failure: Option<Failure>) {
        self.recorder.fail_with(failure);
    }

    /// Makes every later `/swap` build a transaction that breaks a rule (`None`: honest again).
    pub fn tamper(&self, tamper: Option<Tamper>) {
        *self.tamper.lock().unwrap_or_else(|e| e.into_inner()) = tamper;
    }

    /// The pool's owner: the route step's `ammKey` (and the co-signer of `/swap/v1/swap`).
    pub fn authority(&self) -> Address {
        self.pool.owner()
    }

    /// The pool's token account of `mint`.
    pub fn pool_account(&self, mint: &Address) -> Address {
        self.pool.account(mint)
    }
}

/// What the handlers share.
#[derive(Clone)]
struct App {
    rpc: RpcChain,
    pool: Arc<PoolConfig>,
    recorder: crate::Recorder<Seen>,
    tamper: Arc<Mutex<Option<Tamper>>>,
    tables: LookupTables,
}

/// Serves the router on loopback for the chain at `rpc_url`. Panics on a configuration no pool
/// can have (an RPC URL that does not parse, fewer than two mints, a fee above 100 %).
pub async fn start(rpc_url: &str, pool: PoolConfig) -> (crate::Running, Router) {
    assert!(pool.mints.len() >= 2, "a pool needs two or more mints");
    assert!(pool.fee_bps <= BPS, "the fee is at most 10 000 bps");
    let rpc = RpcChain::new(rpc_url, RPC_TIMEOUT).expect("an RPC URL that parses");
    let pool = Arc::new(pool);
    let app = App {
        rpc,
        pool: pool.clone(),
        recorder: crate::Recorder::default(),
        tamper: Arc::default(),
        tables: Arc::default(),
    };
    let router =
        Router { recorder: app.recorder.clone(), tamper: app.tamper.clone(), pool, tables: app.tables.clone() };
    let routes = axum::Router::new()
        .route("/swap/v1/quote", get(quote::quote))
        .route("/swap/v1/swap", post(swap::swap))
        .route("/swap/v2/build", get(build::build))
        .with_state(app);
    (crate::serve(routes).await, router)
}

/// A GET request recorded and past any forced failure (which is its rejection). Taken first,
/// so a request is recorded and refused in Jupiter's shape even when its query does not decode.
struct Gated;

impl axum::extract::FromRequestParts<App> for Gated {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, app: &App) -> Result<Self, Response> {
        match app.gate(Seen::new(&parts.method, &parts.uri, &parts.headers, &[])) {
            Some(response) => Err(response),
            None => Ok(Gated),
        }
    }
}

impl App {
    /// Records the request, then answers a forced failure; `None` means go on.
    fn gate(&self, seen: Seen) -> Option<Response> {
        self.recorder.push(seen);
        self.recorder.forced_failure(FAILURE_BODY)
    }

    fn tampering(&self) -> Option<Tamper> {
        *self.tamper.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Refuses a pair the pool cannot trade (the same mint twice, or a mint it does not hold).
    fn check_pair(&self, input: &Address, output: &Address) -> Result<(), Refusal> {
        if input == output {
            return Err(Refusal::route(CIRCULAR_ARBITRAGE_IS_DISABLED, "Circular arbitrage is disabled"));
        }
        for mint in [input, output] {
            if !self.pool.mints.contains(mint) {
                return Err(Refusal::route(TOKEN_NOT_TRADABLE, format!("The token {mint} is not tradable")));
            }
        }
        Ok(())
    }

    /// The pool's balances of the pair now (a missing account holds nothing).
    async fn reserves(&self, input: &Address, output: &Address) -> Result<(u64, u64), Refusal> {
        let (account_in, account_out) = (self.pool.account(input), self.pool.account(output));
        let reserve_in = self.rpc.token_balance(&account_in).await.map_err(Refusal::chain)?;
        let reserve_out = self.rpc.token_balance(&account_out).await.map_err(Refusal::chain)?;
        Ok((reserve_in.unwrap_or(0), reserve_out.unwrap_or(0)))
    }
}

// The `errorCode`s Jupiter answers that this stand-in uses (dev.jup.ag, Swap API common errors).
pub const COULD_NOT_FIND_ANY_ROUTE: &str = "COULD_NOT_FIND_ANY_ROUTE";
pub const ROUTE_PLAN_DOES_NOT_CONSUME_ALL_THE_AMOUNT: &str = "ROUTE_PLAN_DOES_NOT_CONSUME_ALL_THE_AMOUNT";
pub const TOKEN_NOT_TRADABLE: &str = "TOKEN_NOT_TRADABLE";
pub const CIRCULAR_ARBITRAGE_IS_DISABLED: &str = "CIRCULAR_ARBITRAGE_IS_DISABLED";
pub const MARKET_NOT_FOUND: &str = "MARKET_NOT_FOUND";
pub const NOT_SUPPORTED: &str = "NOT_SUPPORTED";

/// A refusal in Jupiter's shape: `{"error": message}`, with `"errorCode"` where Jupiter names one.
#[derive(Debug)]
struct Refusal {
    status: StatusCode,
    message: String,
    code: Option<&'static str>,
}

impl Refusal {
    /// 400 without a code: a parameter that is missing or does not parse.
    fn bad_request(message: impl Into<String>) -> Self {
        Refusal { status: StatusCode::BAD_REQUEST, message: message.into(), code: None }
    }

    /// 400 with one of Jupiter's routing codes.
    fn route(code: &'static str, message: impl Into<String>) -> Self {
        Refusal { status: StatusCode::BAD_REQUEST, message: message.into(), code: Some(code) }
    }

    /// Why the pool cannot fill an input, as Jupiter words it.
    fn no_fill(why: NoFill) -> Self {
        match why {
            NoFill::NoRoute => Refusal::route(COULD_NOT_FIND_ANY_ROUTE, "Could not find any route"),
            NoFill::TooLarge => Refusal::route(
                ROUTE_PLAN_DOES_NOT_CONSUME_ALL_THE_AMOUNT,
                "The route plan does not consume all the amount, please lower your amount",
            ),
        }
    }

    /// 422: a `/swap` body of the wrong type (Jupiter's server answers its JSON extractor's text).
    fn unprocessable(detail: impl std::fmt::Display) -> Self {
        Refusal {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            message: format!("Failed to deserialize the JSON body into the target type: {detail}"),
            code: None,
        }
    }

    /// 500: the chain could not be read or the transaction could not be built.
    fn internal(detail: impl std::fmt::Display) -> Self {
        Refusal { status: StatusCode::INTERNAL_SERVER_ERROR, message: detail.to_string(), code: None }
    }

    fn chain(e: ChainError) -> Self {
        Refusal::internal(format!("reading the chain failed: {e}"))
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let mut body = json!({"error": self.message});
        if let Some(code) = self.code {
            body["errorCode"] = json!(code);
        }
        (self.status, Json(body)).into_response()
    }
}
