//! Solana transactions and messages (`shared::solana`), the codec the relay keys x402 payments
//! with and the enclave parses router transactions with: strict parsing is exact (what parses
//! serialises to the same bytes), and every accessor is safe on whatever parsed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shared::solana::{Transaction, VersionedMessage};

fn message(m: &VersionedMessage) {
    let _ = (m.sanitize(), m.decompile(), m.version(), m.fee_payer(), m.recent_blockhash());
    let _ = (m.header(), m.address_table_lookups(), m.signer_keys());
    for i in 0..=m.static_account_keys().len() {
        let _ = (m.is_signer(i), m.is_writable(i));
    }
    for ix in m.instructions() {
        let _ = m.program_id(ix);
        for n in 0..=ix.accounts.len() {
            let _ = m.instruction_account(ix, n);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(tx) = Transaction::parse(data) {
        assert_eq!(tx.serialize(), data);
        let _ = tx.verify();
        for i in 0..=tx.signatures.len() {
            let _ = tx.verify_signature(i);
        }
        let _ = (tx.missing_signers(), tx.id());
        message(&tx.message);
        let m = tx.message.serialize();
        assert_eq!(VersionedMessage::parse(&m).as_ref(), Ok(&tx.message));
        assert_eq!(relay::x402::payment::message_hash(data), Ok(shared::sha256(&m)));
    }
    if let Ok(m) = VersionedMessage::parse(data) {
        assert_eq!(m.serialize(), data);
        message(&m);
    }
});
