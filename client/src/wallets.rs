//! Managed wallets (Mode A, docs/wallets.md): create, fund (the relay's fund-intent, checked
//! here, signed by the payer and sent), public balances and the audit log.

use std::time::Duration;

use chain::{Chain, Commitment, Confirmation, RpcChain};
use ed25519_dalek::SigningKey;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use shared::address::Address;
use shared::amount::Amount;
use shared::privacy::WalletCertificate;
use shared::solana::{Message, Transaction, VersionedMessage};
use shared::swap::funding::token_transfer;
use shared::wire::codes;

pub use shared::api::{WalletCreated, WalletFundIntent};

use crate::api::Client;
use crate::error::ClientError;

/// `POST /agents/v1/wallets/{id}/withdraw` (docs/wallets.md).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Withdrawn {
    pub queue_signature: String,
    pub callback_signature: String,
    pub status: String,
    pub order: shared::privacy::WithdrawalOrder,
}

/// Tokens of a managed wallet to a destination: what a shield and a withdrawal move.
#[derive(Debug, Clone, Copy)]
pub struct Payout<'a> {
    pub wallet_id: &'a str,
    pub mint: &'a str,
    /// Base units, as a string of digits.
    pub amount: &'a str,
    pub destination: &'a str,
}

impl<'a> From<&'a shared::mcp_args::PayoutArgs> for Payout<'a> {
    fn from(a: &'a shared::mcp_args::PayoutArgs) -> Self {
        Payout { wallet_id: &a.wallet_id, mint: &a.mint, amount: &a.amount, destination: &a.destination_pubkey }
    }
}

impl Payout<'_> {
    fn body(&self) -> Value {
        json!({"mint": self.mint, "amount": self.amount, "destinationPubkey": self.destination})
    }
}

impl Client {
    async fn send_with_key<T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<T, ClientError> {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.map_err(|_| ClientError::RelayUnreachable(self.base.clone()))?;
        self.read(response).await
    }

    /// Creates a wallet whose events go to `webhook_url`, and checks the enclave's certificate
    /// of it: signed by the attested enclave, for the address the relay answered and the owner
    /// asked for (a relay could answer its own address, or drop the owner).
    pub async fn create_wallet(
        &self,
        webhook_url: &str,
        owner_pubkey: Option<&str>,
    ) -> Result<WalletCreated, ClientError> {
        let owner = match owner_pubkey.map(Address::parse) {
            Some(None) => return Err(ClientError::Malformed("the owner key is not a base58 key".into())),
            parsed => parsed.flatten(),
        };
        let body = json!({"webhookUrl": webhook_url, "ownerPubkey": owner_pubkey});
        let created: WalletCreated =
            self.send_with_key(reqwest::Method::POST, "/agents/v1/wallets", Some(body)).await?;
        let (wallet_id, address) = (&created.wallet_id, &created.priv_address);
        check_certificate(&created.certificate, wallet_id, Some(address), Some(owner.as_ref()))?;
        self.check_enclave_signer(&created.certificate.enclave_pubkey).await?;
        Ok(created)
    }

    /// The wallet's certificate as the current enclave issues it, checked: signed by the
    /// attested enclave, for this wallet id.
    pub async fn wallet_certificate(&self, wallet_id: &str) -> Result<WalletCertificate, ClientError> {
        let path = format!("/agents/v1/wallets/{}/certificate", seg(wallet_id));
        let certificate: WalletCertificate = self.send_with_key(reqwest::Method::GET, &path, None).await?;
        check_certificate(&certificate, wallet_id, None, None)?;
        self.check_enclave_signer(&certificate.enclave_pubkey).await?;
        Ok(certificate)
    }

    pub async fn fund_intent(
        &self,
        wallet_id: &str,
        mint: &str,
        amount: &str,
        payer: &str,
    ) -> Result<WalletFundIntent, ClientError> {
        let body = json!({"mint": mint, "amount": amount, "payerPubkey": payer});
        self.send_with_key(
            reqwest::Method::POST,
            &format!("/agents/v1/wallets/{}/fund-intent", seg(wallet_id)),
            Some(body),
        )
        .await
    }

    /// `{balances: [{mint, state, raw, statement}]}`. With an attestation policy, every
    /// `encrypted` entry must carry the enclave's statement of it: signed by the attested
    /// enclave, for this wallet and mint, saying `raw` (a relay could say any number).
    pub async fn wallet_balance(&self, wallet_id: &str, mints: &[String]) -> Result<Value, ClientError> {
        let path = format!("/agents/v1/wallets/{}/balance?mints={}", seg(wallet_id), mints.join(","));
        let answer: Value = self.send_with_key(reqwest::Method::GET, &path, None).await?;
        if self.attest_options.is_none() {
            return Ok(answer);
        }
        let entries = answer["balances"].as_array().cloned().unwrap_or_default();
        for entry in entries.iter().filter(|e| e["state"] == "encrypted") {
            let statement: shared::privacy::BalanceStatement = serde_json::from_value(entry["statement"].clone())
                .map_err(|_| ClientError::Mismatch("a private balance without the enclave's statement"))?;
            if statement.verify().is_err()
                || statement.wallet_id != wallet_id
                || entry["mint"].as_str().and_then(Address::parse) != Some(statement.mint)
                || entry["raw"].as_str().and_then(Amount::parse) != Some(statement.balance)
            {
                return Err(ClientError::Mismatch("a private balance is not what the enclave signed"));
            }
            self.check_enclave_signer(&statement.enclave_pubkey).await?;
        }
        Ok(answer)
    }

    /// One page of the audit log, newest first.
    pub async fn wallet_audit(&self, wallet_id: &str, limit: u32, offset: u32) -> Result<Value, ClientError> {
        let path = format!("/agents/v1/wallets/{}/audit?limit={limit}&offset={offset}", seg(wallet_id));
        self.send_with_key(reqwest::Method::GET, &path, None).await
    }

    /// Sends `body` as the exact bytes of a fund-moving request, once the enclave passed
    /// verification (a request whose answer could not be checked afterwards would still have
    /// been carried out), signed by the wallet's owner when `owner` is given (the enclave checks
    /// it: docs/wallets.md).
    ///
    /// Signed once, then sent again as the same bytes, never signed anew with another nonce
    /// (DESIGN §13): after a lost answer, or a refusal that says nothing moved and to wait
    /// ([`retry_same`]), for as long as the signature's timestamp is fresh. The owner's nonce is
    /// the request's idempotency key, so the relay and the enclave answer a repeat with what
    /// the first got. After `request_predates_boot` (the enclave restarted before taking it),
    /// the same nonce is signed again with a new timestamp: it still names the same request.
    /// Without an owner nothing makes a repeat safe, so only `pool_warming_up` is waited out.
    ///
    /// Returns the answer and, with an owner, the id the enclave derives from the request
    /// (wallet, owner, nonce): the order or session id the answer must name.
    async fn send_owner_signed<T: DeserializeOwned>(
        &self,
        wallet_id: &str,
        (operation, body): (&str, &Value),
        owner: Option<&SigningKey>,
    ) -> Result<(T, Option<String>), ClientError> {
        let path = &format!("/agents/v1/wallets/{}/{operation}", seg(wallet_id));
        use rand_core::{OsRng, RngCore};
        self.enclave_key().await?;
        let bytes = serde_json::to_vec(body).map_err(|e| ClientError::Malformed(e.to_string()))?;
        let mut nonce = [0u8; 16];
        OsRng.fill_bytes(&mut nonce);
        let nonce = hex::encode(nonce);
        let expected = owner.map(|key| {
            shared::privacy::request_id(wallet_id, &Address(key.verifying_key().to_bytes()).to_string(), &nonce)
        });
        let mut signed_at = shared::time::unix_now();
        let mut resigned = 0;
        loop {
            let answer = self.post_owner_signed(path, &bytes, owner.map(|key| (key, signed_at, nonce.as_str()))).await;
            let fresh = shared::time::unix_now() < signed_at + shared::privacy::OWNER_WINDOW_SECS - 30;
            match answer {
                // The enclave restarted: signed again a second after its provisioning (the
                // clocks tell seconds apart), with the same nonce.
                Err(ClientError::Refused { code, .. })
                    if code == codes::REQUEST_PREDATES_BOOT && owner.is_some() && resigned < 3 =>
                {
                    resigned += 1;
                    tokio::time::sleep(Duration::from_millis(1100)).await;
                    signed_at = shared::time::unix_now();
                }
                Err(e) if fresh && retry_same(&e, owner.is_some()) => {
                    tracing::info!(error = %e, "sending the same signed request again");
                    tokio::time::sleep(Duration::from_secs(2)).await;
                }
                other => return other.map(|answer| (answer, expected)),
            }
        }
    }

    /// A started session's answer, checked to name the session the enclave derived from the
    /// owner's request.
    async fn start_session(
        &self,
        wallet_id: &str,
        request: (&str, &Value),
        owner: Option<&SigningKey>,
    ) -> Result<Value, ClientError> {
        let (answer, expected): (Value, _) = self.send_owner_signed(wallet_id, request, owner).await?;
        if expected.is_some_and(|id| answer["sessionId"].as_str() != Some(&id)) {
            return Err(ClientError::Mismatch("the session is not the one this signed request names"));
        }
        Ok(answer)
    }

    async fn post_owner_signed<T: DeserializeOwned>(
        &self,
        path: &str,
        bytes: &[u8],
        signer: Option<(&SigningKey, u64, &str)>,
    ) -> Result<T, ClientError> {
        use ed25519_dalek::Signer;
        let mut request = self.http.post(format!("{}{path}", self.base)).header("content-type", "application/json");
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        if let Some((owner, timestamp, nonce)) = signer {
            let message = shared::privacy::owner_message("POST", path, bytes, timestamp, nonce);
            let signature = shared::b64::encode(owner.sign(&message).to_bytes());
            request = request
                .header(shared::privacy::OWNER_TIMESTAMP_HEADER, timestamp.to_string())
                .header(shared::privacy::OWNER_NONCE_HEADER, nonce)
                .header(shared::privacy::OWNER_SIGNATURE_HEADER, signature);
        }
        let response =
            request.body(bytes.to_vec()).send().await.map_err(|_| ClientError::RelayUnreachable(self.base.clone()))?;
        self.read(response).await
    }

    /// Moves `amount` of `mint` from the wallet's public balance into its private one:
    /// `{sessionId, status, estimatedSeconds}`.
    pub async fn wallet_encrypt(
        &self,
        wallet_id: &str,
        mint: &str,
        amount: &str,
        owner: Option<&SigningKey>,
    ) -> Result<Value, ClientError> {
        self.start_session(wallet_id, ("encrypt", &json!({"mint": mint, "amount": amount})), owner).await
    }

    /// Swaps `amount` of `from_mint` from the wallet's public balance into `to_mint`, paid to
    /// `destination`: `{sessionId, status, estimatedSeconds}` of a session the wallet funds
    /// (poll it like a one-shot session).
    #[allow(clippy::too_many_arguments)]
    pub async fn wallet_swap(
        &self,
        wallet_id: &str,
        from_mint: &str,
        to_mint: &str,
        amount: &str,
        destination: &str,
        slippage_bps: Option<u16>,
        owner: Option<&SigningKey>,
    ) -> Result<Value, ClientError> {
        let mut body =
            json!({"fromMint": from_mint, "toMint": to_mint, "amount": amount, "destinationPubkey": destination});
        if let Some(bps) = slippage_bps {
            body["slippageBps"] = json!(bps);
        }
        self.start_session(wallet_id, ("swap", &body), owner).await
    }

    /// Shields `amount` of `mint` (one of its denominations) from the wallet's public balance
    /// to `destination` through the privacy pool: `{sessionId, status, estimatedSeconds}`.
    pub async fn wallet_shield(&self, payout: Payout<'_>, owner: Option<&SigningKey>) -> Result<Value, ClientError> {
        self.start_session(payout.wallet_id, ("shield", &payout.body()), owner).await
    }

    /// Pays `amount` of `mint` out of the private balance to `destination`; the answer's order
    /// is checked: signed by the attested enclave, for exactly this request.
    pub async fn wallet_withdraw(
        &self,
        payout: Payout<'_>,
        owner: Option<&SigningKey>,
    ) -> Result<Withdrawn, ClientError> {
        let Payout { wallet_id, mint, amount, destination } = payout;
        let (answer, expected): (Withdrawn, _) =
            self.send_owner_signed(wallet_id, ("withdraw", &payout.body()), owner).await?;
        let o = &answer.order;
        // The order id derives from the owner's key and nonce: it is this request's order.
        if expected.is_some_and(|id| o.order_id != id) {
            return Err(ClientError::Mismatch("the withdrawal order is not the one this signed request names"));
        }
        if o.verify().is_err()
            || o.signature != answer.queue_signature
            || o.payout_signature != answer.callback_signature
        {
            return Err(ClientError::Mismatch("the withdrawal order is not signed as answered"));
        }
        let asked = (Address::parse(mint), Amount::parse(amount), Address::parse(destination));
        if asked != (Some(o.mint), Some(o.amount), Some(o.destination)) || o.wallet_id != wallet_id {
            return Err(ClientError::Mismatch("the withdrawal order is not for this request"));
        }
        self.check_enclave_signer(&o.enclave_pubkey).await?;
        Ok(answer)
    }

    /// The statement of reserves of `mint`, signed by the attested enclave.
    pub async fn reserves(&self, mint: &str) -> Result<shared::privacy::ReservesStatement, ClientError> {
        let statement: shared::privacy::ReservesStatement =
            self.get(&format!("/agents/v1/reserves?mint={}", seg(mint))).await?;
        if statement.verify().is_err() || Address::parse(mint) != Some(statement.mint) {
            return Err(ClientError::Mismatch("the statement of reserves does not verify"));
        }
        self.check_enclave_signer(&statement.enclave_pubkey).await?;
        Ok(statement)
    }

    /// A document's signer must be the enclave key this client attested (or accepted
    /// unattested, as its trust options say).
    async fn check_enclave_signer(&self, enclave_pubkey: &str) -> Result<(), ClientError> {
        let attested = self.enclave_key().await?;
        if shared::b64::encode(attested.enclave_public_key) != enclave_pubkey {
            self.drop_cached_key();
            let again = self.enclave_key().await?;
            if shared::b64::encode(again.enclave_public_key) != enclave_pubkey {
                return Err(ClientError::Mismatch("signed by a key other than the attested enclave's"));
            }
        }
        Ok(())
    }

    /// The wallet's webhook events and delivery attempts.
    pub async fn wallet_webhooks(&self, wallet_id: &str) -> Result<Value, ClientError> {
        self.send_with_key(reqwest::Method::GET, &format!("/agents/v1/wallets/{}/webhooks", seg(wallet_id)), None).await
    }
}

/// Checks a wallet certificate's signature (not yet its signer: the caller compares that with
/// the attested key) and that it is for `wallet_id`, `address` and `owner` (each when given;
/// `Some(None)`: no owner).
pub fn check_certificate(
    certificate: &WalletCertificate,
    wallet_id: &str,
    address: Option<&Address>,
    owner: Option<Option<&Address>>,
) -> Result<(), ClientError> {
    if certificate.verify().is_err() {
        return Err(ClientError::Mismatch("the wallet certificate does not verify"));
    }
    if certificate.wallet_id != wallet_id || address.is_some_and(|a| *a != certificate.address) {
        return Err(ClientError::Mismatch("the wallet certificate is for another wallet or address"));
    }
    if owner.is_some_and(|o| certificate.owner_pubkey.as_ref() != o) {
        return Err(ClientError::Mismatch("the certificate names another owner"));
    }
    Ok(())
}

/// Verified wallet certificates kept on disk (`svc`'s state directory), one file per wallet:
/// what `svc wallet fund` compares the relay's answers with.
pub struct Certificates {
    dir: std::path::PathBuf,
}

impl Certificates {
    pub fn new(dir: std::path::PathBuf) -> Self {
        Certificates { dir }
    }

    fn path(&self, wallet_id: &str) -> std::path::PathBuf {
        self.dir.join(format!("{}.json", seg(wallet_id)))
    }

    pub fn save(&self, certificate: &WalletCertificate) -> Result<(), ClientError> {
        let io = |e: std::io::Error| ClientError::Secrets(format!("{}: {e}", self.dir.display()));
        let text = serde_json::to_vec_pretty(certificate).map_err(|e| ClientError::Malformed(e.to_string()))?;
        crate::private_file::write(&self.path(&certificate.wallet_id), &text).map_err(io)
    }

    pub fn load(&self, wallet_id: &str) -> Option<WalletCertificate> {
        serde_json::from_slice(&std::fs::read(self.path(wallet_id)).ok()?).ok()
    }
}

/// Whether a fund-moving request that got `e` is sent again as the same signed bytes: the
/// answer was lost (`owned`: the nonce makes the repeat the same request), or the refusal says
/// nothing moved and to wait (the enclave's quiet period after a boot; the freshness witness
/// away; the same request still running; the book moved on under it).
pub fn retry_same(e: &ClientError, owned: bool) -> bool {
    match e {
        ClientError::Refused { code, .. } if code == codes::POOL_WARMING_UP => true,
        _ if !owned => false,
        ClientError::RelayUnreachable(_) | ClientError::TeeUnreachable { .. } => true,
        ClientError::Refused { code, .. } => [
            codes::WITNESS_UNAVAILABLE,
            codes::REQUEST_IN_PROGRESS,
            codes::BOOK_STALE,
            codes::ENCLAVE_BUSY,
            codes::ENCLAVE_TIMEOUT,
            codes::DATABASE_UNAVAILABLE,
        ]
        .contains(&code.as_str()),
        _ => false,
    }
}

/// A path segment: a wallet id is a uuid; anything else is percent-encoded byte by byte.
fn seg(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Checks that `intent.tx` is exactly what the payer asked for (create the wallet's token
/// account if needed, then move `amount` of `mint` from the payer to `intent.to`, nothing
/// else, the payer the only signer) by rebuilding it with the same blockhash; returns it.
pub fn check_intent(
    intent: &WalletFundIntent,
    payer: &Address,
    mint: &Address,
    amount: u64,
    decimals: u8,
) -> Result<Transaction, ClientError> {
    let bad =
        |why: &str| ClientError::Malformed(format!("the fund-intent transaction is not the one asked for: {why}"));
    let bytes = shared::b64::decode(&intent.tx).map_err(|_| bad("not base64"))?;
    let tx = Transaction::parse(&bytes).map_err(|_| bad("not a transaction"))?;
    if intent.mint != *mint || intent.amount != Amount(amount) {
        return Err(bad("another mint or amount"));
    }
    let blockhash = *tx.message.recent_blockhash();
    let instructions = token_transfer(payer, &intent.to, mint, amount, decimals);
    let expected = Message::compile(payer, &instructions, blockhash).map_err(|_| bad("cannot rebuild"))?;
    if tx.message != VersionedMessage::Legacy(expected) {
        return Err(bad("its instructions differ"));
    }
    Ok(tx)
}

/// The mint's decimals, read from the chain (byte 44 of a mint's state).
pub async fn mint_decimals(chain: &RpcChain, mint: &Address) -> Result<u8, ClientError> {
    let account = chain.account(mint).await?.ok_or(ClientError::BadKey("no such mint"))?;
    account.data.get(44).copied().ok_or(ClientError::BadKey("not a mint"))
}

/// Signs the checked transaction with the payer, sends it, waits for `confirmed`.
pub async fn sign_and_send(
    chain: &RpcChain,
    mut tx: Transaction,
    payer: &SigningKey,
    last_valid_block_height: u64,
) -> Result<String, ClientError> {
    tx.sign(&[payer]).map_err(|e| ClientError::Malformed(e.to_string()))?;
    send_confirmed(chain, &tx, last_valid_block_height).await
}

/// Sends a signed transaction and waits up to a minute for `confirmed`; its signature.
pub async fn send_confirmed(
    chain: &RpcChain,
    tx: &Transaction,
    last_valid_block_height: u64,
) -> Result<String, ClientError> {
    let signature = chain.send_transaction(&tx.serialize()).await?;
    match chain.confirm(&signature, last_valid_block_height, Commitment::Confirmed, Duration::from_secs(60)).await? {
        Confirmation::Confirmed => Ok(signature),
        other => Err(ClientError::NotLanded(other)),
    }
}

#[cfg(test)]
mod tests {
    use shared::solana::programs::TOKEN_PROGRAM;
    use shared::solana::{associated_token, token};

    use super::*;

    fn intent(payer: &Address, to: &Address, mint: &Address, amount: u64, decimals: u8) -> WalletFundIntent {
        let ixs = [
            associated_token::create_idempotent(payer, to, mint, &TOKEN_PROGRAM),
            token::transfer_checked(
                &associated_token::address(payer, mint, &TOKEN_PROGRAM),
                mint,
                &associated_token::address(to, mint, &TOKEN_PROGRAM),
                payer,
                amount,
                decimals,
            ),
        ];
        let tx = Transaction::new_unsigned(Message::compile(payer, &ixs, [4; 32]).unwrap());
        WalletFundIntent {
            tx: shared::b64::encode(tx.serialize()),
            mint: *mint,
            amount: Amount(amount),
            to: *to,
            token_account: associated_token::address(to, mint, &TOKEN_PROGRAM),
            last_valid_block_height: 1,
        }
    }

    /// A relay that answers create with its own address, drops the owner, or hands another
    /// wallet's certificate: each is caught before anything is funded.
    #[test]
    fn a_wallet_certificate_must_name_what_was_asked() {
        use ed25519_dalek::Signer;
        let enclave = SigningKey::from_bytes(&[4; 32]);
        let (owner, address) = (Address([5; 32]), Address([6; 32]));
        let certify = |owner: Option<&Address>| {
            let mut c = WalletCertificate {
                wallet_id: "w1".into(),
                address,
                owner_pubkey: owner.copied(),
                enclave_pubkey: shared::b64::encode(enclave.verifying_key().to_bytes()),
                signature: String::new(),
            };
            c.signature = shared::privacy::signature_text(&enclave.sign(&c.message()).to_bytes());
            c
        };
        let good = certify(Some(&owner));
        assert!(check_certificate(&good, "w1", Some(&address), Some(Some(&owner))).is_ok());
        let relays_address = Address([7; 32]);
        let rows: [(&str, WalletCertificate, &str, &Address, Option<&Address>); 4] = [
            ("the relay's own address answered", good.clone(), "w1", &relays_address, Some(&owner)),
            ("the owner dropped", certify(None), "w1", &address, Some(&owner)),
            ("another wallet's certificate", good.clone(), "w2", &address, Some(&owner)),
            ("the owner key swapped", good.clone(), "w1", &address, Some(&relays_address)),
        ];
        for (name, certificate, id, answered, asked) in rows {
            assert!(check_certificate(&certificate, id, Some(answered), Some(asked)).is_err(), "{name}");
        }
        let mut forged = good;
        forged.address = relays_address;
        assert!(check_certificate(&forged, "w1", Some(&relays_address), None).is_err(), "a changed field");
    }

    /// An owner key that is not base58 is refused here, before anything is asked of the relay
    /// (the port below answers nothing).
    #[tokio::test]
    async fn an_owner_key_that_is_not_base58_is_refused_before_asking() {
        let client = Client::new("http://127.0.0.1:9", None);
        let refused = client.create_wallet("https://agent.example/hooks", Some("0OIl-not-base58")).await;
        assert!(matches!(&refused, Err(ClientError::Malformed(m)) if m.contains("owner key")), "{refused:?}");
    }

    #[test]
    fn only_the_transfer_asked_for_passes() {
        let (payer, to, mint, other) = (Address([1; 32]), Address([2; 32]), Address([3; 32]), Address([9; 32]));
        let good = intent(&payer, &to, &mint, 5_000, 6);
        assert!(check_intent(&good, &payer, &mint, 5_000, 6).is_ok());
        // Another amount, decimals, mint or payer than asked: refused.
        assert!(check_intent(&good, &payer, &mint, 5_001, 6).is_err());
        assert!(check_intent(&good, &payer, &mint, 5_000, 9).is_err());
        assert!(check_intent(&good, &other, &mint, 5_000, 6).is_err());
        // A transaction that pays someone else than the `to` it names: refused.
        let mut swapped = intent(&payer, &other, &mint, 5_000, 6);
        swapped.to = to;
        assert!(check_intent(&swapped, &payer, &mint, 5_000, 6).is_err());
        // A larger transfer behind the same answer fields: refused.
        let mut larger = intent(&payer, &to, &mint, 50_000, 6);
        larger.amount = Amount(5000);
        assert!(check_intent(&larger, &payer, &mint, 5_000, 6).is_err());
    }
}
