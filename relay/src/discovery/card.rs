//! `GET /.well-known/agent-card.json` (contract §2.11): the A2A card, in one document both A2A
//! v1.0 and v0.3 readers accept (notes: v1 readers ignore the v0.3 fields, v0.3 readers need
//! them): v1's `supportedInterfaces` and `securityRequirements` beside v0.3's `url`,
//! `protocolVersion`, `preferredTransport` and `security`; each security scheme carries both
//! its OpenAPI-style fields (v0.3) and its v1 wrapper. Served with `ETag` and `Cache-Control`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use super::DiscoveryConfig;
use super::skills::{SKILLS, Status};

/// The card's `version` (contract §2.11, §9.3).
pub const CARD_VERSION: &str = "1.0.0";

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    pub schema_version: &'static str,
    pub protocol: &'static str,
    /// v0.3: the A2A protocol version the card follows.
    pub protocol_version: &'static str,
    pub name: String,
    pub description: String,
    /// v0.3: the service's base for agents.
    pub url: String,
    /// v0.3.
    pub preferred_transport: &'static str,
    /// v1.0.
    pub supported_interfaces: Vec<Interface>,
    pub provider: Provider,
    pub version: &'static str,
    pub icon_url: String,
    pub documentation_url: String,
    pub capabilities: CardCapabilities,
    #[schema(value_type = Object)]
    pub security_schemes: BTreeMap<&'static str, Value>,
    /// v0.3: either scheme.
    #[schema(value_type = Vec<Object>)]
    pub security: Vec<BTreeMap<&'static str, Vec<String>>>,
    /// v1.0: either scheme.
    #[schema(value_type = Vec<Object>)]
    pub security_requirements: Vec<Value>,
    pub default_input_modes: [&'static str; 1],
    pub default_output_modes: [&'static str; 1],
    pub skills: Vec<CardSkill>,
    pub metadata: Metadata,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Interface {
    pub url: String,
    pub protocol_binding: &'static str,
    pub protocol_version: &'static str,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Provider {
    pub organization: String,
    pub url: String,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CardCapabilities {
    pub streaming: bool,
    pub push_notifications: bool,
    pub state_transition_history: bool,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct CardSkill {
    pub id: String,
    pub name: &'static str,
    pub description: String,
    pub tags: Vec<&'static str>,
    pub examples: Vec<&'static str>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// The ledger network (the service is mainnet only, contract §2.11).
    pub network: String,
    pub payment_rails: Vec<&'static str>,
    pub mcp_http: String,
    pub openapi: String,
    pub x402_manifest: String,
}

/// The card for a relay at `base` (its public URL).
pub fn card(base: &str, config: &DiscoveryConfig, network: &str) -> AgentCard {
    let agents = format!("{base}/agents/v1");
    AgentCard {
        schema_version: "1.0",
        protocol: "a2a",
        protocol_version: "0.3.0",
        name: config.name.clone(),
        description: config.description.clone(),
        url: agents.clone(),
        preferred_transport: "HTTP+JSON",
        supported_interfaces: vec![Interface { url: agents, protocol_binding: "HTTP+JSON", protocol_version: "1.0" }],
        provider: Provider { organization: config.organization.clone(), url: config.organization_url(base) },
        version: CARD_VERSION,
        icon_url: format!("{base}/icon.svg"),
        documentation_url: config.documentation_url(base),
        capabilities: CardCapabilities { streaming: false, push_notifications: true, state_transition_history: true },
        security_schemes: BTreeMap::from([
            (
                "ApiKey",
                json!({
                    "type": "http", "scheme": "bearer", "bearerFormat": "sk_svc_*",
                    "description": "An API key bound to a prepaid balance",
                    "httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "sk_svc_*"},
                }),
            ),
            (
                "X402",
                json!({
                    "type": "apiKey", "in": "header", "name": "X-PAYMENT",
                    "description": "An x402 payment payload, one per call (see the x402 manifest)",
                    "apiKeySecurityScheme": {"location": "header", "name": "X-PAYMENT"},
                }),
            ),
        ]),
        security: vec![BTreeMap::from([("ApiKey", vec![])]), BTreeMap::from([("X402", vec![])])],
        security_requirements: vec![
            json!({"schemes": {"ApiKey": {"list": []}}}),
            json!({"schemes": {"X402": {"list": []}}}),
        ],
        default_input_modes: ["application/json"],
        default_output_modes: ["application/json"],
        skills: SKILLS
            .iter()
            .map(|s| CardSkill {
                id: s.id(),
                name: s.name,
                description: match s.status {
                    Status::Live => s.description.to_string(),
                    Status::Soon => format!("{} (Soon: not available yet.)", s.description),
                },
                tags: s.tags.to_vec(),
                examples: s.examples.to_vec(),
            })
            .collect(),
        metadata: Metadata {
            network: network.to_string(),
            payment_rails: vec!["x402 stablecoin", "internal-credit"],
            mcp_http: format!("{base}/mcp/v1"),
            openapi: format!("{base}/agents/v1/openapi.json"),
            x402_manifest: format!("{base}/.well-known/x402"),
        },
    }
}
