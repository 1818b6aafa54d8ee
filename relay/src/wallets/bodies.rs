//! The wallet routes' request bodies: each struct is what the OpenAPI document shows and what
//! its handler gets, read through `Fields` (every missing field named at once, then each field
//! checked with its own code). The fund-moving ones are also read by the enclave, from the same
//! bytes the owner signed.

use shared::address::Address;

use crate::http::error::RelayError;
use crate::swaps::params::{Fields, FromFields};

/// The create request.
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase", example = json!({"webhookUrl": "https://agent.example/hooks/svc"}))]
pub struct CreateWalletBody {
    /// Where the wallet's events are POSTed (Standard Webhooks); a public http(s) URL.
    pub webhook_url: String,
    /// The owner's ed25519 public key (base58). Sealed with the wallet's key: every request
    /// that moves the wallet's funds must then carry the owner's signature, which the enclave
    /// checks (docs/wallets.md).
    #[schema(value_type = Option<String>)]
    pub owner_pubkey: Option<Address>,
}

impl FromFields for CreateWalletBody {
    const SHAPE: &'static str = "{webhookUrl, ownerPubkey}";
    const REQUIRED: &'static [&'static str] = &["webhookUrl"];

    fn from_fields(f: &Fields) -> Result<Self, RelayError> {
        Ok(CreateWalletBody { webhook_url: f.text("webhookUrl")?, owner_pubkey: f.optional_pubkey("ownerPubkey")? })
    }
}

/// The fund-intent request.
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase",
         example = json!({"mint": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "amount": "10000000",
                          "payerPubkey": "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"}))]
pub struct FundIntentBody {
    /// A mint the service lists.
    #[schema(value_type = String)]
    pub mint: Address,
    /// Base units.
    #[schema(value_type = String, pattern = "^[1-9][0-9]{0,19}$")]
    pub amount: u64,
    /// The wallet that signs and pays (base58).
    #[schema(value_type = String)]
    pub payer_pubkey: Address,
}

impl FromFields for FundIntentBody {
    const SHAPE: &'static str = "{mint, amount, payerPubkey}";
    const REQUIRED: &'static [&'static str] = &["mint", "amount", "payerPubkey"];

    fn from_fields(f: &Fields) -> Result<Self, RelayError> {
        Ok(FundIntentBody {
            mint: f.mint("mint")?,
            amount: f.amount("amount")?,
            payer_pubkey: f.pubkey("payerPubkey")?,
        })
    }
}

/// The encrypt request.
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase",
         example = json!({"mint": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "amount": "10000000"}))]
pub struct EncryptBody {
    #[schema(value_type = String)]
    pub mint: Address,
    #[schema(value_type = String, pattern = "^[1-9][0-9]{0,19}$")]
    pub amount: u64,
}

impl FromFields for EncryptBody {
    const SHAPE: &'static str = "{mint, amount}";
    const REQUIRED: &'static [&'static str] = &["mint", "amount"];

    fn from_fields(f: &Fields) -> Result<Self, RelayError> {
        Ok(EncryptBody { mint: f.mint("mint")?, amount: f.amount("amount")? })
    }
}

/// The managed swap request (contract §4.3).
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase",
         example = json!({"fromMint": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
                          "toMint": "So11111111111111111111111111111111111111112", "amount": "10000000",
                          "destinationPubkey": "J1uu1RsZxECfBaj7v8CFpdzHUrXSsGJbxkrd2aq9fAaQ", "slippageBps": 50}))]
pub struct ManagedSwapBody {
    #[schema(value_type = String)]
    pub from_mint: Address,
    #[schema(value_type = String)]
    pub to_mint: Address,
    /// Base units of the input, from the wallet's public balance.
    #[schema(value_type = String, pattern = "^[1-9][0-9]{0,19}$")]
    pub amount: u64,
    /// Receives the output; not the wallet itself.
    #[schema(value_type = String)]
    pub destination_pubkey: Address,
    /// The enclave's least output is its router quote less this (default 100).
    #[schema(maximum = 10000)]
    pub slippage_bps: Option<u16>,
}

impl FromFields for ManagedSwapBody {
    const SHAPE: &'static str = "{fromMint, toMint, amount, destinationPubkey, slippageBps}";
    const REQUIRED: &'static [&'static str] = &["fromMint", "toMint", "amount", "destinationPubkey"];

    fn from_fields(f: &Fields) -> Result<Self, RelayError> {
        Ok(ManagedSwapBody {
            from_mint: f.mint("fromMint")?,
            to_mint: f.mint("toMint")?,
            amount: f.amount("amount")?,
            slippage_bps: f.bps("slippageBps")?,
            destination_pubkey: f.pubkey("destinationPubkey")?,
        })
    }
}

/// The shield and withdraw requests: tokens of the wallet's, to a destination.
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase",
         example = json!({"mint": "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", "amount": "10000000",
                          "destinationPubkey": "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"}))]
pub struct PayoutBody {
    #[schema(value_type = String)]
    pub mint: Address,
    /// Base units (for a shield, one of the mint's denominations: its `buckets`).
    #[schema(value_type = String, pattern = "^[1-9][0-9]{0,19}$")]
    pub amount: u64,
    /// Receives the tokens (for a shield, a fresh address: not the wallet).
    #[schema(value_type = String)]
    pub destination_pubkey: Address,
}

impl FromFields for PayoutBody {
    const SHAPE: &'static str = "{mint, amount, destinationPubkey}";
    const REQUIRED: &'static [&'static str] = &["mint", "amount", "destinationPubkey"];

    fn from_fields(f: &Fields) -> Result<Self, RelayError> {
        Ok(PayoutBody {
            mint: f.mint("mint")?,
            amount: f.amount("amount")?,
            destination_pubkey: f.pubkey("destinationPubkey")?,
        })
    }
}
