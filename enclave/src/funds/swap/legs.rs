//! What a session key signs: the router's swap (after `swap_check`), the sweep to the
//! committed destination or back to the payer; and the receipt once the delivery landed.

use chain::Chain;
use ed25519_dalek::Signer;
use shared::amount::Amount;
use shared::b64;
use shared::solana::programs::TOKEN_PROGRAM;
use shared::solana::{Instruction, Message, MessageV0, PACKET_DATA_SIZE, Transaction, associated_token, system, token};
use shared::swap::{SignedStep, StepAnswer, SwapReceipt, receipt_address};

use super::session::Session;
use super::{RouterApi, SIGNATURE_FEE, SLIPPAGE_BPS, SwapError, Swaps, landed_transaction};
use crate::funds::swap_check::{self, ata};
use crate::keys::EnclaveKeys;

impl Swaps {
    pub(super) async fn check_funding(&self, s: &Session, signature: &str) -> Result<(), SwapError> {
        let landed = self.chain.transaction(signature).await?.ok_or(SwapError::FundingNotFound)?;
        let tx = landed_transaction(&landed.transaction)?;
        let failed = landed.meta.as_ref().is_none_or(|m| m.err.is_some());
        swap_check::check_funding(&s.terms, &s.address, &tx, failed)?;
        Ok(())
    }

    /// The router's swap of the whole input, checked, signed by the session key.
    pub(super) async fn swap(&self, s: &Session) -> Result<StepAnswer, SwapError> {
        let held = self.chain.token_balance(&ata(&s.address, &s.terms.from_mint)).await?;
        if held.unwrap_or(0) < s.terms.amount {
            return Err(SwapError::NothingToDo("the session does not hold its input (already swapped or refunded)"));
        }
        if self.router_api == RouterApi::Build {
            return self.swap_built(s).await;
        }
        let quote = self.router.quote(&s.terms.from_mint, &s.terms.to_mint, s.terms.amount, SLIPPAGE_BPS).await?;
        let swap = self.router.swap(&s.address, &quote).await?;
        let mut tx = Transaction::parse(&swap.transaction)
            .map_err(|_| SwapError::RouterTransaction("unparseable transaction"))?;
        let out = swap_check::check_swap(&s.terms, &s.address, &tx, &self.router_programs)?;
        if !swap_check::other_signers_present(&tx, &s.address) {
            return Err(SwapError::RouterTransaction("the transaction lacks the router's own signatures"));
        }
        tx.sign(&[&s.key]).map_err(|_| SwapError::RouterTransaction("the session key is not a signer"))?;
        Ok(signed(&tx, swap.last_valid_block_height, out))
    }

    /// The router's swap built from Jupiter's instructions: compiled here, against this
    /// enclave's own blockhash, with the session's accounts and the output mint kept out of the
    /// router's lookup tables, then checked by the Jupiter rule set.
    async fn swap_built(&self, s: &Session) -> Result<StepAnswer, SwapError> {
        let t = &s.terms;
        let built = self.router.build(&t.from_mint, &t.to_mint, t.amount, SLIPPAGE_BPS, &s.address).await?;
        let blockhash = self.chain.latest_blockhash().await?;
        let keep = [ata(&s.address, &t.from_mint), ata(&s.address, &t.to_mint), t.to_mint];
        let message = MessageV0::compile_with_lookups(
            &s.address,
            &built.instructions,
            blockhash.blockhash,
            &built.lookup_tables,
            &keep,
        )
        .map_err(|_| SwapError::RouterTransaction("instructions that do not compile"))?;
        let mut tx = Transaction::new_unsigned(message);
        let out = swap_check::jupiter::check_swap(t, &s.address, &tx)?;
        tx.sign(&[&s.key]).map_err(|_| SwapError::RouterTransaction("the session key is not a signer"))?;
        if tx.serialize().len() > PACKET_DATA_SIZE {
            return Err(SwapError::RouterTransaction("the swap does not fit in a transaction"));
        }
        Ok(signed(&tx, blockhash.last_valid_block_height, out))
    }

    /// Moves everything the session holds out and closes its accounts: on delivery the output
    /// to the destination and anything left of the input to the payer; on a refund (`deliver`
    /// false) both to the payer. The rent and the remaining lamports go back to whoever funded
    /// them (`Session::sol_to`).
    pub(super) async fn sweep(&self, s: &Session, deliver: bool) -> Result<StepAnswer, SwapError> {
        let payer = s.terms.payer;
        let output_to = if deliver { s.terms.destination } else { payer };
        let mut ixs: Vec<Instruction> = Vec::new();
        let (mut rent, mut moved) = (0, 0);
        for (mint, recipient) in [(&s.terms.to_mint, &output_to), (&s.terms.from_mint, &payer)] {
            let source = ata(&s.address, mint);
            let Some(amount) = self.chain.token_balance(&source).await? else { continue };
            if amount > 0 {
                let destination = ata(recipient, mint);
                if self.chain.account(&destination).await?.is_none() {
                    rent += self.chain.minimum_balance_for_rent_exemption(token::ACCOUNT_LEN).await?;
                    ixs.push(associated_token::create_idempotent(&s.address, recipient, mint, &TOKEN_PROGRAM));
                }
                let decimals = self.decimals(mint).await?;
                ixs.push(token::transfer_checked(&source, mint, &destination, &s.address, amount, decimals));
            }
            // What the step reports: the output delivered, or the input given back.
            let reported = if deliver { &s.terms.to_mint } else { &s.terms.from_mint };
            if mint == reported {
                moved = amount;
            }
            ixs.push(token::close_account(&source, &s.sol_to, &s.address));
        }
        if deliver && moved == 0 {
            return Err(SwapError::NothingToDo("the session holds no output"));
        }
        let lamports = self.chain.balance(&s.address).await?;
        let rest = lamports.saturating_sub(rent + SIGNATURE_FEE);
        if rest > 0 {
            ixs.push(system::transfer(&s.address, &s.sol_to, rest));
        }
        if ixs.is_empty() {
            return Err(SwapError::NothingToDo("the session holds nothing"));
        }
        let blockhash = self.chain.latest_blockhash().await?;
        let message = Message::compile(&s.address, &ixs, blockhash.blockhash).map_err(|_| SwapError::Sealed)?;
        let mut tx = Transaction::new_unsigned(message);
        tx.sign(&[&s.key]).map_err(|_| SwapError::Sealed)?;
        Ok(signed(&tx, blockhash.last_valid_block_height, moved))
    }

    /// The receipt of a settled session, after checking on chain that `final_tx_sig` landed and
    /// paid the destination.
    pub(super) async fn attest(
        &self,
        s: &Session,
        keys: &EnclaveKeys,
        funding_tx_sig: &str,
        final_tx_sig: &str,
        now: u64,
    ) -> Result<StepAnswer, SwapError> {
        self.check_funding(s, funding_tx_sig).await?;
        let landed = self
            .chain
            .transaction(final_tx_sig)
            .await?
            .ok_or(SwapError::NothingToDo("the delivery is not on chain"))?;
        let meta =
            landed.meta.as_ref().filter(|m| m.err.is_none()).ok_or(SwapError::NothingToDo("the delivery failed"))?;
        let tx = landed_transaction(&landed.transaction)?;
        if tx.message.fee_payer() != Some(&s.address) {
            return Err(SwapError::NothingToDo("that transaction is not this session's delivery"));
        }
        // What the destination's token account gained in that transaction.
        let destination = ata(&s.terms.destination, &s.terms.to_mint);
        let gained = |list: &[chain::TokenBalance]| {
            list.iter().find(|b| landed.account_keys.get(b.account_index) == Some(&destination)).map_or(0, |b| b.amount)
        };
        let out = gained(&meta.post_token_balances).saturating_sub(gained(&meta.pre_token_balances));
        if out == 0 {
            return Err(SwapError::NothingToDo("that transaction paid the destination nothing"));
        }
        let mut receipt = SwapReceipt {
            version: shared::swap::RECEIPT_VERSION.into(),
            session_id: s.text.session_id.clone(),
            from_mint: s.text.from_mint.clone(),
            to_mint: s.text.to_mint.clone(),
            amount_in: s.text.amount.clone(),
            actual_out: out.to_string(),
            destination: s.text.destination.clone(),
            ephemeral_pubkey: s.address.to_string(),
            funding_tx_sig: funding_tx_sig.into(),
            final_tx_sig: final_tx_sig.into(),
            timestamp: now,
            address: receipt_address(&s.terms.session_id, &self.program_id).to_string(),
            enclave_pubkey: b64::encode(keys.enclave_public()),
            signature: String::new(),
        };
        let message = receipt.message().map_err(|_| SwapError::NothingToDo("a transaction signature is malformed"))?;
        receipt.signature = b64::encode(keys.signer().sign(&message).to_bytes());
        Ok(StepAnswer::Attested { amount: Amount(out), receipt: Box::new(receipt) })
    }
}

fn signed(tx: &Transaction, last_valid_block_height: u64, amount: u64) -> StepAnswer {
    StepAnswer::Signed(SignedStep {
        transaction: b64::encode(tx.serialize()),
        signature: tx.id(),
        last_valid_block_height,
        amount: Amount(amount),
    })
}
