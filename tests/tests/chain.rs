//! `shared::solana` and `chain::RpcChain` on a real local Solana chain (`tests/chain`):
//! transactions built and signed by our codec land, and what the chain reports back parses.

use std::time::Duration;

use chain::{Chain, ChainError, Commitment, Confirmation};
use e2e::chain::{CONFIRM_TIMEOUT, LocalChain, address_of, new_key};
use shared::address::Address;
use shared::solana::programs::{SYSTEM_PROGRAM, TOKEN_PROGRAM};
use shared::solana::{Instruction, Message, Transaction, associated_token, memo, system, token};

const FEE: u64 = 5000;

#[tokio::test]
async fn a_sol_transfer_lands_and_balances_move_by_amount_and_fee() {
    let local = LocalChain::start();
    let rpc = local.rpc();
    let to = address_of(&new_key());
    let before = rpc.balance(&local.payer_address()).await.unwrap();
    assert_eq!(before, 10_000_000_000);
    let amount = 2_000_000;
    let sig = local.send(&[system::transfer(&local.payer_address(), &to, amount)], &[]).await.unwrap();
    assert_eq!(rpc.balance(&to).await.unwrap(), amount);
    assert_eq!(rpc.balance(&local.payer_address()).await.unwrap(), before - amount - FEE);
    let landed = rpc.transaction(&sig).await.unwrap().expect("the transaction is found");
    let meta = landed.meta.expect("meta");
    assert_eq!((meta.err, meta.fee), (None, FEE));
    assert_eq!(landed.account_keys, [local.payer_address(), to, SYSTEM_PROGRAM]);
    assert_eq!(meta.post_balances[1], amount);
    // A new account below the rent minimum is refused.
    let tiny = local.send(&[system::transfer(&local.payer_address(), &address_of(&new_key()), 1000)], &[]).await;
    assert!(matches!(tiny, Err(ChainError::InsufficientFunds(_))), "{tiny:?}");
}

/// Mints of 6 and 9 decimals, associated accounts created twice, `MintTo`, `TransferChecked`,
/// and what `getTransaction` reports of it, parsed back by `shared::solana`.
#[tokio::test]
async fn token_flow_on_two_mints() {
    let local = LocalChain::start();
    let rpc = local.rpc();
    let (alice, bob) = (new_key(), new_key());
    let (a, b) = (address_of(&alice), address_of(&bob));
    for (decimals, minted, moved) in [(6u8, 1_000_000u64, 250_000u64), (9, 5_000_000_000, 1_234_567_891)] {
        let mint = local.create_mint(decimals).await;
        let mint_account = rpc.account(&mint).await.unwrap().expect("mint exists");
        assert_eq!((mint_account.owner, mint_account.data.len()), (TOKEN_PROGRAM, token::MINT_LEN));
        assert_eq!(mint_account.data[44], decimals, "decimals byte of the mint layout");
        // CreateIdempotent twice in a row is fine.
        for _ in 0..2 {
            let ixs = [
                associated_token::create_idempotent(&local.payer_address(), &a, &mint, &TOKEN_PROGRAM),
                associated_token::create_idempotent(&local.payer_address(), &b, &mint, &TOKEN_PROGRAM),
            ];
            local.send(&ixs, &[]).await.unwrap();
        }
        let (ata_a, ata_b) = (
            associated_token::address(&a, &mint, &TOKEN_PROGRAM),
            associated_token::address(&b, &mint, &TOKEN_PROGRAM),
        );
        let account = rpc.account(&ata_a).await.unwrap().expect("ATA exists");
        assert_eq!((account.owner, account.data.len()), (TOKEN_PROGRAM, token::ACCOUNT_LEN));
        assert_eq!(rpc.token_balance(&ata_a).await.unwrap(), Some(0));
        assert_eq!(local.mint_to(&mint, &a, minted).await, ata_a);
        assert_eq!(rpc.token_balance(&ata_a).await.unwrap(), Some(minted));

        let transfer = token::transfer_checked(&ata_a, &mint, &ata_b, &a, moved, decimals);
        let sig = local.send(std::slice::from_ref(&transfer), &[&alice]).await.unwrap();
        assert_eq!(rpc.token_balance(&ata_a).await.unwrap(), Some(minted - moved));
        assert_eq!(rpc.token_balance(&ata_b).await.unwrap(), Some(moved));

        let landed = rpc.transaction(&sig).await.unwrap().expect("found");
        let meta = landed.meta.clone().expect("meta");
        let balance = |list: &[chain::TokenBalance], key: &Address| {
            let i = landed.account_keys.iter().position(|k| k == key).unwrap();
            let b = list.iter().find(|b| b.account_index == i).expect("a token balance for the account");
            assert_eq!((b.mint, b.decimals), (mint, decimals));
            (b.owner, b.amount)
        };
        assert_eq!(balance(&meta.pre_token_balances, &ata_a), (Some(a), minted));
        assert_eq!(balance(&meta.post_token_balances, &ata_a), (Some(a), minted - moved));
        assert_eq!(balance(&meta.pre_token_balances, &ata_b), (Some(b), 0));
        assert_eq!(balance(&meta.post_token_balances, &ata_b), (Some(b), moved));
        // The raw bytes parse back to the instruction we sent, and decode as a transfer.
        let tx = Transaction::parse(&landed.transaction).unwrap();
        assert_eq!(tx.id(), sig);
        assert_eq!(tx.verify(), Ok(()));
        assert_eq!(tx.message.decompile().unwrap(), [transfer]);
        let decoded = token::decode_transfer(&tx.message, &tx.message.instructions()[0]).unwrap();
        assert_eq!(
            (decoded.source, decoded.mint, decoded.destination, decoded.authority, decoded.amount, decoded.decimals),
            (ata_a, Some(mint), ata_b, a, moved, Some(decimals))
        );

        // Wrong decimals and an amount over the balance are refused by the token program.
        let wrong = token::transfer_checked(&ata_a, &mint, &ata_b, &a, 1, decimals + 1);
        let refused = local.send(&[wrong], &[&alice]).await.unwrap_err();
        assert!(refused.to_string().contains("custom program error: 0x12"), "{refused}");
        let over = token::transfer(&ata_a, &ata_b, &a, minted);
        let refused = local.send(&[over], &[&alice]).await.unwrap_err();
        assert!(matches!(refused, ChainError::InsufficientFunds(_)), "{refused:?}");
    }
    // Close an emptied account: its rent goes back to its owner.
    let mint = local.create_mint(6).await;
    let ata = local.mint_to(&mint, &a, 0).await;
    local.send(&[token::close_account(&ata, &a, &a)], &[&alice]).await.unwrap();
    assert_eq!(rpc.account(&ata).await.unwrap(), None);
    assert_eq!(rpc.balance(&a).await.unwrap(), 2_039_280);
}

async fn signed(local: &LocalChain, ixs: &[Instruction], blockhash: [u8; 32]) -> Vec<u8> {
    let mut tx = Transaction::new_unsigned(Message::compile(&local.payer_address(), ixs, blockhash).unwrap());
    tx.sign(&[&local.payer]).unwrap();
    tx.serialize()
}

#[tokio::test]
async fn replays_and_unknown_blockhashes_are_refused() {
    let local = LocalChain::start();
    let rpc = local.rpc();
    let latest = rpc.latest_blockhash().await.unwrap();
    let bytes = signed(
        &local,
        &[system::transfer(&local.payer_address(), &address_of(&new_key()), 1_000_000)],
        latest.blockhash,
    )
    .await;
    let sig = rpc.send_transaction(&bytes).await.unwrap();
    assert_eq!(
        rpc.confirm(&sig, latest.last_valid_block_height, Commitment::Confirmed, CONFIRM_TIMEOUT).await,
        Ok(Confirmation::Confirmed)
    );
    assert_eq!(rpc.send_transaction(&bytes).await, Err(ChainError::AlreadyProcessed));
    let stale = signed(&local, &[memo::memo(b"stale", &[])], [7; 32]).await;
    assert_eq!(rpc.send_transaction(&stale).await, Err(ChainError::BlockhashNotFound));
    // A bad signature is refused too.
    let mut forged = signed(&local, &[memo::memo(b"forged", &[])], latest.blockhash).await;
    forged[5] ^= 1;
    let refused = rpc.send_transaction(&forged).await.unwrap_err();
    assert!(refused.to_string().contains("signature verification"), "{refused}");
}

#[tokio::test]
async fn a_memo_lands_and_is_listed_for_its_signer() {
    let local = LocalChain::start();
    let rpc = local.rpc();
    let sig = local.send(&[memo::memo(b"order:42 hello memo", &[&local.payer_address()])], &[]).await.unwrap();
    let listed = rpc.signatures_for_address(&local.payer_address(), None, 10).await.unwrap();
    let entry = listed.iter().find(|s| s.signature == sig).expect("listed");
    assert_eq!(entry.memo.as_deref(), Some("[19] order:42 hello memo"));
    assert_eq!(entry.err, None);
    // Paging: nothing before the oldest.
    let oldest = listed.last().unwrap().signature.clone();
    assert!(rpc.signatures_for_address(&local.payer_address(), Some(&oldest), 10).await.unwrap().is_empty());
    // Invalid UTF-8 is refused by the memo program.
    assert!(local.send(&[memo::memo(&[0xff, 0xfe], &[])], &[]).await.is_err());
}

#[tokio::test]
async fn confirm_reaches_finalized_expires_and_times_out() {
    let local = LocalChain::start();
    let rpc = local.rpc();
    let latest = rpc.latest_blockhash().await.unwrap();
    let bytes = signed(&local, &[memo::memo(b"finalize me", &[])], latest.blockhash).await;
    let sig = rpc.send_transaction(&bytes).await.unwrap();
    let started = std::time::Instant::now();
    let done = rpc.confirm(&sig, latest.last_valid_block_height, Commitment::Finalized, Duration::from_secs(30)).await;
    assert_eq!(done, Ok(Confirmation::Confirmed));
    assert!(started.elapsed() > Duration::from_millis(500), "finalized takes about 2 s on this chain");
    let statuses = rpc.signature_statuses(std::slice::from_ref(&sig)).await.unwrap();
    assert_eq!(statuses[0].as_ref().unwrap().confirmation_status, Some(Commitment::Finalized));

    // A signature the chain never saw, with its last valid height behind us: expired.
    let unknown = bs58_of(&[9; 64]);
    let height = rpc.block_height().await.unwrap();
    assert_eq!(
        rpc.confirm(&unknown, height - 1, Commitment::Confirmed, CONFIRM_TIMEOUT).await,
        Ok(Confirmation::Expired)
    );
    assert_eq!(
        rpc.confirm(&unknown, height + 1_000_000, Commitment::Confirmed, Duration::from_millis(300)).await,
        Ok(Confirmation::TimedOut)
    );
}

fn bs58_of(signature: &[u8; 64]) -> String {
    shared::solana::signature_id(signature)
}

#[tokio::test]
async fn driver_commands() {
    let local = LocalChain::start();
    let rpc = local.rpc();
    let who = address_of(&new_key());
    local.fund_sol(&who, 3_000_000);
    assert_eq!(rpc.balance(&who).await.unwrap(), 3_000_000);
    let mint = local.create_mint(6).await;
    let ata = local.fund_token(&who, &mint, 777);
    assert_eq!(ata, associated_token::address(&who, &mint, &TOKEN_PROGRAM));
    assert_eq!(rpc.token_balance(&ata).await.unwrap(), Some(777));
    let other = address_of(&new_key());
    local.set_account(&other, 1_000_000, &[1, 2, 3], &TOKEN_PROGRAM);
    let account = rpc.account(&other).await.unwrap().unwrap();
    assert_eq!((account.lamports, account.owner, account.data), (1_000_000, TOKEN_PROGRAM, vec![1, 2, 3]));
    assert_eq!(rpc.token_balance(&other).await.unwrap(), None, "too short to be a token account");
    assert_eq!(rpc.minimum_balance_for_rent_exemption(0).await.unwrap(), 890_880);
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    let info = local.time_travel(now_ms + 86_400_000);
    assert!(info["absoluteSlot"].as_u64().unwrap() > 0);
    assert!(local.command(serde_json::json!({"cmd": "nope"})).unwrap_err().contains("unknown cmd"));
    // Transactions still land after the jump.
    local.send(&[memo::memo(b"after time travel", &[])], &[]).await.unwrap();
}
