//! The stand-in of Jupiter's `shared_accounts_route_v2` (`e2e::route_program`) on the local
//! chain, at Jupiter's program id: a swap moves exactly `in_amount` from the user to the
//! program's source account and `min(quoted, pool)` from the pool to the user; a pool short of
//! the slippage threshold fails with Jupiter's 6001 and moves nothing; another `id` or a
//! missing user signature is refused and moves nothing.

use chain::{Chain, ChainError};
use e2e::chain::{LocalChain, address_of, new_key};
use e2e::route_program::{ERROR_NOT_ROUTE, ERROR_SLIPPAGE, program_authority, route_program_elf};
use ed25519_dalek::SigningKey;
use serde_json::{Value, json};
use shared::address::{Address, find_program_address};
use shared::solana::jupiter::SharedRouteV2;
use shared::solana::programs::TOKEN_PROGRAM;
use shared::solana::{AccountMeta, Instruction, Message, Transaction};

const JUPITER: &str = "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4";
/// The `id` the program is built for (its authority is `["authority", [ID]]`).
const ID: u8 = 0;
const USER_INPUT: u64 = 3_000_000;

struct Swap {
    chain: LocalChain,
    program: Address,
    user: SigningKey,
    in_mint: Address,
    out_mint: Address,
    /// The user's input and output token accounts.
    user_source: Address,
    user_destination: Address,
    /// The program authority's input and output (pool) token accounts.
    program_source: Address,
    program_destination: Address,
}

/// A chain with the program deployed, two mints, a user holding [`USER_INPUT`] of the input,
/// and the program authority holding `pool` of the output, all by real transactions.
async fn setup(pool: u64) -> Swap {
    let chain = LocalChain::start();
    let program = Address::parse(JUPITER).unwrap();
    chain.deploy(&program, &route_program_elf(&program, ID));
    let (in_mint, out_mint) = (chain.create_mint(6).await, chain.create_mint(6).await);
    let user = new_key();
    let user_source = chain.mint_to(&in_mint, &address_of(&user), USER_INPUT).await;
    let user_destination = chain.create_token_account(&address_of(&user), &out_mint).await;
    let (authority, _) = program_authority(&program, ID);
    let program_source = chain.create_token_account(&authority, &in_mint).await;
    let program_destination = chain.mint_to(&out_mint, &authority, pool).await;
    Swap { chain, program, user, in_mint, out_mint, user_source, user_destination, program_source, program_destination }
}

impl Swap {
    /// `shared_accounts_route_v2` with Jupiter's twelve accounts (8 and 9 the same token
    /// program, 11 the program itself) and a route plan after the fixed arguments.
    fn route(&self, id: u8, in_amount: u64, quoted_out: u64, slippage_bps: u16, user_signs: bool) -> Instruction {
        let args = SharedRouteV2 {
            id,
            in_amount,
            quoted_out_amount: quoted_out,
            slippage_bps,
            platform_fee_bps: 0,
            positive_slippage_bps: 0,
        };
        let data = args.encode(&[1, 0, 0, 0, 7, 100, 0, 1]); // a route plan, ignored
        let (authority, _) = program_authority(&self.program, id);
        let (event_authority, _) = find_program_address(&[b"__event_authority"], &self.program).unwrap();
        let accounts = vec![
            AccountMeta::readonly(authority, false),
            AccountMeta::readonly(address_of(&self.user), user_signs),
            AccountMeta::writable(self.user_source, false),
            AccountMeta::writable(self.program_source, false),
            AccountMeta::writable(self.program_destination, false),
            AccountMeta::writable(self.user_destination, false),
            AccountMeta::readonly(self.in_mint, false),
            AccountMeta::readonly(self.out_mint, false),
            AccountMeta::readonly(TOKEN_PROGRAM, false),
            AccountMeta::readonly(TOKEN_PROGRAM, false),
            AccountMeta::readonly(event_authority, false),
            AccountMeta::readonly(self.program, false),
        ];
        Instruction { program_id: self.program, accounts, data }
    }

    /// User source, program source, pool, user destination.
    async fn balances(&self) -> [u64; 4] {
        let rpc = self.chain.rpc();
        let mut out = [0; 4];
        for (i, account) in
            [self.user_source, self.program_source, self.program_destination, self.user_destination].iter().enumerate()
        {
            out[i] = rpc.token_balance(account).await.unwrap().expect("a token account");
        }
        out
    }

    /// Sends `ix` (signed by the payer, and the user if `ix` asks); on failure the error and
    /// the logs of a simulation of it.
    async fn send(&self, ix: Instruction) -> Result<String, (ChainError, Vec<String>)> {
        let signers: Vec<&SigningKey> = if ix.accounts[1].is_signer { vec![&self.user] } else { vec![] };
        match self.chain.send(std::slice::from_ref(&ix), &signers).await {
            Ok(signature) => Ok(signature),
            Err(err) => Err((err, self.simulate(ix, &signers).await.1)),
        }
    }

    /// `simulateTransaction` of `ix`: its `err` and logs.
    async fn simulate(&self, ix: Instruction, signers: &[&SigningKey]) -> (Value, Vec<String>) {
        let latest = self.chain.rpc().latest_blockhash().await.unwrap();
        let message = Message::compile(&self.chain.payer_address(), &[ix], latest.blockhash).unwrap();
        let mut tx = Transaction::new_unsigned(message);
        let mut keys = vec![&self.chain.payer];
        keys.extend_from_slice(signers);
        tx.sign(&keys).unwrap();
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "simulateTransaction",
            "params": [shared::b64::encode(tx.serialize()), {"encoding": "base64", "commitment": "confirmed"}]});
        let answer: Value =
            reqwest::Client::new().post(&self.chain.rpc_url).json(&body).send().await.unwrap().json().await.unwrap();
        let value = &answer["result"]["value"];
        let logs = value["logs"].as_array().into_iter().flatten().filter_map(|l| l.as_str().map(String::from));
        (value["err"].clone(), logs.collect())
    }
}

/// The amounts of the brief: 1_000_000 in, 500_000 quoted, 1 % slippage, a 10_000_000 pool.
#[tokio::test]
async fn a_swap_moves_in_amount_to_the_program_and_the_quote_to_the_user() {
    let swap = setup(10_000_000).await;
    assert_eq!(swap.balances().await, [USER_INPUT, 0, 10_000_000, 0]);
    let ix = swap.route(ID, 1_000_000, 500_000, 100, true);
    // Jupiter returns the out amount: 500_000 u64 LE.
    let (err, logs) = swap.simulate(ix.clone(), &[&swap.user]).await;
    assert_eq!(err, Value::Null, "{logs:#?}");
    let returned = format!("Program return: {JUPITER} {}", shared::b64::encode(500_000u64.to_le_bytes()));
    assert!(logs.contains(&returned), "{logs:#?}");
    swap.send(ix).await.unwrap();
    assert_eq!(swap.balances().await, [USER_INPUT - 1_000_000, 1_000_000, 9_500_000, 500_000]);
}

/// A pool below the quote but within the slippage pays what it has; below the threshold
/// (floor(500_000 × 9_900 / 10_000) = 495_000) the swap fails with 6001 and nothing moves.
#[tokio::test]
async fn a_pool_short_of_the_slippage_threshold_fails_with_6001() {
    let swap = setup(400_000).await;
    let (err, logs) = swap.send(swap.route(ID, 1_000_000, 500_000, 100, true)).await.unwrap_err();
    assert!(err.to_string().contains(&format!("custom program error: {ERROR_SLIPPAGE:#x}")), "{err} {logs:#?}");
    assert_eq!(swap.balances().await, [USER_INPUT, 0, 400_000, 0]);
    // 495_000 in the pool: exactly the threshold, paid in full.
    swap.chain.mint_to(&swap.out_mint, &program_authority(&swap.program, ID).0, 95_000).await;
    swap.send(swap.route(ID, 1_000_000, 500_000, 100, true)).await.unwrap();
    assert_eq!(swap.balances().await, [USER_INPUT - 1_000_000, 1_000_000, 0, 495_000]);
}

/// Another `id` (another authority) is not this program's: custom error 101, nothing moves;
/// nor are short data, another discriminator or fewer than 12 accounts.
#[tokio::test]
async fn another_id_is_refused() {
    let swap = setup(10_000_000).await;
    let good = swap.route(ID, 1_000_000, 500_000, 100, true);
    let (mut short, mut other, mut few) = (good.clone(), good.clone(), good);
    short.data.truncate(30);
    other.data[0] ^= 1;
    few.accounts.truncate(11);
    for ix in [swap.route(ID + 1, 1_000_000, 500_000, 100, true), short, other, few] {
        let (err, logs) = swap.send(ix).await.unwrap_err();
        assert!(err.to_string().contains(&format!("custom program error: {ERROR_NOT_ROUTE:#x}")), "{err} {logs:#?}");
    }
    assert_eq!(swap.balances().await, [USER_INPUT, 0, 10_000_000, 0]);
}

/// Without the user's signature the program cannot move the user's tokens: the runtime refuses
/// the transfer's signer, and nothing moves.
#[tokio::test]
async fn without_the_users_signature_nothing_moves() {
    let swap = setup(10_000_000).await;
    let (err, logs) = swap.send(swap.route(ID, 1_000_000, 500_000, 100, false)).await.unwrap_err();
    assert!(logs.iter().any(|l| l.contains("signer privilege escalated")), "{err} {logs:#?}");
    assert_eq!(swap.balances().await, [USER_INPUT, 0, 10_000_000, 0]);
}
