//! Encrypted `/agent` (contract §2.3): the envelope goes to the enclave unread, which runs the
//! tool loop with its five tools and seals the reply; never a plaintext fallback.

use serde::Serialize;
use shared::wire::EncryptedAgentResponse;

use super::{Call, EnclaveRoute, SealedRequest};
use crate::billing::metering::{BillingReport, Paid, Payer, Price};
use crate::http::error::RelayError;
use crate::state::App;

/// The enclave's answer, with what the relay adds.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EncryptedAgentAnswer {
    #[serde(flatten)]
    pub enclave: EncryptedAgentResponse,
    pub billing: BillingReport,
}

pub async fn run(app: &App, request: SealedRequest, payer: Payer) -> Result<Paid<EncryptedAgentAnswer>, RelayError> {
    let call = Call {
        route: EnclaveRoute::Agent,
        usage_route: "/agent",
        request,
        payer,
        price: Price::PerCall(app.prices.agent_call),
    };
    let Paid { value, billing, settlement } = super::run::<EncryptedAgentResponse>(app, call).await?;
    let enclave = EncryptedAgentResponse { onchain_attestation: Some(value.onchain), ..value.enclave };
    Ok(Paid { value: EncryptedAgentAnswer { enclave, billing: billing.clone() }, billing, settlement })
}
