//! `shared::solana` against the Solana SDK crates (dev-dependencies only): the same
//! transactions built both ways must be the same bytes, and each side must parse the other's.
//!
//! SPL instruction *data* is not cross-checked here: `spl-token-interface` and
//! `spl-associated-token-account-interface` are built on solana-pubkey 3 (solana-address 1),
//! which cannot share types with the solana-instruction these crates use. Those layouts are
//! checked against the programs themselves on the local chain (`tests/tests/chain.rs`).

#![cfg(feature = "solana")]

use ed25519_dalek::SigningKey;
use shared::address::{Address, find_program_address};
use shared::solana::programs::{ASSOCIATED_TOKEN_PROGRAM, SYSTEM_PROGRAM, TOKEN_PROGRAM};
use shared::solana::{
    AccountMeta, Instruction, Message, MessageV0, Transaction, VersionedMessage, associated_token, memo, system, token,
};
use solana_hash::Hash;
use solana_instruction::{AccountMeta as TheirMeta, Instruction as TheirInstruction};
use solana_keypair::Keypair;
use solana_message::v0::MessageAddressTableLookup;
use solana_message::{Message as TheirMessage, VersionedMessage as TheirVersioned, v0};
use solana_pubkey::Pubkey;
use solana_signer::Signer;
use solana_transaction::Transaction as TheirTransaction;
use solana_transaction::versioned::VersionedTransaction;

use crate::seeded::{bytes32, next};

/// The same signer on both sides.
struct Key {
    ours: SigningKey,
    theirs: Keypair,
}

impl Key {
    fn new(seed: [u8; 32]) -> Self {
        Key { ours: SigningKey::from_bytes(&seed), theirs: Keypair::new_from_array(seed) }
    }
    fn address(&self) -> Address {
        let a = Address(self.ours.verifying_key().to_bytes());
        assert_eq!(a.0, self.theirs.pubkey().to_bytes());
        a
    }
}

fn pk(a: &Address) -> Pubkey {
    Pubkey::new_from_array(a.0)
}

fn theirs(ix: &Instruction) -> TheirInstruction {
    TheirInstruction {
        program_id: pk(&ix.program_id),
        accounts: ix
            .accounts
            .iter()
            .map(|m| TheirMeta { pubkey: pk(&m.pubkey), is_signer: m.is_signer, is_writable: m.is_writable })
            .collect(),
        data: ix.data.clone(),
    }
}

/// Builds, signs and serializes a legacy transaction both ways; checks bytes and cross-parsing.
fn legacy_both_ways(payer: &Key, signers: &[&Key], ixs: &[Instruction], blockhash: [u8; 32]) -> Vec<u8> {
    let message = Message::compile(&payer.address(), ixs, blockhash).unwrap();
    let mut ours = Transaction::new_unsigned(message);
    let keys: Vec<&SigningKey> = signers.iter().map(|k| &k.ours).collect();
    ours.sign(&keys).unwrap();
    let our_bytes = ours.serialize();

    let their_ixs: Vec<TheirInstruction> = ixs.iter().map(theirs).collect();
    let hash = Hash::new_from_array(blockhash);
    let their_message = TheirMessage::new_with_blockhash(&their_ixs, Some(&pk(&payer.address())), &hash);
    let mut tx = TheirTransaction::new_unsigned(their_message);
    let kps: Vec<&Keypair> = signers.iter().map(|k| &k.theirs).collect();
    tx.try_partial_sign(&kps, hash).unwrap();
    let their_bytes = wincode::serialize(&tx).unwrap();

    assert_eq!(our_bytes, their_bytes, "legacy bytes differ");
    assert_eq!(ours.message.serialize(), tx.message_data());
    assert_eq!(Transaction::parse(&their_bytes).unwrap(), ours);
    let back: TheirTransaction = wincode::deserialize(&our_bytes).unwrap();
    assert_eq!(back, tx);
    our_bytes
}

fn v0_both_ways(payer: &Key, signers: &[&Key], ixs: &[Instruction], blockhash: [u8; 32]) -> Vec<u8> {
    let message = MessageV0::compile(&payer.address(), ixs, blockhash).unwrap();
    let mut ours = Transaction::new_unsigned(message);
    let keys: Vec<&SigningKey> = signers.iter().map(|k| &k.ours).collect();
    ours.sign(&keys).unwrap();
    let our_bytes = ours.serialize();

    let their_ixs: Vec<TheirInstruction> = ixs.iter().map(theirs).collect();
    let m = v0::Message::try_compile(&pk(&payer.address()), &their_ixs, &[], Hash::new_from_array(blockhash)).unwrap();
    let kps: Vec<&Keypair> = signers.iter().map(|k| &k.theirs).collect();
    let tx = VersionedTransaction::try_new(TheirVersioned::V0(m), &kps).unwrap();
    let their_bytes = wincode::serialize(&tx).unwrap();

    assert_eq!(our_bytes, their_bytes, "v0 bytes differ");
    assert_eq!(Transaction::parse(&their_bytes).unwrap(), ours);
    let back: VersionedTransaction = wincode::deserialize(&our_bytes).unwrap();
    assert_eq!(back, tx);
    our_bytes
}

#[test]
fn sol_transfers() {
    let payer = Key::new([1; 32]);
    let to = Address([2; 32]);
    let ours = system::transfer(&payer.address(), &to, 1_000_000);
    let sdk = solana_system_interface::instruction::transfer(&pk(&payer.address()), &pk(&to), 1_000_000);
    assert_eq!(theirs(&ours), sdk, "system transfer instruction");
    legacy_both_ways(&payer, &[&payer], std::slice::from_ref(&ours), [7; 32]);
    v0_both_ways(&payer, &[&payer], &[ours], [7; 32]);
}

#[test]
fn create_mint_ata_and_mint_with_two_signers() {
    let payer = Key::new([3; 32]);
    let mint = Key::new([4; 32]);
    let owner = Address([5; 32]);
    let create = system::create_account(&payer.address(), &mint.address(), 1_461_600, 82, &TOKEN_PROGRAM);
    let sdk = solana_system_interface::instruction::create_account(
        &pk(&payer.address()),
        &pk(&mint.address()),
        1_461_600,
        82,
        &pk(&TOKEN_PROGRAM),
    );
    assert_eq!(theirs(&create), sdk, "system create_account instruction");
    let ata = associated_token::address(&owner, &mint.address(), &TOKEN_PROGRAM);
    let (sdk_ata, _) =
        Pubkey::find_program_address(&[&owner.0, &TOKEN_PROGRAM.0, &mint.address().0], &pk(&ASSOCIATED_TOKEN_PROGRAM));
    assert_eq!(ata.0, sdk_ata.to_bytes());
    let ixs = [
        create,
        token::initialize_mint2(&mint.address(), 6, &payer.address(), None),
        associated_token::create_idempotent(&payer.address(), &owner, &mint.address(), &TOKEN_PROGRAM),
        token::mint_to(&mint.address(), &ata, &payer.address(), 5_000_000),
    ];
    let bytes = legacy_both_ways(&payer, &[&payer, &mint], &ixs, [8; 32]);
    let tx = Transaction::parse(&bytes).unwrap();
    assert_eq!(tx.message.signer_keys(), [payer.address(), mint.address()]);
    assert_eq!(tx.verify(), Ok(()));
    assert!(tx.message.static_account_keys().contains(&SYSTEM_PROGRAM));
    v0_both_ways(&payer, &[&payer, &mint], &ixs, [8; 32]);
}

#[test]
fn transfer_checked_close_and_memo() {
    let payer = Key::new([6; 32]);
    let owner = Key::new([7; 32]);
    let mint = Address([9; 32]);
    let source = associated_token::address(&owner.address(), &mint, &TOKEN_PROGRAM);
    let dest = associated_token::address(&payer.address(), &mint, &TOKEN_PROGRAM);
    let ixs = [
        token::transfer_checked(&source, &mint, &dest, &owner.address(), 42, 6),
        token::transfer(&source, &dest, &owner.address(), 1),
        token::close_account(&source, &owner.address(), &owner.address()),
        memo::memo(b"order:42 hello memo", &[&owner.address()]),
        memo::memo(b"no signer", &[]),
    ];
    legacy_both_ways(&payer, &[&payer, &owner], &ixs, [1; 32]);
    // Partial: only the owner signs; the fee payer's slot stays empty on both sides.
    let bytes = legacy_both_ways(&payer, &[&owner], &ixs, [1; 32]);
    let tx = Transaction::parse(&bytes).unwrap();
    assert_eq!(tx.missing_signers(), [payer.address()]);
    v0_both_ways(&payer, &[&payer, &owner], &ixs, [1; 32]);
}

/// Random instruction sets: keys reused across instructions with mixed flags, programs that are
/// also accounts, several signers. Exercises the ordering and merging rules.
#[test]
fn random_messages_compile_identically() {
    let mut state = 0x50_1a_u64;
    let signers: Vec<Key> = (0..4).map(|_| Key::new(bytes32(&mut state))).collect();
    for round in 0..300 {
        let pool: Vec<Address> =
            (0..6).map(|_| Address(bytes32(&mut state))).chain(signers.iter().map(Key::address)).collect();
        let payer = &signers[round % signers.len()];
        let mut ixs = Vec::new();
        for _ in 0..1 + next(&mut state) % 4 {
            let program = pool[(next(&mut state) % 6) as usize];
            let accounts = (0..next(&mut state) % 6)
                .map(|_| {
                    let r = next(&mut state);
                    let i = (r % pool.len() as u64) as usize;
                    // Only real signers may be flagged as signing.
                    let signer = i >= 6 && (r >> 8) & 1 == 1;
                    AccountMeta { pubkey: pool[i], is_signer: signer, is_writable: (r >> 9) & 1 == 1 }
                })
                .collect();
            let data = (0..next(&mut state) % 40).map(|i| i as u8).collect();
            ixs.push(Instruction { program_id: program, accounts, data });
        }
        // Every key that must sign, signs.
        let message = Message::compile(&payer.address(), &ixs, [round as u8; 32]).unwrap();
        let needed: Vec<&Key> = message.account_keys[..usize::from(message.header.num_required_signatures)]
            .iter()
            .map(|a| signers.iter().find(|k| k.address() == *a).unwrap())
            .collect();
        legacy_both_ways(payer, &needed, &ixs, [round as u8; 32]);
        v0_both_ways(payer, &needed, &ixs, [round as u8; 32]);
    }
}

/// Compiling with lookup tables: random instructions and two tables that list some of their keys
/// (in another order, one key in both), with a few keys held static; the same message bytes as
/// Solana's `try_compile` given the same tables less the held keys.
#[test]
fn messages_with_lookup_tables_compile_identically() {
    let mut state = 0x7ab1e_u64;
    let signers: Vec<Key> = (0..3).map(|_| Key::new(bytes32(&mut state))).collect();
    for round in 0..300 {
        let pool: Vec<Address> =
            (0..10).map(|_| Address(bytes32(&mut state))).chain(signers.iter().map(Key::address)).collect();
        let payer = &signers[0];
        let mut ixs = Vec::new();
        for _ in 0..1 + next(&mut state) % 4 {
            let program = pool[(next(&mut state) % 10) as usize];
            let accounts = (0..next(&mut state) % 8)
                .map(|_| {
                    let r = next(&mut state);
                    let i = (r % pool.len() as u64) as usize;
                    AccountMeta {
                        pubkey: pool[i],
                        is_signer: i >= 10 && (r >> 8) & 1 == 1,
                        is_writable: (r >> 9) & 1 == 1,
                    }
                })
                .collect();
            ixs.push(Instruction { program_id: program, accounts, data: vec![round as u8] });
        }
        let mut first: Vec<Address> = pool[..7].to_vec();
        first.reverse();
        let second: Vec<Address> = pool[5..12].to_vec();
        let keep: Vec<Address> = pool[..10].iter().copied().filter(|_| next(&mut state).is_multiple_of(4)).collect();
        let tables = [(Address([0xa1; 32]), first), (Address([0xa2; 32]), second)];
        let blockhash = [round as u8; 32];
        let ours = MessageV0::compile_with_lookups(&payer.address(), &ixs, blockhash, &tables, &keep).unwrap();

        let their_tables: Vec<solana_message::AddressLookupTableAccount> = tables
            .iter()
            .map(|(key, addresses)| solana_message::AddressLookupTableAccount {
                key: pk(key),
                addresses: addresses
                    .iter()
                    .map(|a| if keep.contains(a) { Pubkey::new_from_array([0; 32]) } else { pk(a) })
                    .collect(),
            })
            .collect();
        let their_ixs: Vec<TheirInstruction> = ixs.iter().map(theirs).collect();
        let theirs =
            v0::Message::try_compile(&pk(&payer.address()), &their_ixs, &their_tables, Hash::new_from_array(blockhash))
                .unwrap();
        assert_eq!(ours.serialize(), TheirVersioned::V0(theirs).serialize(), "round {round}");
    }
}

/// A router-style v0 transaction with address table lookups: ours parses theirs and writes it
/// back byte for byte.
#[test]
fn v0_with_lookups_parses() {
    let payer = Key::new([11; 32]);
    let ix = memo::memo(b"swap", &[]);
    let mut m =
        v0::Message::try_compile(&pk(&payer.address()), &[theirs(&ix)], &[], Hash::new_from_array([2; 32])).unwrap();
    m.address_table_lookups = vec![
        MessageAddressTableLookup {
            account_key: Pubkey::new_from_array([12; 32]),
            writable_indexes: vec![0, 5],
            readonly_indexes: vec![1],
        },
        MessageAddressTableLookup {
            account_key: Pubkey::new_from_array([13; 32]),
            writable_indexes: vec![],
            readonly_indexes: vec![200],
        },
    ];
    m.instructions[0].accounts = vec![2, 3, 4, 5];
    let tx = VersionedTransaction::try_new(TheirVersioned::V0(m), &[&payer.theirs]).unwrap();
    let bytes = wincode::serialize(&tx).unwrap();
    let ours = Transaction::parse(&bytes).unwrap();
    assert_eq!(ours.serialize(), bytes);
    assert_eq!(ours.verify(), Ok(()));
    let VersionedMessage::V0(v0m) = &ours.message else { panic!("expected v0") };
    assert_eq!(v0m.address_table_lookups.len(), 2);
    assert_eq!(v0m.address_table_lookups[0].writable_indexes, [0, 5]);
    assert_eq!(v0m.loaded_len(), 4);
    assert_eq!(ours.message.instruction_account(&ours.message.instructions()[0], 0), None);
}

#[test]
fn find_program_address_matches_for_atas() {
    let mut state = 7_u64;
    for _ in 0..200 {
        let (wallet, mint) = (Address(bytes32(&mut state)), Address(bytes32(&mut state)));
        let ours = associated_token::address(&wallet, &mint, &TOKEN_PROGRAM);
        let (again, _) =
            find_program_address(&[&wallet.0, &TOKEN_PROGRAM.0, &mint.0], &ASSOCIATED_TOKEN_PROGRAM).unwrap();
        let (sdk, _) =
            Pubkey::find_program_address(&[&wallet.0, &TOKEN_PROGRAM.0, &mint.0], &pk(&ASSOCIATED_TOKEN_PROGRAM));
        assert_eq!((ours, again.0), (again, sdk.to_bytes()));
    }
}
