//! Owner requests: admitted after the owner's signature over the exact body and its nonce
//! (`owner.rs`), carried out, and finished, so the same request again gets the same answer.

use std::sync::atomic::Ordering;

use rand_core::{OsRng, RngCore};
use serde_json::Value;
use shared::address::Address;
use shared::b64;
use shared::privacy::{self, PrivacyAnswer, WalletRequest};

use super::keys::{Wallet, open_pool, open_wallet};
use super::owner::Admission;
use super::{Env, Funds, FundsError, shield, wallet_tx};

/// An owner request that passed its checks: the wallet, the body, the id derived from it.
pub(super) struct Admitted {
    pub(super) wallet: Wallet,
    pub(super) body: Value,
    /// The order, session or shield id: derived from (wallet, owner, nonce) with an owner,
    /// random without one.
    pub(super) request_id: String,
    /// The answer of the same request given earlier in this boot.
    earlier: Option<PrivacyAnswer>,
    /// The owner and nonce of an owner-signed request.
    nonce: Option<(ed25519_dalek::VerifyingKey, String)>,
}

/// The owner requests that sign a transaction from the wallet.
#[derive(Clone, Copy)]
pub(super) enum Start {
    Encrypt,
    Swap,
    Shield,
}

impl Start {
    /// The last segment of the request's path.
    fn operation(self) -> &'static str {
        ["encrypt", "swap", "shield"][self as usize]
    }
}

impl Funds {
    /// An owner request that signs a transaction from the wallet (an encrypt, a managed swap's
    /// funding, a shield's deposit): the same request again in this boot gets the same answer.
    pub(super) async fn start(
        &self,
        env: &Env<'_>,
        request: &WalletRequest,
        pool: &str,
        kind: Start,
    ) -> Result<PrivacyAnswer, FundsError> {
        let a = self.admit(env, request, kind.operation())?;
        let result = match a.earlier.clone() {
            Some(answer) => Ok(answer),
            None => {
                async {
                    let pool = open_pool(env.custody, pool)?;
                    match kind {
                        Start::Encrypt => wallet_tx::encrypt(self, env, &a, &pool).await,
                        Start::Swap => wallet_tx::swap_fund(self, env, &a, &pool).await,
                        Start::Shield => shield::start(self, env, &a, &pool).await,
                    }
                }
                .await
            }
        };
        self.finish(&a, result, true)
    }

    /// Opens the wallet and the caller's JSON body, after checking the owner's signature over
    /// that body when the wallet has an owner. An admitted owner request is then [`Funds::finish`]ed.
    pub(super) fn admit(&self, env: &Env<'_>, request: &WalletRequest, op: &str) -> Result<Admitted, FundsError> {
        let wallet = open_wallet(env.custody, &request.wallet)?;
        let bytes = b64::decode(&request.body).map_err(|_| FundsError::BadBody("body"))?;
        let body: Value = serde_json::from_slice(&bytes).map_err(|_| FundsError::BadBody("not a JSON object"))?;
        let Some(owner) = wallet.owner else {
            let mut id = [0u8; 16];
            OsRng.fill_bytes(&mut id);
            return Ok(Admitted {
                wallet,
                body,
                request_id: shared::swap::format_uuid(&id),
                earlier: None,
                nonce: None,
            });
        };
        let auth = request.auth.as_ref().ok_or(FundsError::OwnerSignatureRequired)?;
        let path = format!("/agents/v1/wallets/{}/{op}", wallet.id);
        let floor = self.floor.load(Ordering::SeqCst);
        let earlier = match self.nonces.admit(&owner, auth, (&path, &bytes), env.now, floor)? {
            Admission::New => None,
            Admission::Retry(answer) => answer.map(|a| *a),
        };
        let request_id = privacy::request_id(&wallet.id, &Address(owner.to_bytes()).to_string(), &auth.nonce);
        Ok(Admitted { wallet, body, request_id, earlier, nonce: Some((owner, auth.nonce.clone())) })
    }

    /// Records what an owner request came to (`keep`: its answer is given again to a retry;
    /// a refusal is forgotten, so the same bytes can be sent again) and passes the result on.
    pub(super) fn finish(
        &self,
        a: &Admitted,
        result: Result<PrivacyAnswer, FundsError>,
        keep: bool,
    ) -> Result<PrivacyAnswer, FundsError> {
        if let Some((owner, nonce)) = &a.nonce {
            let outcome = match &result {
                Ok(answer) => Ok(keep.then_some(answer)),
                Err(_) => Err(()),
            };
            self.nonces.finish(owner, nonce, outcome);
        }
        result
    }
}
