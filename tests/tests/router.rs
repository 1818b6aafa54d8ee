//! The router stand-in (`standins::router`) on a real local Solana chain: quotes priced by the
//! constant product of the pool's on-chain balances, swap transactions that a user signs with
//! `shared::solana` and sends with `chain::RpcChain`, real balance changes, slippage refusals,
//! Jupiter-shaped errors, forced failures and tampered transactions.

use chain::{Chain, ChainError, Confirmation, RpcChain};
use e2e::chain::{CONFIRM_TIMEOUT, LocalChain, address_of, new_key};
use ed25519_dalek::SigningKey;
use serde_json::{Value, json};
use shared::address::Address;
use shared::solana::programs::{ASSOCIATED_TOKEN_PROGRAM, COMPUTE_BUDGET_PROGRAM, TOKEN_PROGRAM};
use shared::solana::token::{TokenTransfer, decode_transfer};
use shared::solana::{Transaction, associated_token};
use standins::router::{self, Failure, Router, Tamper};

/// The pool: a million of the 6-decimal token and five thousand of the 9-decimal one.
const POOL_A: u64 = 1_000_000 * 1_000_000;
const POOL_B: u64 = 5_000 * 1_000_000_000;
const SOL: u64 = 1_000_000_000;
const FEE_BPS: u128 = 30;

struct Setup {
    local: LocalChain,
    rpc: RpcChain,
    /// 6 decimals.
    a: Address,
    /// 9 decimals.
    b: Address,
    router: Router,
    _server: standins::Running,
    base: String,
    http: reqwest::Client,
}

async fn setup() -> Setup {
    let local = LocalChain::start();
    let rpc = local.rpc();
    let (a, b) = (local.create_mint(6).await, local.create_mint(9).await);
    let pool = local.create_pool(&[(a, POOL_A), (b, POOL_B)], SOL).await;
    let (server, router) = router::start(&local.rpc_url, pool).await;
    let base = server.base_url.clone();
    Setup { local, rpc, a, b, router, _server: server, base, http: reqwest::Client::new() }
}

/// What the constant product gives, computed here from the formula rather than by the stand-in:
/// (fee, out, price impact).
fn constant_product(reserve_in: u64, reserve_out: u64, amount: u64) -> (u64, u64, f64) {
    let fee = (u128::from(amount) * FEE_BPS).div_ceil(10_000);
    let after = u128::from(amount) - fee;
    let out = u128::from(reserve_out) * after / (u128::from(reserve_in) + after);
    let impact = after as f64 / (u128::from(reserve_in) + after) as f64;
    (fee as u64, out as u64, impact)
}

fn threshold(out: u64, slippage_bps: u64) -> u64 {
    (u128::from(out) * u128::from(10_000 - slippage_bps) / 10_000) as u64
}

fn units(v: &Value) -> u64 {
    v.as_str().expect("amounts are strings").parse().expect("an integer")
}

impl Setup {
    async fn get(&self, query: &[(&str, String)]) -> (u16, Value) {
        let r = self.http.get(format!("{}/swap/v1/quote", self.base)).query(query).send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    async fn quote(&self, input: &Address, output: &Address, amount: u64, slippage_bps: Option<u16>) -> Value {
        let mut query =
            vec![("inputMint", input.to_string()), ("outputMint", output.to_string()), ("amount", amount.to_string())];
        if let Some(s) = slippage_bps {
            query.push(("slippageBps", s.to_string()));
        }
        let (status, body) = self.get(&query).await;
        assert_eq!(status, 200, "{body}");
        body
    }

    async fn post(&self, body: impl Into<reqwest::Body>) -> (u16, Value) {
        let r = self
            .http
            .post(format!("{}/swap/v1/swap", self.base))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
    }

    /// `/swap` for `user` with `quote`; the 200 answer.
    async fn swap(&self, user: &SigningKey, quote: &Value) -> Value {
        let body = json!({"userPublicKey": address_of(user).to_string(), "quoteResponse": quote,
                          "wrapAndUnwrapSol": true, "prioritizationFeeLamports": "auto"});
        let (status, answer) = self.post(body.to_string()).await;
        assert_eq!(status, 200, "{answer}");
        answer
    }

    /// A wallet with 1 SOL and `amount` of `mint`.
    async fn user(&self, mint: &Address, amount: u64) -> SigningKey {
        let user = new_key();
        self.local.fund_sol(&address_of(&user), SOL);
        self.local.mint_to(mint, &address_of(&user), amount).await;
        user
    }

    /// `owner`'s balance of `mint` (0 without an account).
    async fn balance(&self, owner: &Address, mint: &Address) -> u64 {
        let account = associated_token::address(owner, mint, &TOKEN_PROGRAM);
        self.rpc.token_balance(&account).await.unwrap().unwrap_or(0)
    }

    async fn pool_balance(&self, mint: &Address) -> u64 {
        self.balance(&self.router.authority(), mint).await
    }

    /// Signs `answer`'s transaction as `user`, sends and confirms it.
    async fn sign_and_send(&self, answer: &Value, user: &SigningKey) -> Result<String, ChainError> {
        let mut tx = transaction(answer);
        tx.sign(&[user]).unwrap();
        let signature = self.rpc.send_transaction(&tx.serialize()).await?;
        let last_valid = answer["lastValidBlockHeight"].as_u64().unwrap();
        let done = self.rpc.confirm(&signature, last_valid, chain::Commitment::Confirmed, CONFIRM_TIMEOUT).await?;
        assert_eq!(done, Confirmation::Confirmed);
        Ok(signature)
    }

    /// Quotes and swaps `amount` of `input` for `user`, signs and sends; returns the quote.
    async fn swap_through(&self, user: &SigningKey, input: &Address, output: &Address, amount: u64) -> Value {
        let quote = self.quote(input, output, amount, None).await;
        let answer = self.swap(user, &quote).await;
        assert_eq!(answer["simulationError"], Value::Null, "{answer}");
        self.sign_and_send(&answer, user).await.unwrap();
        quote
    }
}

fn transaction(answer: &Value) -> Transaction {
    let bytes = shared::b64::decode(answer["swapTransaction"].as_str().unwrap()).unwrap();
    Transaction::parse(&bytes).unwrap()
}

fn transfers(tx: &Transaction) -> Vec<TokenTransfer> {
    tx.message.instructions().iter().filter_map(|ix| decode_transfer(&tx.message, ix).ok()).collect()
}

fn ata(owner: &Address, mint: &Address) -> Address {
    associated_token::address(owner, mint, &TOKEN_PROGRAM)
}

/// Whether the pool's slot in `tx` holds a signature that verifies.
fn pool_signed(tx: &Transaction, pool: &Address) -> bool {
    let slot = tx.message.signer_keys().iter().position(|k| k == pool).expect("the pool signs");
    tx.verify_signature(slot).is_ok()
}

#[tokio::test]
async fn a_quote_is_the_constant_product_of_the_pools_balances() {
    let s = setup().await;
    let amount = 1_000 * 1_000_000;
    let q = s.quote(&s.a, &s.b, amount, None).await;
    let (fee, out, impact) = constant_product(POOL_A, POOL_B, amount);
    assert_eq!((q["inputMint"].as_str(), q["outputMint"].as_str()), (Some(&*s.a.to_string()), Some(&*s.b.to_string())));
    assert_eq!((units(&q["inAmount"]), units(&q["outAmount"])), (amount, out));
    assert_eq!(units(&q["otherAmountThreshold"]), threshold(out, 50), "default slippage 50 bps");
    assert_eq!((q["swapMode"].as_str(), q["slippageBps"].as_u64()), (Some("ExactIn"), Some(50)));
    assert_eq!(q["platformFee"], Value::Null);
    let quoted_impact: f64 = q["priceImpactPct"].as_str().expect("a decimal string").parse().unwrap();
    assert!((quoted_impact - impact).abs() < 1e-15, "{quoted_impact} vs {impact}");
    let plan = q["routePlan"].as_array().unwrap();
    assert_eq!(plan.len(), 1);
    assert_eq!(
        plan[0],
        json!({"swapInfo": {"ammKey": s.router.authority().to_string(), "label": "svc-test-pool",
                            "inputMint": s.a.to_string(), "outputMint": s.b.to_string(),
                            "inAmount": amount.to_string(), "outAmount": out.to_string(),
                            "feeAmount": fee.to_string(), "feeMint": s.a.to_string()},
               "percent": 100, "bps": 10_000})
    );
    assert!(q["contextSlot"].as_u64().unwrap() > 0);
    assert!(q["timeTaken"].as_f64().unwrap() >= 0.0);

    // Other slippage, the other direction (9 decimals in).
    let q = s.quote(&s.a, &s.b, amount, Some(300)).await;
    assert_eq!(units(&q["otherAmountThreshold"]), threshold(out, 300));
    let back = 3 * 1_000_000_000 + 7;
    let q = s.quote(&s.b, &s.a, back, None).await;
    assert_eq!(units(&q["outAmount"]), constant_product(POOL_B, POOL_A, back).1);
    assert_eq!(q["routePlan"][0]["swapInfo"]["feeMint"], s.b.to_string());

    // Priced at quote time: more liquidity on chain, a better price at once.
    s.local.mint_to(&s.b, &s.router.authority(), POOL_B).await;
    let q = s.quote(&s.a, &s.b, amount, None).await;
    assert_eq!(units(&q["outAmount"]), constant_product(POOL_A, 2 * POOL_B, amount).1);
}

#[tokio::test]
async fn price_impact_grows_with_size() {
    let s = setup().await;
    let mut last = (0.0f64, f64::MAX);
    // From one whole token up: below that, rounding to base units outweighs the curve.
    for amount in [1_000_000u64, 1_000_000_000, 10_000_000_000, 100_000_000_000, 900_000_000_000] {
        let q = s.quote(&s.a, &s.b, amount, None).await;
        let impact: f64 = q["priceImpactPct"].as_str().unwrap().parse().unwrap();
        let rate = units(&q["outAmount"]) as f64 / amount as f64;
        assert!(impact > last.0, "impact {impact} after {}", last.0);
        assert!(rate < last.1, "rate {rate} after {}", last.1);
        last = (impact, rate);
    }
    assert!(last.0 > 0.45, "nine tenths of the pool moves the price by almost half: {}", last.0);
}

#[tokio::test]
async fn a_swap_moves_real_tokens_both_ways() {
    let s = setup().await;
    let holding = 10_000 * 1_000_000;
    let user = s.user(&s.a, holding).await;
    let who = address_of(&user);
    let pool = s.router.authority();
    assert_eq!(s.balance(&who, &s.b).await, 0);

    let q = s.quote(&s.a, &s.b, 2_500 * 1_000_000, None).await;
    let (in_amount, out_amount) = (units(&q["inAmount"]), units(&q["outAmount"]));
    let answer = s.swap(&user, &q).await;
    assert_eq!(answer["simulationError"], Value::Null);
    assert_eq!(
        (answer["prioritizationFeeLamports"].as_u64(), answer["computeUnitLimit"].as_u64()),
        (Some(0), Some(200_000))
    );
    let tx = transaction(&answer);
    assert_eq!(tx.message.version(), None, "a legacy transaction");
    assert_eq!(tx.message.fee_payer(), Some(&who));
    assert_eq!(tx.missing_signers(), [who], "only the user's slot is empty");
    assert!(pool_signed(&tx, &pool));
    let programs: Vec<Address> =
        tx.message.instructions().iter().map(|ix| *tx.message.program_id(ix).unwrap()).collect();
    assert_eq!(programs, [COMPUTE_BUDGET_PROGRAM, ASSOCIATED_TOKEN_PROGRAM, TOKEN_PROGRAM, TOKEN_PROGRAM]);
    let moves = transfers(&tx);
    assert_eq!(moves.len(), 2);
    assert_eq!(
        (moves[0].source, moves[0].mint, moves[0].destination, moves[0].authority, moves[0].amount, moves[0].decimals),
        (ata(&who, &s.a), Some(s.a), ata(&pool, &s.a), who, in_amount, Some(6))
    );
    assert_eq!(
        (moves[1].source, moves[1].mint, moves[1].destination, moves[1].authority, moves[1].amount, moves[1].decimals),
        (ata(&pool, &s.b), Some(s.b), ata(&who, &s.b), pool, out_amount, Some(9))
    );

    let signature = s.sign_and_send(&answer, &user).await.unwrap();
    assert_eq!(s.balance(&who, &s.a).await, holding - in_amount);
    assert_eq!(s.balance(&who, &s.b).await, out_amount, "the output account was created by the swap");
    assert_eq!(s.pool_balance(&s.a).await, POOL_A + in_amount);
    assert_eq!(s.pool_balance(&s.b).await, POOL_B - out_amount);
    let landed = s.rpc.transaction(&signature).await.unwrap().expect("found");
    assert_eq!(landed.meta.unwrap().err, None);

    // And back: all of the 9-decimal output, priced against the moved pool.
    let q = s.swap_through(&user, &s.b, &s.a, out_amount).await;
    let back = units(&q["outAmount"]);
    assert_eq!(back, constant_product(POOL_B - out_amount, POOL_A + in_amount, out_amount).1);
    assert!(back < in_amount, "two fees and the spread: {back} < {in_amount}");
    assert_eq!(s.balance(&who, &s.a).await, holding - in_amount + back);
    assert_eq!(s.balance(&who, &s.b).await, 0);
    assert_eq!(s.pool_balance(&s.a).await, POOL_A + in_amount - back);
    assert_eq!(s.pool_balance(&s.b).await, POOL_B);
}

#[tokio::test]
async fn a_pool_that_moved_past_the_slippage_refuses_and_within_it_pays_its_current_price() {
    let s = setup().await;
    let (late, early) = (s.user(&s.a, 100_000 * 1_000_000).await, s.user(&s.a, 100_000 * 1_000_000).await);
    let late_quote = s.quote(&s.a, &s.b, 5_000 * 1_000_000, None).await;
    // Someone else swaps 5 % of the pool first: the price moves by about 10 %.
    s.swap_through(&early, &s.a, &s.b, 50_000 * 1_000_000).await;
    let pool_before = (s.pool_balance(&s.a).await, s.pool_balance(&s.b).await);

    let answer = s.swap(&late, &late_quote).await;
    assert_eq!(answer["simulationError"]["errorCode"], "TRANSACTION_ERROR", "{answer}");
    let error = answer["simulationError"]["error"].as_str().unwrap();
    assert_eq!(error, "Error processing Instruction 3: custom program error: 0x1771", "SlippageToleranceExceeded");
    let tx = transaction(&answer);
    assert!(!pool_signed(&tx, &s.router.authority()), "the pool does not sign a slipped swap");
    let sent = s.sign_and_send(&answer, &late).await;
    let refused = matches!(&sent, Err(ChainError::Rpc { message, .. }) if message.contains("signature verification"));
    assert!(refused, "the pool's slot is empty: {sent:?}");
    assert_eq!((s.pool_balance(&s.a).await, s.pool_balance(&s.b).await), pool_before);
    assert_eq!(s.balance(&address_of(&late), &s.a).await, 100_000 * 1_000_000);

    // Within the slippage: a small trade moves the pool a little; the pool pays what it gives now.
    let quote = s.quote(&s.a, &s.b, 5_000 * 1_000_000, Some(100)).await;
    s.swap_through(&early, &s.a, &s.b, 100 * 1_000_000).await;
    let (reserve_a, reserve_b) = (s.pool_balance(&s.a).await, s.pool_balance(&s.b).await);
    let now = constant_product(reserve_a, reserve_b, 5_000 * 1_000_000).1;
    assert!(now < units(&quote["outAmount"]) && now >= units(&quote["otherAmountThreshold"]));
    let answer = s.swap(&late, &quote).await;
    assert_eq!(answer["simulationError"], Value::Null);
    assert_eq!(transfers(&transaction(&answer))[1].amount, now);
    s.sign_and_send(&answer, &late).await.unwrap();
    assert_eq!(s.balance(&address_of(&late), &s.b).await, now);
}

/// `{"error": ..}` with `errorCode` exactly as given (`None`: no code).
fn assert_refused(got: (u16, Value), status: u16, code: Option<&str>) -> String {
    let (got_status, body) = got;
    assert_eq!(got_status, status, "{body}");
    assert_eq!(body["errorCode"].as_str(), code, "{body}");
    let keys = body.as_object().unwrap().len();
    assert_eq!(keys, 1 + usize::from(code.is_some()), "{body}");
    body["error"].as_str().expect("an error message").to_string()
}

#[tokio::test]
async fn bad_requests_get_jupiters_refusals() {
    let s = setup().await;
    let (a, b) = (s.a.to_string(), s.b.to_string());
    let q = |input: &str, output: &str, amount: &str| {
        vec![("inputMint", input.to_string()), ("outputMint", output.to_string()), ("amount", amount.to_string())]
    };
    assert_refused(s.get(&[("inputMint", a.clone()), ("amount", "5".into())]).await, 400, None);
    assert_refused(s.get(&q("not-a-mint!", &b, "1000")).await, 400, None);
    for bad in ["0", "-5", "1.5", "abc", "18446744073709551616"] {
        assert_refused(s.get(&q(&a, &b, bad)).await, 400, None);
    }
    let mut with = q(&a, &b, "1000000");
    with.push(("slippageBps", "10001".into()));
    assert_refused(s.get(&with).await, 400, None);
    let mut exact_out = q(&a, &b, "1000000");
    exact_out.push(("swapMode", "ExactOut".into()));
    assert_refused(s.get(&exact_out).await, 400, Some("NOT_SUPPORTED"));
    let mut sideways = q(&a, &b, "1000000");
    sideways.push(("swapMode", "Sideways".into()));
    assert_refused(s.get(&sideways).await, 400, None);
    assert_refused(s.get(&q(&a, &a, "1000000")).await, 400, Some("CIRCULAR_ARBITRAGE_IS_DISABLED"));
    let stranger = address_of(&new_key()).to_string();
    let message = assert_refused(s.get(&q(&a, &stranger, "1000000")).await, 400, Some("TOKEN_NOT_TRADABLE"));
    assert_eq!(message, format!("The token {stranger} is not tradable"));
    // One base unit: the fee takes it all.
    assert_refused(s.get(&q(&a, &b, "1")).await, 400, Some("COULD_NOT_FIND_ANY_ROUTE"));
    // More than the pool holds of the input.
    let message = assert_refused(
        s.get(&q(&a, &b, &(2 * POOL_A).to_string())).await,
        400,
        Some("ROUTE_PLAN_DOES_NOT_CONSUME_ALL_THE_AMOUNT"),
    );
    assert!(message.contains("lower your amount"), "{message}");

    // /swap
    let user = address_of(&new_key()).to_string();
    let quote = s.quote(&s.a, &s.b, 1_000_000, None).await;
    let swap = |change: &dyn Fn(&mut Value)| {
        let mut body = json!({"userPublicKey": user, "quoteResponse": quote.clone()});
        change(&mut body);
        body.to_string()
    };
    assert_refused(s.post("{not json").await, 400, None);
    let message = assert_refused(s.post(swap(&|b| b["quoteResponse"] = Value::Null)).await, 422, None);
    assert!(message.starts_with("Failed to deserialize the JSON body into the target type"), "{message}");
    assert_refused(s.post(swap(&|b| b["userPublicKey"] = json!("nope"))).await, 422, None);
    assert_refused(s.post(swap(&|b| b["quoteResponse"]["inAmount"] = json!("lots"))).await, 422, None);
    assert_refused(
        s.post(swap(&|b| b["quoteResponse"]["swapMode"] = json!("ExactOut"))).await,
        400,
        Some("NOT_SUPPORTED"),
    );
    assert_refused(s.post(swap(&|b| b["destinationTokenAccount"] = json!(user))).await, 400, Some("NOT_SUPPORTED"));
    assert_refused(
        s.post(swap(&|b| b["quoteResponse"]["routePlan"][0]["swapInfo"]["ammKey"] = json!(stranger))).await,
        400,
        Some("MARKET_NOT_FOUND"),
    );
    assert_refused(
        s.post(swap(&|b| b["quoteResponse"]["outputMint"] = json!(stranger))).await,
        400,
        Some("TOKEN_NOT_TRADABLE"),
    );
}

#[tokio::test]
async fn a_mint_without_liquidity_has_no_route() {
    let local = LocalChain::start();
    let (a, b, empty) = (local.create_mint(6).await, local.create_mint(9).await, local.create_mint(6).await);
    let mut pool = local.create_pool(&[(a, POOL_A), (b, POOL_B)], SOL).await;
    pool.mints.push(empty);
    let (server, _router) = router::start(&local.rpc_url, pool).await;
    let r = reqwest::Client::new()
        .get(format!("{}/swap/v1/quote", server.base_url))
        .query(&[("inputMint", a.to_string()), ("outputMint", empty.to_string()), ("amount", "1000000".into())])
        .send()
        .await
        .unwrap();
    assert_refused((r.status().as_u16(), r.json().await.unwrap()), 400, Some("COULD_NOT_FIND_ANY_ROUTE"));
}

#[tokio::test]
async fn requests_are_recorded_and_failures_forced() {
    let s = setup().await;
    let user = s.user(&s.a, 1_000_000_000).await;
    let quote = s.quote(&s.a, &s.b, 1_000_000, None).await;
    s.swap(&user, &quote).await;
    let seen = s.router.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!((seen[0].method.as_str(), seen[0].path.as_str()), ("GET", "/swap/v1/quote"));
    assert!(seen[0].query.as_deref().unwrap().contains(&format!("inputMint={}", s.a)));
    assert_eq!((seen[1].method.as_str(), seen[1].path.as_str()), ("POST", "/swap/v1/swap"));
    assert_eq!(seen[1].json()["userPublicKey"], address_of(&user).to_string());
    assert_eq!(seen[1].json()["quoteResponse"], quote);

    // The router fails after the user was funded: no transaction, nothing moves.
    s.router.fail_with(Some(Failure::Status(503)));
    let body = json!({"userPublicKey": address_of(&user).to_string(), "quoteResponse": quote}).to_string();
    let r = s.http.post(format!("{}/swap/v1/swap", s.base)).body(body.clone()).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 503);
    assert_eq!(r.text().await.unwrap(), router::FAILURE_BODY);
    let (status, _) = s.get(&[("inputMint", s.a.to_string())]).await;
    assert_eq!(status, 503);
    s.router.fail_with(Some(Failure::Garbage));
    let r = s.http.post(format!("{}/swap/v1/swap", s.base)).body(body).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(r.json::<Value>().await.is_err(), "not JSON");
    s.router.fail_with(None);
    s.swap(&user, &quote).await;
    assert_eq!(s.router.requests().len(), 6, "failed requests are recorded too");
    assert_eq!(s.balance(&address_of(&user), &s.a).await, 1_000_000_000);
}

#[tokio::test]
async fn tampered_swaps_break_one_rule_each_and_are_still_signed_by_the_pool() {
    let s = setup().await;
    let pool = s.router.authority();
    let holding = 100_000 * 1_000_000;
    let user = s.user(&s.a, holding).await;
    let who = address_of(&user);
    // 1 % slippage: the first (landed) swap moves the pool by less, so the rest are still signed.
    let quote = s.quote(&s.a, &s.b, 1_000 * 1_000_000, Some(100)).await;
    let (in_amount, out_amount) = (units(&quote["inAmount"]), units(&quote["outAmount"]));
    let minimum = units(&quote["otherAmountThreshold"]);

    s.router.tamper(Some(Tamper::ExtraTransferOutOfUser));
    let answer = s.swap(&user, &quote).await;
    let tx = transaction(&answer);
    assert!(pool_signed(&tx, &pool));
    let from_user: Vec<u64> = transfers(&tx).iter().filter(|t| t.authority == who).map(|t| t.amount).collect();
    assert_eq!(from_user, [in_amount, in_amount]);
    // It would land: the user's checks are all that stop it.
    s.sign_and_send(&answer, &user).await.unwrap();
    assert_eq!(s.balance(&who, &s.a).await, holding - 2 * in_amount);
    assert_eq!(s.balance(&who, &s.b).await, out_amount);

    s.router.tamper(Some(Tamper::OutputBelowQuote));
    let tx = transaction(&s.swap(&user, &quote).await);
    assert!(pool_signed(&tx, &pool));
    let paid = transfers(&tx).into_iter().find(|t| t.authority == pool).unwrap();
    assert_eq!((paid.destination, paid.amount), (ata(&who, &s.b), minimum - 1));

    s.router.tamper(Some(Tamper::WrongFeePayer));
    let tx = transaction(&s.swap(&user, &quote).await);
    assert_eq!(tx.message.fee_payer(), Some(&pool));
    assert_eq!(tx.missing_signers(), [who]);
    assert!(pool_signed(&tx, &pool));

    s.router.tamper(Some(Tamper::OutputElsewhere));
    let tx = transaction(&s.swap(&user, &quote).await);
    let paid = transfers(&tx).into_iter().find(|t| t.authority == pool).unwrap();
    assert_eq!(paid.destination, ata(&router::elsewhere(), &s.b));
    assert_eq!(tx.message.fee_payer(), Some(&who));

    s.router.tamper(None);
    let tx = transaction(&s.swap(&user, &quote).await);
    let moves = transfers(&tx);
    assert_eq!(moves.len(), 2);
    assert_eq!(moves[1].destination, ata(&who, &s.b));
}
