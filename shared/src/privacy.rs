//! Managed wallets' privacy operations (DESIGN §11, docs/wallets.md): the owner-signed request
//! form, the wire between the relay and the enclave's pool (the first privacy back end), the
//! withdrawal order and the statement of reserves. Both signed documents verify with the
//! enclave key alone, so anyone holding one can check it against an attestation.

#[cfg(feature = "swap-client")]
use ed25519_dalek::{Signature, VerifyingKey};
use serde::{Deserialize, Serialize};

use crate::address::Address;
use crate::amount::Amount;
#[cfg(feature = "swap-client")]
use crate::b64;

/// The headers an owner-signed request carries.
pub const OWNER_TIMESTAMP_HEADER: &str = "x-owner-timestamp";
pub const OWNER_NONCE_HEADER: &str = "x-owner-nonce";
pub const OWNER_SIGNATURE_HEADER: &str = "x-owner-signature";
/// How far an owner signature's timestamp may be from the enclave's clock.
pub const OWNER_WINDOW_SECS: u64 = 300;
/// Longest nonce (printable ASCII, no spaces).
pub const MAX_NONCE_LEN: usize = 64;

const OWNER_DOMAIN: &str = "svc-owner-request:v1";
const ORDER_DOMAIN: &str = "svc-withdrawal-order:v1";
const RESERVES_DOMAIN: &str = "svc-reserves:v2";
const BALANCE_DOMAIN: &str = "svc-balance:v1";
const REQUEST_DOMAIN: &str = "svc-request-id:v1";
const CERTIFICATE_DOMAIN: &str = "svc-wallet-certificate:v1";

/// What an owner signs: the method, the path, the body's sha256 (hex), the timestamp (unix
/// seconds) and a single-use nonce, one per line after a domain line.
pub fn owner_message(method: &str, path: &str, body: &[u8], timestamp: u64, nonce: &str) -> Vec<u8> {
    let body_hash = hex::encode(crate::sha256(body));
    format!("{OWNER_DOMAIN}\n{method}\n{path}\n{body_hash}\n{timestamp}\n{nonce}").into_bytes()
}

/// A nonce an owner may use: 1 to 64 printable ASCII characters, no spaces.
pub fn nonce_ok(nonce: &str) -> bool {
    !nonce.is_empty() && nonce.len() <= MAX_NONCE_LEN && nonce.bytes().all(|b| b.is_ascii_graphic())
}

/// The owner's signature of one request, as the headers carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OwnerAuth {
    pub timestamp: u64,
    pub nonce: String,
    /// base64 of the 64-byte ed25519 signature.
    pub signature: String,
}

/// A fund-moving request as the relay hands it to the enclave: the wallet's sealed object and
/// the exact body the caller sent, which the enclave parses itself, so a relay that changes a
/// field breaks the owner's signature.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WalletRequest {
    pub wallet: String,
    /// base64 of the request body.
    pub body: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<OwnerAuth>,
}

/// The enclave's word on a managed wallet, signed by its attested key (DESIGN §13): the address
/// whose key it sealed with this wallet id and this owner (or none). A client checks it before
/// it funds an address the relay named, or trusts an owner the relay echoed. Any boot can issue
/// it again from the sealed wallet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WalletCertificate {
    pub wallet_id: String,
    /// The wallet's address (`privAddress`).
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub address: Address,
    /// The owner key sealed with it (base58), or null: then nothing but the account's API key
    /// guards its funds.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub owner_pubkey: Option<Address>,
    /// base64 of the enclave's ed25519 key (the one its attestation binds).
    pub enclave_pubkey: String,
    /// base58 of the enclave's signature over [`WalletCertificate::message`].
    pub signature: String,
}

impl WalletCertificate {
    pub fn message(&self) -> Vec<u8> {
        let owner = self.owner_pubkey.map_or_else(|| "-".to_string(), |o| o.to_string());
        format!("{CERTIFICATE_DOMAIN}\n{}\n{}\n{owner}\n{}", self.wallet_id, self.address, self.enclave_pubkey)
            .into_bytes()
    }

    #[cfg(feature = "swap-client")]
    pub fn verify(&self) -> Result<(), SignedDocError> {
        verify_by(&self.enclave_pubkey, &self.signature, &self.message())
    }
}

/// The enclave's answer to `POST /wallets`: the sealed key and its certificate.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreatedWallet {
    pub object: crate::wire::SealedObject,
    pub certificate: WalletCertificate,
}

/// `POST /wallets` of the enclave: a new wallet key sealed with its id and owner.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewWallet {
    pub wallet_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_pubkey: Option<String>,
}

/// One step of the enclave pool (`POST /privacy/step`). `pool` is the pool key's sealed
/// object, `book` the mint's sealed book of private balances (absent before its first credit).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "camelCase", rename_all_fields = "camelCase", deny_unknown_fields)]
pub enum PrivacyRequest {
    /// The transaction moving `{mint, amount}` from the wallet's token account into the pool's.
    EncryptBuild { request: WalletRequest, pool: String },
    /// Credits a landed encrypt transaction to the wallet's private balance.
    EncryptCredit { wallet: String, pool: String, book: Option<String>, mint: String, signature: String },
    /// Debits `{mint, amount, destinationPubkey}` and signs the payout from the pool.
    Withdraw { request: WalletRequest, pool: String, book: Option<String> },
    /// The wallet's private balance of `mint` in its head book (none before the first), signed.
    Balance { wallet: String, book: Option<String>, mint: String },
    /// The wallet's certificate, issued again by this boot from the sealed wallet.
    Certificate { wallet: String },
    /// The statement of reserves of one mint.
    Reserves { pool: String, book: Option<String>, mint: String },
    /// A withdrawal whose payout failed on chain or expired unseen: a new payout for the same
    /// order (`nothing_to_do` while the last one can still land, or once one landed).
    Settle { pool: String, book: String, mint: String, order_id: String },
    /// A managed swap (`{fromMint, toMint, amount, destinationPubkey, slippageBps}`): a swap
    /// session whose terms are the request's, with the wallet as its payer, and its funding
    /// from the wallet, signed.
    SwapFund { request: WalletRequest, pool: String },
    /// A shield (`{mint, amount, destinationPubkey}`): a fresh intermediate key sealed with the
    /// request and its id (`requestId` of the answer: the relay's session id and the hop's order
    /// id), and the deposit of `amount` from the wallet into the pool, signed.
    ShieldStart { request: WalletRequest, pool: String },
    /// Credits the landed deposit to the intermediate key's private balance.
    ShieldCredit { hop: String, pool: String, book: Option<String>, signature: String },
    /// Debits the intermediate key's balance and signs the payout to it (with its fees).
    ShieldHop { hop: String, pool: String, book: String },
    /// The intermediate key's payment to the destination (`nothing_to_do` once it holds none).
    ShieldDeliver { hop: String },
    /// The intermediate key closes its token account and returns its SOL to the pool
    /// (`nothing_to_do` once it holds nothing).
    ShieldClose { hop: String, pool: String },
    /// The freshness witness's answer to a book's `append`: an acknowledgement makes `book` the
    /// mint's head and gives out what its step held back; a refusal tells the enclave the
    /// witness's head (`book_stale`).
    Witnessed { book: Option<String>, answer: crate::witness::WitnessAnswer },
}

/// The id of an owner's request, derived from (wallet, owner, nonce): the order id of a
/// withdrawal, the session id of a managed swap or an encrypt, the shield id of a shield. The
/// same signed nonce always names the same operation, so it is carried out once.
pub fn request_id(wallet_id: &str, owner: &str, nonce: &str) -> String {
    let digest = crate::sha256(format!("{REQUEST_DOMAIN}\n{wallet_id}\n{owner}\n{nonce}").as_bytes());
    let mut id = [0u8; 16];
    id.copy_from_slice(&digest[..16]);
    // A version-4-shaped uuid (the variant and version bits set), as the relay's ids are.
    id[6] = (id[6] & 0x0f) | 0x40;
    id[8] = (id[8] & 0x3f) | 0x80;
    crate::swap::format_uuid(&id)
}

/// A sealed book and its version (the relay stores both; only the enclave reads the book).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SealedBook {
    pub blob: String,
    pub version: u64,
}

/// A transaction the pool signed, for the relay to record and then send: its bytes (base64),
/// signature and last valid block height.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SignedTx {
    pub transaction: String,
    pub signature: String,
    pub last_valid_block_height: u64,
}

/// What a step of the pool gives out, one shape per step. A book step answers `Proposed`;
/// what it holds back is sealed in that book and released by `witnessed` as one of
/// `Credited`, `Payout`, `Repaid` or `Paid`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "camelCase", rename_all_fields = "camelCase", deny_unknown_fields)]
pub enum PrivacyAnswer {
    /// `encryptBuild`: the owner request's id ([`request_id`]) and the transaction moving the
    /// wallet's tokens into the pool.
    Encrypt { request_id: String, deposit: SignedTx },
    /// `swapFund`: the swap session a managed swap opened and its funding from the wallet.
    SwapFunded { session: crate::swap::OpenedSession, funding: SignedTx },
    /// `shieldStart`: the shield's id, its intermediate key sealed with the request, and the
    /// deposit from the wallet into the pool.
    ShieldStarted { request_id: String, hop: crate::wire::SealedObject, deposit: SignedTx },
    /// `shieldDeliver`, `shieldClose`: the intermediate key's transaction.
    HopSigned { tx: SignedTx },
    /// A book step: the successor book, sealed with what the step gives out, and the request
    /// to the freshness witness to append it (what the step gives out waits for its answer).
    Proposed { book: SealedBook, append: crate::witness::AppendRequest },
    /// A credit released (`encryptCredit`, `shieldCredit`): what it credited and the holder's
    /// private balance after it.
    Credited { mint: Address, amount: Amount, balance: Amount },
    /// A debit released (`withdraw`, `shieldHop`), or the same request's order again: the
    /// order, its current payout and the holder's private balance after it.
    Payout { order: WithdrawalOrder, payout: SignedTx, balance: Amount },
    /// `settle` released: the order's new payout (its last one could no longer land).
    Repaid { payout: SignedTx },
    /// `settle` released: a payout of the order had landed; the order is closed.
    Paid,
    /// `certificate`: the wallet's certificate.
    Certificate { certificate: WalletCertificate },
    /// `balance`: the wallet's private balance, signed.
    Balance { statement: BalanceStatement },
    /// `reserves`: the statement of reserves.
    Reserves { statement: ReservesStatement },
}

/// A signature as the signed documents carry it: base58, like a Solana transaction signature.
pub fn signature_text(signature: &[u8; 64]) -> String {
    bs58::encode(signature).into_string()
}

#[cfg(feature = "swap-client")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SignedDocError {
    #[error("a field is malformed: {0}")]
    Malformed(&'static str),
    #[error("the enclave's signature does not verify")]
    BadSignature,
}

#[cfg(feature = "swap-client")]
fn verify_by(enclave_pubkey: &str, signature: &str, message: &[u8]) -> Result<(), SignedDocError> {
    let key = b64::decode_array::<32>(enclave_pubkey).ok_or(SignedDocError::Malformed("enclavePubkey"))?;
    let key = VerifyingKey::from_bytes(&key).map_err(|_| SignedDocError::Malformed("enclavePubkey"))?;
    let sig = bs58::decode(signature).into_vec().map_err(|_| SignedDocError::Malformed("signature"))?;
    let sig: [u8; 64] = sig.try_into().map_err(|_| SignedDocError::Malformed("signature"))?;
    key.verify_strict(message, &Signature::from_bytes(&sig)).map_err(|_| SignedDocError::BadSignature)
}

/// A withdrawal as the enclave ordered it: the private balance it debited and the payout
/// transaction it signed. Its signature is the `queueSignature` of the withdraw answer; the
/// payout's transaction signature is the `callbackSignature` (docs/wallets.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WithdrawalOrder {
    pub order_id: String,
    pub wallet_id: String,
    /// The wallet's address (`privAddress`).
    pub wallet: Address,
    pub mint: Address,
    pub amount: Amount,
    pub destination: Address,
    /// The book version the debit produced.
    pub book_version: u64,
    pub payout_signature: String,
    pub issued_at: u64,
    /// base64 of the enclave's ed25519 key (the one its attestation binds).
    pub enclave_pubkey: String,
    /// base58 of the enclave's ed25519 signature over [`WithdrawalOrder::message`].
    pub signature: String,
}

impl WithdrawalOrder {
    pub fn message(&self) -> Vec<u8> {
        let o = self;
        format!(
            "{ORDER_DOMAIN}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}",
            o.order_id,
            o.wallet_id,
            o.wallet,
            o.mint,
            o.amount,
            o.destination,
            o.book_version,
            o.payout_signature,
            o.issued_at
        )
        .into_bytes()
    }

    /// Checks the signature under the enclave key it names (clients check that key is the one
    /// they attested).
    #[cfg(feature = "swap-client")]
    pub fn verify(&self) -> Result<(), SignedDocError> {
        verify_by(&self.enclave_pubkey, &self.signature, &self.message())
    }
}

/// A wallet's private balance of one mint, as the enclave read it from the mint's witnessed
/// head book, signed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BalanceStatement {
    pub wallet_id: String,
    /// The wallet's address.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub wallet: Address,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub mint: Address,
    /// Base units.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub balance: Amount,
    pub book_version: u64,
    pub book_digest: String,
    pub issued_at: u64,
    pub enclave_pubkey: String,
    pub signature: String,
}

impl BalanceStatement {
    pub fn message(&self) -> Vec<u8> {
        let s = self;
        format!(
            "{BALANCE_DOMAIN}\n{}\n{}\n{}\n{}\n{}\n{}\n{}",
            s.wallet_id, s.wallet, s.mint, s.balance, s.book_version, s.book_digest, s.issued_at
        )
        .into_bytes()
    }

    #[cfg(feature = "swap-client")]
    pub fn verify(&self) -> Result<(), SignedDocError> {
        verify_by(&self.enclave_pubkey, &self.signature, &self.message())
    }
}

/// Per mint: what the pool holds on chain against what the book owes, signed by the enclave
/// that read both. Solvent when `liabilities <= poolBalance`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReservesStatement {
    pub mint: Address,
    /// The pool key's address and its token account of the mint.
    pub pool: Address,
    pub pool_token_account: Address,
    /// Base units the pool's token account held at `blockHeight`.
    pub pool_balance: Amount,
    /// What the book owes: its private balances and the withdrawals whose payout has not
    /// been seen landed. Base units as decimal digits; a sum, so it may pass `u64` (a book
    /// that owes more than any token account can hold says so, exactly).
    pub liabilities: String,
    /// Wallets with a non-zero private balance.
    pub wallets: u64,
    /// The book it was read from: the mint's head the freshness witness acknowledged (its
    /// version and the hex sha256 of its sealed blob).
    pub book_version: u64,
    pub book_digest: String,
    pub block_height: u64,
    pub issued_at: u64,
    pub enclave_pubkey: String,
    pub signature: String,
}

impl ReservesStatement {
    pub fn message(&self) -> Vec<u8> {
        let s = self;
        format!(
            "{RESERVES_DOMAIN}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}",
            s.mint,
            s.pool,
            s.pool_token_account,
            s.pool_balance,
            s.liabilities,
            s.wallets,
            s.book_version,
            s.book_digest,
            s.block_height,
            s.issued_at
        )
        .into_bytes()
    }

    #[cfg(feature = "swap-client")]
    pub fn verify(&self) -> Result<(), SignedDocError> {
        verify_by(&self.enclave_pubkey, &self.signature, &self.message())
    }

    /// The invariant: the book owes no more than the pool holds.
    #[cfg(feature = "swap-client")]
    pub fn solvent(&self) -> bool {
        self.liabilities.parse::<u128>().is_ok_and(|owed| owed <= u128::from(self.pool_balance.0))
    }
}

#[cfg(all(test, feature = "swap-client"))]
mod tests {
    use ed25519_dalek::{Signer, SigningKey};

    use super::*;

    #[test]
    fn owner_message_names_every_part() {
        let m = owner_message("POST", "/agents/v1/wallets/w/withdraw", b"{}", 1_700_000_000, "n1");
        let text = String::from_utf8(m).unwrap();
        // sha256("{}") = 44136fa3…; a body change changes the line.
        assert_eq!(
            text,
            "svc-owner-request:v1\nPOST\n/agents/v1/wallets/w/withdraw\n\
             44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a\n1700000000\nn1"
        );
        assert!(nonce_ok("n1") && !nonce_ok("") && !nonce_ok("a b") && !nonce_ok(&"x".repeat(65)));
    }

    fn order(key: &SigningKey) -> WithdrawalOrder {
        let a = Address([7; 32]);
        let mut o = WithdrawalOrder {
            order_id: "o".into(),
            wallet_id: "w".into(),
            wallet: a,
            mint: a,
            amount: Amount(5),
            destination: a,
            book_version: 3,
            payout_signature: "sig".into(),
            issued_at: 9,
            enclave_pubkey: b64::encode(key.verifying_key().to_bytes()),
            signature: String::new(),
        };
        o.signature = bs58::encode(key.sign(&o.message()).to_bytes()).into_string();
        o
    }

    #[test]
    fn an_order_verifies_and_any_change_breaks_it() {
        let key = SigningKey::from_bytes(&[5; 32]);
        let o = order(&key);
        assert_eq!(o.verify(), Ok(()));
        let mut changed = o.clone();
        changed.destination = Address([8; 32]);
        assert_eq!(changed.verify(), Err(SignedDocError::BadSignature));
        let mut changed = o.clone();
        changed.amount = Amount(6);
        assert_eq!(changed.verify(), Err(SignedDocError::BadSignature));
        // The signed text says "5" once: "05" or "5.0" is not read as the same order.
        let mut json = serde_json::to_value(&o).unwrap();
        assert_eq!((json["amount"].as_str(), json["mint"].as_str()), (Some("5"), Some(&*Address([7; 32]).to_string())));
        json["amount"] = "05".into();
        assert!(serde_json::from_value::<WithdrawalOrder>(json).is_err());
    }

    #[test]
    fn solvency_compares_numbers_not_strings() {
        let mut s = ReservesStatement {
            mint: Address([1; 32]),
            pool: Address([2; 32]),
            pool_token_account: Address([3; 32]),
            pool_balance: Amount(10),
            liabilities: "9".into(),
            wallets: 1,
            book_version: 1,
            book_digest: String::new(),
            block_height: 1,
            issued_at: 1,
            enclave_pubkey: String::new(),
            signature: String::new(),
        };
        assert!(s.solvent());
        s.liabilities = "11".into();
        assert!(!s.solvent());
        s.liabilities = "x".into();
        assert!(!s.solvent());
        let mut json = serde_json::to_value(&s).unwrap();
        json["poolBalance"] = "x".into();
        assert!(serde_json::from_value::<ReservesStatement>(json).is_err());
    }
}
