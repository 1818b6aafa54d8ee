//! The wallet routes: thin handlers over `records`, `fund` and `webhooks`. Each takes its wallet
//! through `OwnedWallet`, which checks the bearer key (scope `swap`) first, then that the wallet
//! is the caller's, before the handler reads anything.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{FromRef, FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use chain::Chain;
use serde::Serialize;
use serde_json::json;
use shared::address::Address;
use shared::amount::Amount;
use shared::api::{WalletCreated, WalletFundIntent};
use shared::wire::codes;

use super::bodies::{CreateWalletBody, EncryptBody, FundIntentBody, ManagedSwapBody, PayoutBody};
use super::records::{self, Operation, Wallet, WalletAuditEntry};
use super::requests;
use super::webhooks::{self, WebhookDelivery, WebhookMessage};
use super::{fund, now_ms};
use crate::accounts::keys::{Authorized, Swap};
use crate::accounts::{ApiKeys, Caller};
use crate::http::body;
use crate::http::error::{ErrorBody, RelayError};
use crate::state::{AgentsState, App};
use crate::store::Store;
use crate::swaps::params::Fields;
use crate::swaps::quote::Pair;

/// Most mints one balance call reads.
const MAX_MINTS: usize = 20;

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WalletBalance {
    #[schema(value_type = String)]
    pub mint: Address,
    /// `encrypted` (the private balance the enclave keeps, raw = base units), `public` (the
    /// on-chain token account, raw = base units), `unknown` (raw null: the enclave or the
    /// chain did not answer). Each mint asked gets its `encrypted` entry, then its `public` one.
    pub state: &'static str,
    #[schema(value_type = Option<String>)]
    pub raw: Option<Amount>,
    /// On an `encrypted` entry: the enclave's signed statement of that balance, read from the
    /// mint's witnessed head book (docs/wallets.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub statement: Option<shared::privacy::BalanceStatement>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct WalletBalances {
    pub balances: Vec<WalletBalance>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WalletAuditPage {
    pub wallet_id: String,
    pub entries: Vec<WalletAuditEntry>,
    /// The `offset` of the next page; null on the last.
    pub next_offset: Option<i64>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDeliveryLog {
    pub wallet_id: String,
    pub messages: Vec<WebhookMessage>,
    pub deliveries: Vec<WebhookDelivery>,
}

/// The path's wallet `{id}`, the caller's (a key with scope `swap`): 404 for an id that cannot
/// exist or no such wallet, 403 for another account's.
pub struct OwnedWallet {
    pub wallet: Wallet,
    pub caller: Caller,
}

impl<St: Send + Sync> FromRequestParts<St> for OwnedWallet
where
    Arc<ApiKeys>: FromRef<St>,
    Store: FromRef<St>,
{
    type Rejection = RelayError;

    async fn from_request_parts(parts: &mut Parts, state: &St) -> Result<Self, RelayError> {
        let Authorized { caller, .. } = Authorized::<Swap>::from_request_parts(parts, state).await?;
        let no_such = || RelayError::NotFound("no such wallet");
        let Path(params) =
            Path::<HashMap<String, String>>::from_request_parts(parts, state).await.map_err(|_| no_such())?;
        let id = params.get("id").and_then(|id| shared::swap::parse_uuid(id)).ok_or_else(no_such)?;
        let store = Store::from_ref(state);
        let wallet = records::get(&store, &shared::swap::format_uuid(&id)).await?.ok_or_else(no_such)?;
        if wallet.key_id != caller.key_id {
            return Err(RelayError::Forbidden("this wallet belongs to another account".into()));
        }
        Ok(OwnedWallet { wallet, caller })
    }
}

#[utoipa::path(post, path = "/agents/v1/wallets", tag = "agents",
    summary = "Create a managed wallet (Mode A, contract §2.9): an enclave-made key, and a webhook secret shown once",
    security(("ApiKey" = [])), request_body = CreateWalletBody,
    responses((status = 201, body = WalletCreated), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody), (status = 501, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn create(
    State(api): State<AgentsState>,
    Authorized { caller, .. }: Authorized<Swap>,
    body: Body,
) -> Result<(StatusCode, Json<WalletCreated>), RelayError> {
    let key_id = caller.key_id;
    let asked: CreateWalletBody = Fields::parse(&body::read(body, body::MAX_SMALL_BODY).await?)?;
    let agents = api.configured()?;
    let owner_pubkey = asked.owner_pubkey.map(|owner| owner.to_string());
    let webhook_url = api.wallets.webhooks.check_url(&asked.webhook_url).await?;
    let wallet_id = crate::ids::new_uuid();
    // The enclave seals the key with the wallet id and owner: it checks owner signatures
    // against what it sealed, never against what a relay says.
    let request = shared::privacy::NewWallet { wallet_id: wallet_id.clone(), owner_pubkey: owner_pubkey.clone() };
    let created: shared::privacy::CreatedWallet =
        crate::enclaves::objects::ask(&api.enclaves, "/wallets", &request).await?;
    let (object, certificate) = (created.object, created.certificate);
    let address =
        object.public_key.clone().ok_or(RelayError::EnclaveAnswer("a wallet key came back without its public key"))?;
    let key = Address::parse(&address).ok_or(RelayError::EnclaveAnswer("a wallet key that is not base58"))?;
    if certificate.verify().is_err()
        || (&certificate.wallet_id, certificate.address, certificate.owner_pubkey)
            != (&wallet_id, key, asked.owner_pubkey)
    {
        return Err(RelayError::EnclaveAnswer("the enclave's wallet certificate is not this wallet's"));
    }
    crate::enclaves::objects::insert(&api.store, &object, crate::unix_now()).await?;
    let wallet = Wallet {
        id: wallet_id,
        key_id,
        address: key,
        object_id: object.id,
        owner_pubkey: owner_pubkey.clone(),
        network: agents.config.network.clone(),
        webhook_url: webhook_url.clone(),
        webhook_secret: webhooks::new_secret(),
        created_at: crate::unix_now(),
    };
    let data = json!({"walletId": wallet.id, "privAddress": address, "network": wallet.network,
                      "ownerPubkey": owner_pubkey});
    records::insert(&api.store, &wallet, Operation { kind: "created", event_type: "wallet.created", data }, now_ms())
        .await?;
    api.wallets.webhooks.wake.notify_one();
    tracing::info!(wallet = %wallet.id, "managed wallet created");
    Ok((
        StatusCode::CREATED,
        Json(WalletCreated {
            funding_hint: format!(
                "Send SPL tokens to {address}'s associated token account of the mint; \
                 POST /agents/v1/wallets/{}/fund-intent builds that transaction for a payer to sign",
                wallet.id
            ),
            wallet_id: wallet.id,
            priv_address: key,
            network: wallet.network,
            webhook_secret: wallet.webhook_secret,
            webhook_url,
            owner_pubkey: asked.owner_pubkey,
            certificate,
        }),
    ))
}

#[utoipa::path(get, path = "/agents/v1/wallets/{id}/certificate", tag = "agents",
    summary = "The enclave's signed certificate of the wallet (id, address, owner), issued again by the current enclave",
    security(("ApiKey" = [])), params(("id" = String, Path, description = "The wallet id (uuid)")),
    responses((status = 200, body = Object), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn certificate(
    State(api): State<AgentsState>,
    OwnedWallet { wallet, .. }: OwnedWallet,
) -> Result<Json<shared::privacy::WalletCertificate>, RelayError> {
    let object = crate::enclaves::objects::load_named(&api.store, &wallet.object_id).await?;
    let request = shared::privacy::PrivacyRequest::Certificate { wallet: object.blob };
    match crate::enclaves::objects::ask(&api.enclaves, "/privacy/step", &request).await? {
        shared::privacy::PrivacyAnswer::Certificate { certificate } => Ok(Json(certificate)),
        _ => Err(RelayError::EnclaveAnswer("a certificate answer without its certificate")),
    }
}

#[utoipa::path(post, path = "/agents/v1/wallets/{id}/fund-intent", tag = "agents",
    summary = "An unsigned transaction from the payer into the wallet (creating its token account when needed)",
    security(("ApiKey" = [])), params(("id" = String, Path, description = "The wallet id (uuid)")),
    request_body = FundIntentBody,
    responses((status = 200, body = WalletFundIntent), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn fund_intent(
    State(api): State<AgentsState>,
    OwnedWallet { wallet, .. }: OwnedWallet,
    body: Body,
) -> Result<Json<WalletFundIntent>, RelayError> {
    let asked: FundIntentBody = Fields::parse(&body::read(body, body::MAX_SMALL_BODY).await?)?;
    let agents = api.configured()?;
    let FundIntentBody { mint, amount, payer_pubkey: payer } = asked;
    let decimals = agents.mint("mint", &mint)?.decimals;
    let to = wallet.address;
    if payer == to {
        return Err(RelayError::input(codes::INVALID_FIELD, "`payerPubkey` is the wallet itself"));
    }
    let blockhash = agents.chain.latest_blockhash().await.map_err(RelayError::Chain)?;
    let tx = fund::intent(&payer, &to, &mint, amount, decimals, blockhash.blockhash);
    let data = json!({"walletId": wallet.id, "mint": mint.to_string(), "amount": amount.to_string(),
                      "payerPubkey": payer.to_string(), "to": wallet.address.to_string()});
    records::record(
        &api.store,
        &wallet.id,
        Operation { kind: "fund_intent", event_type: "wallet.fund_intent", data },
        now_ms(),
    )
    .await?;
    api.wallets.webhooks.wake.notify_one();
    Ok(Json(WalletFundIntent {
        tx: shared::b64::encode(tx.serialize()),
        mint,
        amount: Amount(amount),
        token_account: shared::swap::funding::token_account(&to, &mint),
        to: wallet.address,
        last_valid_block_height: blockhash.last_valid_block_height,
    }))
}

#[utoipa::path(get, path = "/agents/v1/wallets/{id}/balance", tag = "agents",
    summary = "The wallet's balances of the given mints: private (encrypted) and public, per mint",
    security(("ApiKey" = [])),
    params(("id" = String, Path, description = "The wallet id (uuid)"),
           ("mints" = String, Query, description = "Comma-separated mint addresses (at most 20)")),
    responses((status = 200, body = WalletBalances), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn balance(
    State(api): State<AgentsState>,
    OwnedWallet { wallet, .. }: OwnedWallet,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<WalletBalances>, RelayError> {
    let fields = Fields::from_query(query);
    fields.require(&["mints"])?;
    let agents = api.configured()?;
    let mints = fields
        .get("mints")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(|m| {
            Address::parse(m)
                .ok_or_else(|| RelayError::input(codes::INVALID_MINT, format!("`{m}` is not a base58 address")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if mints.is_empty() {
        return Err(RelayError::MissingFields(vec!["mints"]));
    }
    if mints.len() > MAX_MINTS {
        return Err(RelayError::input(codes::INVALID_FIELD, format!("`mints` lists at most {MAX_MINTS} mints")));
    }
    let owner = wallet.address;
    let backend = super::private::backend(&api, agents);
    // Private balances as the enclave reads them from the sealed books.
    let private = super::backend::PrivacyBackend::private_balances(&backend, &wallet, &mints).await?;
    let mut balances = Vec::with_capacity(2 * mints.len());
    for (mint, private) in mints.iter().zip(private) {
        let state = if private.is_some() { "encrypted" } else { "unknown" };
        let raw = private.as_ref().map(|s| s.balance);
        balances.push(WalletBalance { mint: *mint, state, raw, statement: private });
        let raw = fund::public_balance(&agents.chain, &owner, mint).await;
        let state = if raw.is_some() { "public" } else { "unknown" };
        balances.push(WalletBalance { mint: *mint, state, raw: raw.map(Amount), statement: None });
    }
    Ok(Json(WalletBalances { balances }))
}

/// `limit` (1 to 200, default 50) and `offset` (0 or more) of a paged route.
fn page(query: &HashMap<String, String>) -> Result<(i64, i64), RelayError> {
    let number = |name: &str, default: i64, range: std::ops::RangeInclusive<i64>| match query.get(name) {
        None => Ok(default),
        Some(text) => text.parse::<i64>().ok().filter(|n| range.contains(n)).ok_or_else(|| {
            RelayError::input(
                codes::INVALID_FIELD,
                format!("`{name}` must be an integer from {} to {}", range.start(), range.end()),
            )
        }),
    };
    Ok((number("limit", 50, 1..=200)?, number("offset", 0, 0..=i64::from(u32::MAX))?))
}

#[utoipa::path(get, path = "/agents/v1/wallets/{id}/audit", tag = "agents",
    summary = "The wallet's operations, newest first, paged",
    security(("ApiKey" = [])),
    params(("id" = String, Path, description = "The wallet id (uuid)"),
           ("limit" = Option<u32>, Query, description = "1 to 200 (default 50)"),
           ("offset" = Option<u32>, Query, description = "Entries to skip (default 0)")),
    responses((status = 200, body = WalletAuditPage), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn audit(
    State(api): State<AgentsState>,
    OwnedWallet { wallet, .. }: OwnedWallet,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<WalletAuditPage>, RelayError> {
    let (limit, offset) = page(&query)?;
    // One more than asked says whether a next page exists.
    let mut entries = records::audit(&api.store, &wallet.id, limit + 1, offset).await?;
    let next_offset = (entries.len() as i64 > limit).then_some(offset + limit);
    entries.truncate(limit as usize);
    Ok(Json(WalletAuditPage { wallet_id: wallet.id, entries, next_offset }))
}

#[utoipa::path(get, path = "/agents/v1/wallets/{id}/webhooks", tag = "agents",
    summary = "The wallet's webhook events and delivery log (every attempt), newest first",
    security(("ApiKey" = [])),
    params(("id" = String, Path, description = "The wallet id (uuid)"),
           ("limit" = Option<u32>, Query, description = "1 to 200 (default 50)")),
    responses((status = 200, body = WebhookDeliveryLog), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn deliveries(
    State(api): State<AgentsState>,
    OwnedWallet { wallet, .. }: OwnedWallet,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<WebhookDeliveryLog>, RelayError> {
    let (limit, _) = page(&query)?;
    let (messages, deliveries) = webhooks::log(&api.store, &wallet.id, limit).await?;
    Ok(Json(WebhookDeliveryLog { wallet_id: wallet.id, messages, deliveries }))
}

/// Encrypt and shield answers (contract §4.3): a session to poll.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WalletSessionStarted {
    pub session_id: String,
    /// `running`: poll `GET /agents/v1/sessions/{sessionId}`.
    pub status: &'static str,
    pub estimated_seconds: u64,
}

/// Withdraw answer (contract §4.3, docs/wallets.md).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WalletWithdrawn {
    /// The enclave's ed25519 signature (base58) over the withdrawal order: proof of the debit.
    pub queue_signature: String,
    /// The payout transaction's signature (base58): find it on chain.
    pub callback_signature: String,
    /// `landed`, or `pending` when it had not landed within the relay's wait (it is resent
    /// until the chain has a verdict).
    pub status: &'static str,
    /// The order both signatures belong to.
    #[schema(value_type = Object)]
    pub order: shared::privacy::WithdrawalOrder,
}

/// The owner's signature headers: all three or none (docs/wallets.md).
fn owner_auth(headers: &HeaderMap) -> Result<Option<shared::privacy::OwnerAuth>, RelayError> {
    use shared::privacy::{OWNER_NONCE_HEADER, OWNER_SIGNATURE_HEADER, OWNER_TIMESTAMP_HEADER};
    let get = |name: &str| headers.get(name).map(|v| v.to_str().unwrap_or_default().to_string());
    let bad = |what: &str| RelayError::input(codes::INVALID_FIELD, format!("the owner signature headers: {what}"));
    match (get(OWNER_TIMESTAMP_HEADER), get(OWNER_NONCE_HEADER), get(OWNER_SIGNATURE_HEADER)) {
        (None, None, None) => Ok(None),
        (Some(timestamp), Some(nonce), Some(signature)) => {
            let timestamp = timestamp.parse::<u64>().map_err(|_| bad("x-owner-timestamp is not unix seconds"))?;
            if !shared::privacy::nonce_ok(&nonce) {
                return Err(bad("x-owner-nonce must be 1 to 64 printable characters"));
            }
            if shared::b64::decode_array::<64>(&signature).is_none() {
                return Err(bad("x-owner-signature must be base64 of 64 bytes"));
            }
            Ok(Some(shared::privacy::OwnerAuth { timestamp, nonce, signature }))
        }
        _ => Err(bad("send x-owner-timestamp, x-owner-nonce and x-owner-signature together")),
    }
}

#[utoipa::path(post, path = "/agents/v1/wallets/{id}/encrypt", tag = "agents",
    summary = "Move tokens from the wallet's public balance into its private (encrypted) balance: one transaction, a session to poll",
    security(("ApiKey" = [])), params(("id" = String, Path, description = "The wallet id (uuid)")),
    request_body = EncryptBody,
    responses((status = 200, body = WalletSessionStarted), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn encrypt(
    State(api): State<AgentsState>,
    OwnedWallet { wallet, .. }: OwnedWallet,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<WalletSessionStarted>, RelayError> {
    let bytes = body::read(body, body::MAX_SMALL_BODY).await?;
    let agents = api.configured()?;
    let EncryptBody { mint, amount } = Fields::parse(&bytes)?;
    agents.mint("mint", &mint)?;
    let auth = owner_auth(&headers)?;
    let kept = requests::key_of(auth.as_ref(), &bytes);
    if let Some(earlier) = requests::earlier(&api.store, &wallet.id, kept.as_ref(), "encrypt").await? {
        return started(&earlier);
    }
    let request = super::private::wallet_request(&api, &wallet, &bytes, auth).await?;
    let session = super::private::start_encrypt(&api, &wallet, request, (mint, amount), kept.as_ref()).await?;
    Ok(Json(WalletSessionStarted {
        session_id: session.id,
        status: "running",
        estimated_seconds: super::private::ENCRYPT_SECONDS,
    }))
}

/// The answer kept for a session an owner request started (a retry of the same request).
fn started(earlier: &serde_json::Value) -> Result<Json<WalletSessionStarted>, RelayError> {
    let session_id =
        earlier["sessionId"].as_str().ok_or(RelayError::Internal("a kept answer lacks its session id"))?.to_string();
    let estimated_seconds = earlier["estimatedSeconds"].as_u64().unwrap_or_default();
    Ok(Json(WalletSessionStarted { session_id, status: "running", estimated_seconds }))
}

#[utoipa::path(post, path = "/agents/v1/wallets/{id}/swap", tag = "agents",
    summary = "Swap from the wallet's public balance to a destination (Mode A): a swap session the wallet funds, to poll",
    description = "The enclave opens a swap session whose terms are this request (the wallet pays; refunds return to it) and signs its funding from the wallet; then it runs as a one-shot session. Owner-signed when the wallet has an owner. Billed per session like a one-shot swap. Moves real funds.",
    security(("ApiKey" = [])), params(("id" = String, Path, description = "The wallet id (uuid)")),
    request_body = ManagedSwapBody,
    responses((status = 200, body = WalletSessionStarted), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 402, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
              (status = 409, body = ErrorBody), (status = 429, body = ErrorBody), (status = "default", body = ErrorBody)))]
pub async fn swap(
    State(app): State<App>,
    OwnedWallet { wallet, caller }: OwnedWallet,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<WalletSessionStarted>, RelayError> {
    let who = caller;
    let api = AgentsState::from_ref(&app);
    let bytes = body::read(body, body::MAX_SMALL_BODY).await?;
    let agents = api.configured()?;
    let asked: ManagedSwapBody = Fields::parse(&bytes)?;
    let pair = Pair::check(agents, asked.from_mint, asked.to_mint, asked.amount, asked.slippage_bps)?;
    if asked.destination_pubkey == wallet.address {
        return Err(RelayError::input(codes::INVALID_FIELD, "`destinationPubkey` must not be the wallet itself"));
    }
    let auth = owner_auth(&headers)?;
    let kept = requests::key_of(auth.as_ref(), &bytes);
    // A retry of a swap already started is answered as it was, and not billed again.
    if let Some(earlier) = requests::earlier(&api.store, &wallet.id, kept.as_ref(), "swap").await? {
        return started(&earlier);
    }
    within_pool_allowance(&api, agents, &who.key_id).await?;
    let request = super::private::wallet_request(&api, &wallet, &bytes, auth).await?;
    let bill = crate::billing::metering::Bill {
        price: crate::billing::metering::Price::PerCall(agents.config.session_price_per_call),
        payer: crate::billing::metering::Payer::Key(who),
        route: "/agents/v1/wallets/{id}/swap",
        model: String::new(),
    };
    let slippage = pair.slippage_bps;
    let done = crate::billing::metering::paid(&app, bill, move |app| async move {
        let session =
            super::private::start_swap(&AgentsState::from_ref(&app), &wallet, request, slippage, kept.as_ref()).await?;
        Ok((session, shared::wire::Usage::default()))
    })
    .await?;
    Ok(Json(WalletSessionStarted {
        session_id: done.value.id,
        status: "running",
        estimated_seconds: agents.config.expected_seconds,
    }))
}

#[utoipa::path(post, path = "/agents/v1/wallets/{id}/shield", tag = "agents",
    summary = "Shield: a round trip of the wallet's tokens through the privacy pool to a fresh destination (four transactions, random delays), a session to poll",
    description = "The deposit into the pool, a payout to an intermediate key only the enclave holds, its delivery to the destination, its close. No token conversion; `amount` must be one of the mint's denominations. Owner-signed when the wallet has an owner. Moves real funds.",
    security(("ApiKey" = [])), params(("id" = String, Path, description = "The wallet id (uuid)")),
    request_body = PayoutBody,
    responses((status = 200, body = WalletSessionStarted), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 429, body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn shield(
    State(api): State<AgentsState>,
    OwnedWallet { wallet, caller }: OwnedWallet,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<WalletSessionStarted>, RelayError> {
    let key_id = caller.key_id;
    let bytes = body::read(body, body::MAX_SMALL_BODY).await?;
    let agents = api.configured()?;
    let PayoutBody { mint, amount, destination_pubkey } = Fields::parse(&bytes)?;
    let buckets = &agents.mint("mint", &mint)?.buckets;
    if !buckets.contains(&amount) {
        let listed: Vec<String> = buckets.iter().map(u64::to_string).collect();
        let message = format!("a shield moves one of the mint's denominations: {}", listed.join(", "));
        return Err(RelayError::input(codes::INVALID_AMOUNT, message));
    }
    if destination_pubkey == wallet.address {
        return Err(RelayError::input(
            codes::INVALID_FIELD,
            "`destinationPubkey` must be a fresh address, not the wallet",
        ));
    }
    let auth = owner_auth(&headers)?;
    let kept = requests::key_of(auth.as_ref(), &bytes);
    if let Some(earlier) = requests::earlier(&api.store, &wallet.id, kept.as_ref(), "shield").await? {
        return started(&earlier);
    }
    within_pool_allowance(&api, agents, &key_id).await?;
    let request = super::private::wallet_request(&api, &wallet, &bytes, auth).await?;
    let session =
        super::shield::start(&api, &wallet, request, (mint, amount, destination_pubkey), kept.as_ref()).await?;
    Ok(Json(WalletSessionStarted {
        session_id: session.id,
        status: "running",
        estimated_seconds: super::shield::SECONDS,
    }))
}

#[utoipa::path(post, path = "/agents/v1/wallets/{id}/withdraw", tag = "agents",
    summary = "Pay out from the wallet's private balance to a public address",
    security(("ApiKey" = [])), params(("id" = String, Path, description = "The wallet id (uuid)")),
    request_body = PayoutBody,
    responses((status = 200, body = WalletWithdrawn), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 429, body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn withdraw(
    State(api): State<AgentsState>,
    OwnedWallet { wallet, caller }: OwnedWallet,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<WalletWithdrawn>, RelayError> {
    let key_id = caller.key_id;
    let bytes = body::read(body, body::MAX_SMALL_BODY).await?;
    let agents = api.configured()?;
    let asked: PayoutBody = Fields::parse(&bytes)?;
    agents.mint("mint", &asked.mint)?;
    let auth = owner_auth(&headers)?;
    let kept = requests::key_of(auth.as_ref(), &bytes);
    if let Some(earlier) = requests::earlier(&api.store, &wallet.id, kept.as_ref(), "withdraw").await? {
        let order: shared::privacy::WithdrawalOrder = serde_json::from_value(earlier["order"].clone())
            .map_err(|_| RelayError::Internal("a stored JSON value does not parse"))?;
        let landed = super::private::order_landed(&api, &order.order_id).await?;
        return Ok(Json(WalletWithdrawn {
            queue_signature: order.signature.clone(),
            callback_signature: earlier["callbackSignature"].as_str().unwrap_or_default().to_string(),
            status: if landed { "landed" } else { "pending" },
            order,
        }));
    }
    within_pool_allowance(&api, agents, &key_id).await?;
    let request = super::private::wallet_request(&api, &wallet, &bytes, auth).await?;
    let (withdrawal, landed) = super::private::withdraw(&api, &wallet, &asked.mint, request, kept).await?;
    Ok(Json(WalletWithdrawn {
        queue_signature: withdrawal.order.signature.clone(),
        callback_signature: withdrawal.order.payout_signature.clone(),
        status: if landed { "landed" } else { "pending" },
        order: withdrawal.order,
    }))
}

#[utoipa::path(get, path = "/agents/v1/reserves", tag = "agents",
    summary = "The enclave-signed statement of reserves of one mint: what the pool holds on chain against the private balances it owes",
    params(("mint" = String, Query, description = "A mint the service lists")),
    responses((status = 200, body = Object), (status = 400, body = ErrorBody), (status = 501, body = ErrorBody),
              (status = "default", body = ErrorBody)))]
pub async fn reserves(
    State(api): State<AgentsState>,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Json<shared::privacy::ReservesStatement>, RelayError> {
    let fields = Fields::from_query(query);
    fields.require(&["mint"])?;
    let agents = api.configured()?;
    let mint = fields.mint("mint")?;
    agents.mint("mint", &mint)?;
    let backend = super::private::backend(&api, agents);
    Ok(Json(super::backend::PrivacyBackend::reserves(&backend, &mint).await?))
}

/// The pool pays the SOL of swaps, shields and withdrawals: an account starts at most
/// `agents.wallets.dailyPoolOperations` of them in 24 hours (retries of a started one are not
/// counted: they are answered before this).
async fn within_pool_allowance(
    api: &AgentsState,
    agents: &crate::agents::Agents,
    key_id: &str,
) -> Result<(), RelayError> {
    const DAY_MS: i64 = 86_400_000;
    let now = super::now_ms();
    let (started, oldest) = super::records::pool_paid_since(&api.store, key_id, now - DAY_MS).await?;
    match started < agents.config.wallets.daily_pool_operations {
        true => Ok(()),
        false => Err(RelayError::RateLimited((oldest.unwrap_or(now) + DAY_MS - now) / 1000 + 1)),
    }
}
