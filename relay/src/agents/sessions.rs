//! Sessions as stored, of every mode (a one-shot swap; a wallet's swap, encrypt or shield):
//! one row per session, the state machine's position and every transaction it recorded
//! (docs/swaps.md). A worker takes a session under a lease, so relays sharing a database never
//! work on one session at once.

use std::sync::LazyLock;

use serde::Serialize;
use sqlx::Row;
use sqlx::any::AnyRow;

use shared::address::Address;
use shared::amount::Amount;
use shared::swap::ParsedTerms;

use crate::store::{Store, StoreError, is_unique_violation};

/// Where a session is (docs/swaps.md has the transitions). `settled` and `failed` are terminal
/// (contract §3); a refunded session ends `failed` with its `reason` and `refundTxSig`.
pub mod state {
    pub const AWAITING_FUNDING: &str = "awaiting_funding";
    pub const FUNDED: &str = "funded";
    pub const SWAPPING: &str = "swapping";
    pub const SWAPPED: &str = "swapped";
    pub const DELIVERING: &str = "delivering";
    pub const DELIVERED: &str = "delivered";
    pub const REFUNDING: &str = "refunding";
    pub const SETTLED: &str = "settled";
    pub const FAILED: &str = "failed";
    /// Encrypt sessions (mode `encrypt`): the transaction into the pool is on its way, then
    /// the private balance is credited.
    pub const ENCRYPTING: &str = "encrypting";
    pub const CREDITING: &str = "crediting";
    /// Managed swaps (mode `managed`): the wallet's funding of the session is on its way; then
    /// as a one-shot session from `funded`.
    pub const FUNDING: &str = "funding";
    /// Shields (mode `shield`, wallets::shield has the table): deposit, credit to the
    /// intermediate key, the hop to it, its delivery (`delivering`, `delivered`), its close.
    pub const DEPOSITING: &str = "depositing";
    pub const MIXING: &str = "mixing";
    pub const HOPPING: &str = "hopping";
    pub const HOPPED: &str = "hopped";
    pub const CLOSING: &str = "closing";

    /// The states a worker advances (the others wait for the client, or are done).
    pub const WORKING: [&str; 14] = [
        FUNDED, SWAPPING, SWAPPED, DELIVERING, DELIVERED, REFUNDING, ENCRYPTING, CREDITING, FUNDING, DEPOSITING,
        MIXING, HOPPING, HOPPED, CLOSING,
    ];
}

/// What a session moves, fixed when it is made: whose tokens, which, how many, to whom, and
/// what the swap is expected and bound to give (an encrypt or a shield gives what it takes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Order {
    pub payer: Address,
    pub from_mint: Address,
    pub to_mint: Address,
    pub amount: Amount,
    pub destination: Address,
    pub slippage_bps: u16,
    pub expected_out: Amount,
    pub min_out: Amount,
}

impl Order {
    /// The order signed session terms state, quoted to give `expected_out` under `slippage_bps`.
    pub fn of_terms(terms: &ParsedTerms, slippage_bps: u16, expected_out: u64) -> Order {
        Order {
            payer: terms.payer,
            from_mint: terms.from_mint,
            to_mint: terms.to_mint,
            amount: Amount(terms.amount),
            destination: terms.destination,
            slippage_bps,
            expected_out: Amount(expected_out),
            min_out: Amount(terms.min_out),
        }
    }

    /// `amount` of `mint` from `payer` to `destination` unchanged (an encrypt or a shield).
    pub fn moving(payer: Address, (mint, amount): (Address, u64), destination: Address) -> Order {
        let amount = Amount(amount);
        Order {
            payer,
            from_mint: mint,
            to_mint: mint,
            amount,
            destination,
            slippage_bps: 0,
            expected_out: amount,
            min_out: amount,
        }
    }
}

/// One session row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub id: String,
    pub mode: String,
    pub state: String,
    pub wallet_id: Option<String>,
    pub owner: Option<String>,
    pub order: Order,
    pub expires_at: i64,
    /// The last block height at which the funding transaction handed out can land.
    pub funding_valid_height: i64,
    /// The session's key (a one-shot swap's), or the key the tokens leave from.
    pub ephemeral: Address,
    pub object_id: String,
    pub commitment_json: String,
    pub bucketed: bool,
    pub bucket_label: Option<String>,
    pub funding_tx_sig: Option<String>,
    pub swap_tx_sig: Option<String>,
    pub final_tx_sig: Option<String>,
    pub refund_tx_sig: Option<String>,
    /// A shield's fourth transaction: its intermediate key's close.
    pub close_tx_sig: Option<String>,
    pub actual_out: Option<Amount>,
    /// A signed transaction recorded before it is sent: its kind (`swap`, `deliver`,
    /// `refund`), bytes (base64), signature and last valid block height.
    pub pending: Option<Pending>,
    /// Why a session failed, or what a refund answered (`expired`, a funding or router code).
    pub reason: Option<String>,
    pub attempts: i64,
    pub receipt_json: Option<String>,
    pub attestation_address: Option<String>,
    pub attestation_tx_sig: Option<String>,
    pub funded_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// The token of the worker holding this session (set by [`claim`]).
    pub lease_owner: Option<String>,
}

impl Session {
    /// A session in its first `state`, `mode`, moving `order` from `ephemeral`, made `now`;
    /// nothing recorded yet and no lease (the caller sets what its mode knows at the start).
    /// It expires `now` unless the caller sets `expires_at`: a forgotten expiry ends the
    /// session at once rather than leaving it open.
    pub fn new(id: String, (mode, state): (&str, &str), order: Order, ephemeral: Address, now: i64) -> Session {
        Session {
            id,
            mode: mode.into(),
            state: state.into(),
            wallet_id: None,
            owner: None,
            order,
            expires_at: now,
            funding_valid_height: 0,
            ephemeral,
            object_id: String::new(),
            commitment_json: String::new(),
            bucketed: false,
            bucket_label: None,
            funding_tx_sig: None,
            swap_tx_sig: None,
            final_tx_sig: None,
            refund_tx_sig: None,
            close_tx_sig: None,
            actual_out: None,
            pending: None,
            reason: None,
            attempts: 0,
            receipt_json: None,
            attestation_address: None,
            attestation_tx_sig: None,
            funded_at: None,
            created_at: now,
            updated_at: now,
            lease_owner: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pending {
    pub kind: String,
    pub transaction: String,
    pub signature: String,
    pub last_valid_block_height: i64,
}

/// The columns set when a session is made and never changed after (but `lease_owner`, which
/// [`claim`] and [`save`] move, and `funding_tx_sig`, which [`record_funding`] sets once).
const FIXED: [&str; 23] = [
    "id",
    "mode",
    "wallet_id",
    "owner",
    "payer",
    "from_mint",
    "to_mint",
    "amount",
    "destination",
    "slippage_bps",
    "expected_out",
    "min_out",
    "expires_at",
    "funding_valid_height",
    "ephemeral",
    "object_id",
    "commitment_json",
    "bucketed",
    "bucket_label",
    "funding_tx_sig",
    "created_at",
    "updated_at",
    "lease_owner",
];

/// The columns a worker's step changes, bound by [`bind_progress`] in this order.
const PROGRESS: [&str; 16] = [
    "state",
    "swap_tx_sig",
    "final_tx_sig",
    "refund_tx_sig",
    "close_tx_sig",
    "actual_out",
    "pending_kind",
    "pending_tx",
    "pending_sig",
    "pending_valid_height",
    "reason",
    "attempts",
    "receipt_json",
    "attestation_address",
    "attestation_tx_sig",
    "funded_at",
];

type Query<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>;

/// Binds the [`PROGRESS`] columns of `s`, in order.
fn bind_progress<'q>(query: Query<'q>, s: &'q Session) -> Query<'q> {
    let pending = s.pending.as_ref();
    query
        .bind(&s.state)
        .bind(&s.swap_tx_sig)
        .bind(&s.final_tx_sig)
        .bind(&s.refund_tx_sig)
        .bind(&s.close_tx_sig)
        .bind(s.actual_out.map(|a| a.to_string()))
        .bind(pending.map(|p| p.kind.clone()))
        .bind(pending.map(|p| p.transaction.clone()))
        .bind(pending.map(|p| p.signature.clone()))
        .bind(pending.map(|p| p.last_valid_block_height))
        .bind(&s.reason)
        .bind(s.attempts)
        .bind(&s.receipt_json)
        .bind(&s.attestation_address)
        .bind(&s.attestation_tx_sig)
        .bind(s.funded_at)
}

/// Every column, for the reads.
static COLUMNS: LazyLock<String> = LazyLock::new(|| [FIXED.as_slice(), PROGRESS.as_slice()].concat().join(", "));

/// The insert of a new session, written once.
static INSERT: LazyLock<String> = LazyLock::new(|| {
    let values: Vec<String> = (1..=FIXED.len() + PROGRESS.len()).map(|i| format!("${i}")).collect();
    format!("INSERT INTO swap_sessions ({}, lease_until) VALUES ({}, 0)", *COLUMNS, values.join(", "))
});

/// A worker's save of its step, written once: the [`PROGRESS`] columns, then `updated_at`,
/// `lease_until`, the id and the holder's token.
static SAVE: LazyLock<String> = LazyLock::new(|| {
    let set: Vec<String> = PROGRESS.iter().enumerate().map(|(i, column)| format!("{column} = ${}", i + 1)).collect();
    let n = PROGRESS.len();
    format!(
        "UPDATE swap_sessions SET {}, updated_at = ${}, lease_until = ${}, lease_owner = NULL \
         WHERE id = ${} AND lease_owner = ${}",
        set.join(", "),
        n + 1,
        n + 2,
        n + 3,
        n + 4
    )
});

fn from_row(r: &AnyRow) -> Result<Session, sqlx::Error> {
    let pending = match (
        r.try_get::<Option<String>, _>("pending_kind")?,
        r.try_get::<Option<String>, _>("pending_tx")?,
        r.try_get::<Option<String>, _>("pending_sig")?,
        r.try_get::<Option<i64>, _>("pending_valid_height")?,
    ) {
        (Some(kind), Some(transaction), Some(signature), Some(last_valid_block_height)) => {
            Some(Pending { kind, transaction, signature, last_valid_block_height })
        }
        _ => None,
    };
    Ok(Session {
        id: r.try_get("id")?,
        mode: r.try_get("mode")?,
        state: r.try_get("state")?,
        wallet_id: r.try_get("wallet_id")?,
        owner: r.try_get("owner")?,
        order: Order {
            payer: address(r, "payer")?,
            from_mint: address(r, "from_mint")?,
            to_mint: address(r, "to_mint")?,
            amount: amount(r, "amount")?,
            destination: address(r, "destination")?,
            slippage_bps: u16::try_from(r.try_get::<i64, _>("slippage_bps")?)
                .map_err(|_| sqlx::Error::Decode("swap_sessions.slippage_bps is out of range".into()))?,
            expected_out: amount(r, "expected_out")?,
            min_out: amount(r, "min_out")?,
        },
        expires_at: r.try_get("expires_at")?,
        funding_valid_height: r.try_get("funding_valid_height")?,
        ephemeral: address(r, "ephemeral")?,
        object_id: r.try_get("object_id")?,
        commitment_json: r.try_get("commitment_json")?,
        bucketed: r.try_get::<i64, _>("bucketed")? != 0,
        bucket_label: r.try_get("bucket_label")?,
        funding_tx_sig: r.try_get("funding_tx_sig")?,
        swap_tx_sig: r.try_get("swap_tx_sig")?,
        final_tx_sig: r.try_get("final_tx_sig")?,
        refund_tx_sig: r.try_get("refund_tx_sig")?,
        close_tx_sig: r.try_get("close_tx_sig")?,
        actual_out: match r.try_get::<Option<String>, _>("actual_out")? {
            Some(text) => Some(Amount::parse(&text).ok_or_else(|| corrupt("actual_out", "an amount"))?),
            None => None,
        },
        pending,
        reason: r.try_get("reason")?,
        attempts: r.try_get("attempts")?,
        receipt_json: r.try_get("receipt_json")?,
        attestation_address: r.try_get("attestation_address")?,
        attestation_tx_sig: r.try_get("attestation_tx_sig")?,
        funded_at: r.try_get("funded_at")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
        lease_owner: r.try_get("lease_owner")?,
    })
}

/// Addresses and amounts are stored as their text (base58, decimal); one that does not read
/// back is a corrupt row.
fn address(r: &AnyRow, column: &'static str) -> Result<Address, sqlx::Error> {
    Address::parse(&r.try_get::<String, _>(column)?).ok_or_else(|| corrupt(column, "base58"))
}

fn amount(r: &AnyRow, column: &'static str) -> Result<Amount, sqlx::Error> {
    Amount::parse(&r.try_get::<String, _>(column)?).ok_or_else(|| corrupt(column, "an amount"))
}

fn corrupt(column: &str, what: &str) -> sqlx::Error {
    sqlx::Error::Decode(format!("swap_sessions.{column} is not {what}").into())
}

/// Inserts a new session through `db` (the pool, or an open transaction).
pub async fn insert<'e>(db: impl sqlx::Executor<'e, Database = sqlx::Any>, s: &Session) -> Result<(), StoreError> {
    let query = sqlx::query(&INSERT)
        .bind(&s.id)
        .bind(&s.mode)
        .bind(&s.wallet_id)
        .bind(&s.owner)
        .bind(s.order.payer.to_string())
        .bind(s.order.from_mint.to_string())
        .bind(s.order.to_mint.to_string())
        .bind(s.order.amount.to_string())
        .bind(s.order.destination.to_string())
        .bind(i64::from(s.order.slippage_bps))
        .bind(s.order.expected_out.to_string())
        .bind(s.order.min_out.to_string())
        .bind(s.expires_at)
        .bind(s.funding_valid_height)
        .bind(s.ephemeral.to_string())
        .bind(&s.object_id)
        .bind(&s.commitment_json)
        .bind(i64::from(s.bucketed))
        .bind(&s.bucket_label)
        .bind(&s.funding_tx_sig)
        .bind(s.created_at)
        .bind(s.updated_at)
        .bind(&s.lease_owner);
    bind_progress(query, s).execute(db).await?;
    Ok(())
}

pub async fn get(store: &Store, id: &str) -> Result<Option<Session>, StoreError> {
    let row = sqlx::query(&format!("SELECT {} FROM swap_sessions WHERE id = $1", *COLUMNS))
        .bind(id)
        .fetch_optional(store.pool())
        .await?;
    Ok(row.as_ref().map(from_row).transpose()?)
}

/// Records what changed in a session the caller holds (its `lease_owner`) and releases it;
/// no other worker takes it before `retry_at` (unix seconds; 0: at once). False when the lease
/// was lost (it ran out and another worker took the session, or a route moved it on): then
/// nothing was written and the caller stops.
pub async fn save<'e>(
    db: impl sqlx::Executor<'e, Database = sqlx::Any>,
    s: &Session,
    now: i64,
    retry_at: i64,
) -> Result<bool, StoreError> {
    let done = bind_progress(sqlx::query(&SAVE), s)
        .bind(now)
        .bind(retry_at)
        .bind(&s.id)
        .bind(&s.lease_owner)
        .execute(db)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Why a funding signature was not recorded.
#[derive(Debug, PartialEq, Eq)]
pub enum FundingRefused {
    NotFound,
    /// The session is past waiting for funding.
    WrongState(String),
    /// Another session already names this transaction.
    AlreadyUsed,
}

/// Can `s` take a funding signature: waiting for one, or failed at expiry without one (a late
/// funding is then refunded).
pub fn takes_funding(s: &Session) -> bool {
    s.state == state::AWAITING_FUNDING
        || (s.state == state::FAILED && s.reason.as_deref() == Some(EXPIRED) && s.funding_tx_sig.is_none())
}

/// The `reason` of a session that expired.
pub const EXPIRED: &str = "expired";

/// Records the enclave-checked funding of a session that takes one, in one step (so a
/// signature funds one session only), moving it to `next` (`funded`, or `refunding` when it
/// came after expiry) and taking it from any worker that held it.
pub async fn record_funding(
    store: &Store,
    id: &str,
    signature: &str,
    next: &str,
    reason: Option<&str>,
    now: i64,
) -> Result<Result<Session, FundingRefused>, StoreError> {
    let done = sqlx::query(
        "UPDATE swap_sessions SET funding_tx_sig = $1, state = $2, reason = $3, funded_at = $4, attempts = 0, \
         updated_at = $4, lease_until = 0, lease_owner = NULL WHERE id = $5 AND funding_tx_sig IS NULL AND \
         (state = $6 OR (state = $7 AND reason = $8))",
    )
    .bind(signature)
    .bind(next)
    .bind(reason)
    .bind(now)
    .bind(id)
    .bind(state::AWAITING_FUNDING)
    .bind(state::FAILED)
    .bind(EXPIRED)
    .execute(store.pool())
    .await
    .map_err(StoreError::from);
    let refused = match done {
        Ok(r) if r.rows_affected() == 1 => return Ok(get(store, id).await?.ok_or(FundingRefused::NotFound)),
        Ok(_) => match get(store, id).await? {
            None => FundingRefused::NotFound,
            Some(s) if s.funding_tx_sig.as_deref() == Some(signature) => return Ok(Ok(s)),
            Some(s) => FundingRefused::WrongState(s.state),
        },
        Err(e) if is_unique_violation(&e) => FundingRefused::AlreadyUsed,
        Err(e) => return Err(e),
    };
    Ok(Err(refused))
}

/// The session that recorded `signature` as its funding, if any.
pub async fn funded_by(store: &Store, signature: &str) -> Result<Option<String>, StoreError> {
    let row = sqlx::query("SELECT id FROM swap_sessions WHERE funding_tx_sig = $1")
        .bind(signature)
        .fetch_optional(store.pool())
        .await?;
    Ok(row.map(|r| r.try_get("id")).transpose()?)
}

/// Takes one session a worker should advance (not held, and not waiting for a retry) and
/// holds it for `lease_secs` under a fresh token. Sessions still waiting for funding are
/// taken once they expired, to fail them (or refund what arrived).
pub async fn claim(store: &Store, now: i64, lease_secs: i64) -> Result<Option<Session>, StoreError> {
    let working: Vec<String> = state::WORKING.iter().map(|s| format!("'{s}'")).collect();
    let token = crate::ids::random_hex(16);
    let row = sqlx::query(&format!(
        "UPDATE swap_sessions SET lease_until = $1, lease_owner = $2 WHERE id = (SELECT id FROM swap_sessions WHERE \
         lease_until <= $3 AND (state IN ({}) OR (state = '{}' AND expires_at < $3)) ORDER BY updated_at LIMIT 1) \
         AND lease_until <= $3 RETURNING {}",
        working.join(", "),
        state::AWAITING_FUNDING,
        *COLUMNS
    ))
    .bind(now + lease_secs)
    .bind(&token)
    .bind(now)
    .fetch_optional(store.pool())
    .await?;
    Ok(row.as_ref().map(from_row).transpose()?)
}

/// Fundings of `amount` of `mint` since `since` (unix seconds): the anonymity set.
pub async fn fundings(store: &Store, mint: &Address, amount: Amount, since: i64) -> Result<i64, StoreError> {
    let row =
        sqlx::query("SELECT COUNT(*) AS n FROM swap_sessions WHERE from_mint = $1 AND amount = $2 AND funded_at >= $3")
            .bind(mint.to_string())
            .bind(amount.to_string())
            .bind(since)
            .fetch_one(store.pool())
            .await?;
    Ok(row.try_get("n")?)
}
