//! One-shot private swaps from the client side (DESIGN §11): quote, start a session, check
//! the enclave's commitment and the funding transaction before the payer signs anything,
//! fund, execute, follow the session to its end, and verify its receipt.
//!
//! What is checked before funding, so a relay cannot redirect the money:
//! - the commitment is signed by the ed25519 key of an enclave this client attested;
//! - its terms are the ones asked for (payer, mints, amount, destination) and not expired;
//! - the minimum output is at least the caller's floor;
//! - the funding transaction is exactly the four instructions that fund that committed session
//!   key, giving it no more lamports than the caller allows.

use std::time::Duration;

use chain::{Chain, RpcChain};
use ed25519_dalek::SigningKey;
use serde::Serialize;
use serde_json::Value;
use shared::address::Address;
use shared::amount::Amount;
use shared::solana::Transaction;
use shared::swap::{OneshotStart, ParsedTerms, SwapReceipt, funding};

use crate::Client;
use crate::error::ClientError;

/// What to swap.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OneshotRequest {
    pub payer_pubkey: String,
    pub from_mint: String,
    pub to_mint: String,
    pub amount: String,
    pub destination_pubkey: String,
    pub slippage_bps: u16,
}

/// The caller's limits on what it will fund.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The least output accepted (base units); the session's committed minimum must reach it.
    pub min_out: u64,
    /// The most lamports the funding may give the session key for its rent and fees.
    pub max_lamports: u64,
}

impl Default for Limits {
    fn default() -> Self {
        // 0.01 SOL: two token accounts' rent and a few fees, with room.
        Limits { min_out: 0, max_lamports: 10_000_000 }
    }
}

/// A checked session start: the terms the enclave signed and the funding transaction.
#[derive(Debug)]
pub struct Checked {
    pub start: OneshotStart,
    pub terms: ParsedTerms,
    pub ephemeral: Address,
    pub funding: Transaction,
    pub lamports: u64,
}

/// A swap receipt whose signature, address and terms verified.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifiedReceipt {
    pub receipt: SwapReceipt,
    /// Its key is that of an enclave that passes verification now.
    pub signer_attested: bool,
}

fn refused(what: &'static str) -> ClientError {
    ClientError::Mismatch(what)
}

impl Client {
    pub(crate) async fn post_json<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> Result<T, ClientError> {
        let mut http = self.http.post(format!("{}{path}", self.base)).json(body);
        if let Some(key) = &self.api_key {
            http = http.bearer_auth(key);
        }
        let response = http.send().await.map_err(|_| ClientError::RelayUnreachable(self.base.clone()))?;
        self.read(response).await
    }

    /// `GET /agents/v1/quote` (paid with the API key).
    pub async fn swap_quote(
        &self,
        from: &str,
        to: &str,
        amount: &str,
        slippage_bps: Option<u16>,
    ) -> Result<Value, ClientError> {
        let mut query =
            vec![("fromMint", from.to_string()), ("toMint", to.to_string()), ("amount", amount.to_string())];
        if let Some(bps) = slippage_bps {
            query.push(("slippageBps", bps.to_string()));
        }
        let mut http = self.http.get(format!("{}/agents/v1/quote", self.base)).query(&query);
        if let Some(key) = &self.api_key {
            http = http.bearer_auth(key);
        }
        let response = http.send().await.map_err(|_| ClientError::RelayUnreachable(self.base.clone()))?;
        self.read(response).await
    }

    /// `POST /agents/v1/swaps/oneshot`, unchecked (see [`Client::check_start`]).
    pub async fn start_oneshot(&self, request: &OneshotRequest) -> Result<OneshotStart, ClientError> {
        self.post_json("/agents/v1/swaps/oneshot", request).await
    }

    /// The ed25519 key of an attested enclave equal to `key` (base64), trying each enclave the
    /// relay lists until one is. Errors when none is.
    pub async fn attested_signer(&self, key: &str) -> Result<(), ClientError> {
        let wanted: [u8; 32] =
            shared::b64::decode_array(key).ok_or(refused("the commitment's enclave key is malformed"))?;
        let (report, attested) = self.attest().await?;
        let attested = attested.ok_or_else(|| ClientError::NotAttested(Box::new(report)))?;
        if attested.enclave_public_key == wanted {
            return Ok(());
        }
        let list: Value = self.get("/tee/keys").await?;
        for id in list["enclaves"].as_array().into_iter().flatten().filter_map(|e| e["keyId"].as_str()) {
            let Some(id) = shared::receipt::decode_hex32(id) else { continue };
            if let Ok((_, Some(k))) = self.attest_key(Some(id)).await
                && k.enclave_public_key == wanted
            {
                return Ok(());
            }
        }
        Err(refused("the commitment is not signed by an enclave that passes verification"))
    }

    /// Checks a session start against the request and the limits, and its signer against
    /// attestation; nothing is signed before this passes.
    pub async fn check_start(
        &self,
        start: OneshotStart,
        request: &OneshotRequest,
        limits: Limits,
    ) -> Result<Checked, ClientError> {
        let terms = check_terms(&start, request, limits, shared::time::unix_now())?;
        self.attested_signer(&start.commitment.enclave_pubkey).await?;
        let ephemeral = Address::parse(&start.ephemeral_pubkey).ok_or(refused("ephemeralPubkey is malformed"))?;
        let bytes = shared::b64::decode(&start.funding_tx).map_err(|_| refused("fundingTx is not base64"))?;
        let tx = Transaction::parse(&bytes).map_err(|_| refused("fundingTx is not a transaction"))?;
        let lamports = funding::check(&terms, &ephemeral, &tx, limits.max_lamports)
            .map_err(|e| ClientError::Malformed(e.to_string()))?;
        Ok(Checked { start, terms, ephemeral, funding: tx, lamports })
    }

    /// `POST /agents/v1/swaps/oneshot/{id}/execute`.
    pub async fn execute_oneshot(&self, session_id: &str, funding_tx_sig: &str) -> Result<Value, ClientError> {
        let path = format!("/agents/v1/swaps/oneshot/{session_id}/execute");
        self.post_json(&path, &serde_json::json!({"fundingTxSig": funding_tx_sig})).await
    }

    /// `GET /agents/v1/sessions/{id}`.
    pub async fn session(&self, session_id: &str) -> Result<Value, ClientError> {
        self.get(&format!("/agents/v1/sessions/{session_id}")).await
    }

    /// Polls a session until it is `settled` or `failed` (contract §3 rule 1) or `timeout`.
    pub async fn follow(&self, session_id: &str, timeout: Duration) -> Result<Value, ClientError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let session = self.session(session_id).await?;
            let state = session["state"].as_str().unwrap_or_default();
            if state == "settled" || state == "failed" || tokio::time::Instant::now() >= deadline {
                return Ok(session);
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// `GET /agents/v1/attestations/{id}`, its receipt verified: the signature under the key
    /// it names, the ledger address, and `expect` (when given: the terms the client funded and
    /// its funding signature). Whether that key belongs to an enclave that passes verification
    /// now is reported beside it: a receipt signed before the enclave rebooted stays valid, but
    /// its key can no longer be attested live.
    pub async fn swap_receipt(
        &self,
        session_id: &str,
        expect: Option<(&ParsedTerms, &str)>,
    ) -> Result<VerifiedReceipt, ClientError> {
        let view: Value = self.get(&format!("/agents/v1/attestations/{session_id}")).await?;
        let receipt: SwapReceipt =
            serde_json::from_value(view["receipt"].clone()).map_err(|e| ClientError::Malformed(e.to_string()))?;
        receipt.verify(&self.program_id).map_err(|_| refused("the swap receipt does not verify"))?;
        if view["attestationPda"].as_str() != Some(receipt.address.as_str()) || receipt.session_id != session_id {
            return Err(refused("the attestation answer disagrees with its receipt"));
        }
        let signer_attested = match self.attested_signer(&receipt.enclave_pubkey).await {
            Ok(()) => true,
            Err(ClientError::Mismatch(_)) => false,
            Err(e) => return Err(e),
        };
        if let Some((terms, funding_sig)) = expect {
            let out = Amount::parse(&receipt.actual_out).ok_or(refused("actualOut is malformed"))?.0;
            let same = receipt.from_mint == terms.from_mint.to_string()
                && receipt.to_mint == terms.to_mint.to_string()
                && receipt.amount_in == terms.amount.to_string()
                && receipt.destination == terms.destination.to_string()
                && receipt.funding_tx_sig == funding_sig;
            if !same || out < terms.min_out {
                return Err(refused("the swap receipt is not for the committed terms"));
            }
        }
        Ok(VerifiedReceipt { receipt, signer_attested })
    }
}

/// The commitment's terms against the request, the limits and the clock.
pub fn check_terms(
    start: &OneshotStart,
    request: &OneshotRequest,
    limits: Limits,
    now: u64,
) -> Result<ParsedTerms, ClientError> {
    let c = &start.commitment;
    let terms = c.verify().map_err(|_| refused("the session commitment's signature does not verify"))?;
    let t = &c.terms;
    let asked = t.payer == request.payer_pubkey
        && t.from_mint == request.from_mint
        && t.to_mint == request.to_mint
        && t.amount == request.amount
        && t.destination == request.destination_pubkey;
    if !asked {
        return Err(refused("the session commitment is not for the swap asked (payer, mints, amount or destination)"));
    }
    if t.session_id != start.session_id || c.ephemeral_pubkey != start.ephemeral_pubkey {
        return Err(refused("the session start disagrees with its commitment"));
    }
    if terms.expires_at <= now {
        return Err(refused("the session expired before it was funded"));
    }
    if terms.min_out < limits.min_out || terms.min_out == 0 {
        return Err(refused("the committed minimum output is below the floor asked"));
    }
    Ok(terms)
}

/// A chain client for `url` (web PKI roots for HTTPS).
pub fn rpc(url: &str) -> Result<RpcChain, ClientError> {
    let timeout = Duration::from_secs(20);
    let built = match url.starts_with("https://") {
        true => RpcChain::with_tls(url, timeout, chain::web_pki()),
        false => RpcChain::new(url, timeout),
    };
    built.map_err(|e| ClientError::Malformed(format!("RPC URL: {e}")))
}

/// The spread a relay may keep on top of the slippage asked, when a commitment is checked
/// against the client's own quote (the service's default spread is 30 bps).
pub const MAX_SPREAD_BPS: u16 = 100;

/// The least output to accept, from the client's own quote of `router_url` (the router's
/// wire, not the relay's): the quote less the request's slippage and [`MAX_SPREAD_BPS`].
pub async fn own_floor(router_url: &str, request: &OneshotRequest) -> Result<u64, ClientError> {
    let tls = if router_url.starts_with("https://") { Some(chain::web_pki()) } else { None };
    let router = chain::Router::new(router_url, None, Duration::from_secs(20), tls);
    let mint = |text: &str| Address::parse(text).ok_or_else(|| ClientError::Malformed(format!("mint `{text}`")));
    let amount = Amount::parse(&request.amount).ok_or_else(|| ClientError::Malformed("amount".into()))?.0;
    let quote = router
        .quote(&mint(&request.from_mint)?, &mint(&request.to_mint)?, amount, request.slippage_bps)
        .await
        .map_err(|e| ClientError::Malformed(format!("the router's quote: {e}")))?;
    let kept = u128::from(10_000u16.saturating_sub(request.slippage_bps.saturating_add(MAX_SPREAD_BPS)));
    Ok((u128::from(quote.out_amount) * kept / 10_000) as u64)
}

/// Signs the checked funding with the payer's key, sends it and waits for `confirmed`;
/// returns its signature.
pub async fn fund(chain: &RpcChain, checked: &Checked, payer: &SigningKey) -> Result<String, ClientError> {
    if Address(payer.verifying_key().to_bytes()) != checked.terms.payer {
        return Err(refused("the payer key is not the session's payer"));
    }
    let mut tx = checked.funding.clone();
    tx.sign(&[payer]).map_err(|_| refused("the payer cannot sign the funding"))?;
    let height = chain.latest_blockhash().await?.last_valid_block_height;
    crate::wallets::send_confirmed(chain, &tx, height).await
}

/// A Solana CLI keypair file: a JSON array of 64 numbers (seed then public key).
pub fn read_keypair(path: &std::path::Path) -> Result<SigningKey, ClientError> {
    let text = zeroize::Zeroizing::new(
        std::fs::read_to_string(path).map_err(|e| ClientError::Secrets(format!("{}: {e}", path.display())))?,
    );
    let bytes: zeroize::Zeroizing<Vec<u8>> = zeroize::Zeroizing::new(
        serde_json::from_str(&text)
            .map_err(|_| ClientError::Secrets(format!("{}: not a JSON array of 64 numbers", path.display())))?,
    );
    let (seed, public) =
        bytes.split_at_checked(32).ok_or_else(|| ClientError::Secrets(format!("{}: not 64 bytes", path.display())))?;
    let seed: [u8; 32] =
        seed.try_into().map_err(|_| ClientError::Secrets(format!("{}: not 64 bytes", path.display())))?;
    let key = SigningKey::from_bytes(&seed);
    if public != key.verifying_key().to_bytes() {
        return Err(ClientError::Secrets(format!("{}: the public half does not match the seed", path.display())));
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::Signer;
    use shared::swap::{SessionCommitment, SessionTerms};

    fn start(key: &SigningKey, destination: &str) -> (OneshotStart, OneshotRequest) {
        let terms = SessionTerms {
            session_id: "0f8e4a2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b".into(),
            payer: Address([1; 32]).to_string(),
            from_mint: Address([2; 32]).to_string(),
            to_mint: Address([3; 32]).to_string(),
            amount: "1000".into(),
            destination: Address([4; 32]).to_string(),
            min_out: "900".into(),
            expires_at: 2_000,
        };
        let ephemeral = Address([5; 32]);
        let signature = key.sign(&SessionCommitment::message(&terms.parse().unwrap(), &ephemeral)).to_bytes();
        let request = OneshotRequest {
            payer_pubkey: terms.payer.clone(),
            from_mint: terms.from_mint.clone(),
            to_mint: terms.to_mint.clone(),
            amount: terms.amount.clone(),
            destination_pubkey: destination.into(),
            slippage_bps: 50,
        };
        let commitment = SessionCommitment {
            terms: terms.clone(),
            ephemeral_pubkey: ephemeral.to_string(),
            enclave_pubkey: shared::b64::encode(key.verifying_key().to_bytes()),
            signature: shared::b64::encode(signature),
        };
        let start = OneshotStart {
            session_id: terms.session_id,
            ephemeral_pubkey: ephemeral.to_string(),
            funding_tx: String::new(),
            expected_seconds: 20,
            bucketed: false,
            expires_at: String::new(),
            bucket_label: None,
            expected_out: "950".into(),
            min_out: "900".into(),
            funding_lamports: "0".into(),
            commitment,
        };
        (start, request)
    }

    #[test]
    fn a_relay_that_changes_the_destination_is_caught() {
        let key = SigningKey::from_bytes(&[3; 32]);
        let (good, request) = start(&key, &Address([4; 32]).to_string());
        assert!(check_terms(&good, &request, Limits::default(), 1_000).is_ok());
        // The relay re-signs nothing: it can only change fields, and every change shows.
        let mut moved = good.clone();
        moved.commitment.terms.destination = Address([66; 32]).to_string();
        assert!(check_terms(&moved, &request, Limits::default(), 1_000).is_err());
        // A commitment for another destination than the one asked.
        let (_, other_request) = start(&key, &Address([67; 32]).to_string());
        assert!(check_terms(&good, &other_request, Limits::default(), 1_000).is_err());
        // Expired, or below the floor.
        assert!(check_terms(&good, &request, Limits::default(), 2_000).is_err());
        assert!(check_terms(&good, &request, Limits { min_out: 901, ..Limits::default() }, 1_000).is_err());
    }
}
