//! The OpenAPI 3.1 documents (contract §4.4, §9.3), generated from the handlers' and types'
//! annotations (utoipa): `GET /openapi.json` for the whole public API and
//! `GET /agents/v1/openapi.json` for `/agents/v1`. Built once per relay with its public URL as
//! the server; the security schemes are the card's.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::OpenApi;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContactBuilder, InfoBuilder, LicenseBuilder, OpenApi as Document, ServerBuilder};

use crate::state::App;

#[derive(OpenApi)]
#[openapi(
    paths(
        crate::enclaves::routes::public_key,
        crate::enclaves::routes::attestation,
        crate::enclaves::routes::keys,
        crate::enclaves::routes::provision,
        crate::private::tee_process::handle,
        crate::private::chat_completions::handle,
        crate::private::x402_chat::handle,
        crate::agent_route::handle,
        crate::receipts::lookups::by_address,
        crate::receipts::lookups::by_hash,
        crate::receipts::lookups::by_tx,
        crate::receipts::lookups::ledger_status,
        crate::receipts::log::routes::sth,
        crate::receipts::log::routes::inclusion,
        crate::receipts::log::routes::consistency,
        crate::receipts::log::routes::entries,
        crate::receipts::log::routes::anchors,
        crate::billing::routes::balance,
        crate::billing::routes::usage,
        crate::billing::deposits::routes::address,
        crate::billing::deposits::routes::list,
        crate::accounts::routes::challenge,
        crate::accounts::routes::sign_in,
        crate::accounts::routes::list_keys,
        crate::accounts::routes::revoke_key,
        crate::accounts::routes::rotate_key,
        crate::swaps::quote::handle,
        crate::swaps::anonymity::handle,
        crate::swaps::oneshot::start,
        crate::swaps::oneshot::execute,
        crate::swaps::views::session,
        crate::swaps::views::attestation,
        crate::wallets::routes::create,
        crate::wallets::routes::fund_intent,
        crate::wallets::routes::balance,
        crate::wallets::routes::swap,
        crate::wallets::routes::encrypt,
        crate::wallets::routes::shield,
        crate::wallets::routes::withdraw,
        crate::wallets::routes::reserves,
        crate::wallets::routes::audit,
        crate::wallets::routes::deliveries,
        crate::wallets::routes::certificate,
        crate::wallets::requests::get,
        crate::wallets::witness::appends,
        crate::wallets::witness::answers,
        crate::discovery::models::handle,
        crate::discovery::agent_card,
        crate::discovery::capabilities::handle,
        crate::discovery::icon,
        crate::x402::manifest::handle,
        agents_document,
        whole_document,
        health,
        ready,
        crate::metrics::route::handle,
    ),
    tags(
        (name = "private", description = "Private inference: sealed to the attested enclave, receipts signed by it"),
        (name = "agent", description = "The agent: tool loop, BRAID, encrypted mode"),
        (name = "agents", description = "The Agent Privacy API: quotes, anonymity sets, one-shot private swaps"),
        (name = "enclave", description = "The enclave's key, attestation and provisioning"),
        (name = "receipts", description = "Receipt lookups (public, CORS-open)"),
        (name = "log", description = "The transparency log of receipts: tree heads, proofs, entries, anchors (public, CORS-open)"),
        (name = "billing", description = "Prepaid balances and usage"),
        (name = "accounts", description = "Wallet sign-in and API keys"),
        (name = "discovery", description = "What the service offers: card, capabilities, OpenAPI, x402 manifest, models"),
        (name = "meta", description = "Liveness, readiness and metrics"),
    )
)]
struct Api;

/// The whole public API, its server the relay's public URL.
pub fn whole(base: &str) -> Document {
    let mut doc = Api::openapi();
    doc.info = InfoBuilder::new()
        .title("svc: private AI inference and private swaps")
        .version(super::card::CARD_VERSION)
        .description(Some(
            "The relay's public API. Private routes carry only ciphertext sealed to the attested enclave; every \
             private answer carries a receipt the enclave signed. Errors are `{error, message}` with the codes of \
             docs/decisions.md and docs/swaps.md.",
        ))
        .license(Some(LicenseBuilder::new().name("Apache-2.0").identifier(Some("Apache-2.0")).build()))
        .contact(Some(ContactBuilder::new().name(Some("svc")).url(Some(base)).build()))
        .build();
    doc.servers = Some(vec![ServerBuilder::new().url(base).build()]);
    rate_limiter_answers(&mut doc);
    describe_responses(&mut doc);
    let components = doc.components.get_or_insert_with(Default::default);
    components.add_security_scheme(
        "ApiKey",
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .bearer_format("sk_svc_*")
                .description(Some("An API key bound to a prepaid balance"))
                .build(),
        ),
    );
    components.add_security_scheme(
        "X402",
        SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
            "X-PAYMENT",
            "An x402 payment payload (v1; v2 sends PAYMENT-SIGNATURE); see /.well-known/x402",
        ))),
    );
    doc
}

/// What the rate limiter in front of every route but the probes answers
/// (`billing/rate_limit.rs`): 429 `rate_limited` with `Retry-After`, and 503
/// `database_unavailable` when its shared counter cannot be written. Added to each operation
/// here rather than in every annotation, so no route can forget them.
fn rate_limiter_answers(doc: &mut Document) {
    use utoipa::openapi::header::HeaderBuilder;
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder, Type, schema::ObjectBuilder};
    let error = || ContentBuilder::new().schema(Some(Ref::from_schema_name("ErrorBody"))).build();
    let limited = ResponseBuilder::new()
        .description("Rate limited (`rate_limited`): wait the seconds `Retry-After` names")
        .header(
            "Retry-After",
            HeaderBuilder::new().schema(Some(ObjectBuilder::new().schema_type(Type::Integer))).build(),
        )
        .content("application/json", error())
        .build();
    let unavailable = ResponseBuilder::new()
        .description("The rate limit's counter could not be written (`database_unavailable`)")
        .content("application/json", error())
        .build();
    for (path, item) in doc.paths.paths.iter_mut() {
        if matches!(path.as_str(), "/health" | "/ready" | "/metrics") {
            continue;
        }
        for operation in [&mut item.get, &mut item.post, &mut item.delete].into_iter().flatten() {
            let responses = &mut operation.responses.responses;
            responses.entry("429".into()).or_insert_with(|| limited.clone().into());
            responses.entry("503".into()).or_insert_with(|| unavailable.clone().into());
        }
    }
}

/// Every response needs a description (OpenAPI 3.1): the ones the annotations leave out get
/// the status's reason phrase.
fn describe_responses(doc: &mut Document) {
    for (path, item) in doc.paths.paths.iter_mut() {
        let methods = [("get", &mut item.get), ("post", &mut item.post), ("delete", &mut item.delete)];
        for (method, operation) in methods.into_iter().filter_map(|(m, o)| o.as_mut().map(|o| (m, o))) {
            // Handler names repeat (`handle`); the method and path are unique.
            operation.operation_id = Some(operation_id(method, path));
            for (status, response) in operation.responses.responses.iter_mut() {
                if let utoipa::openapi::RefOr::T(r) = response
                    && r.description.is_empty()
                {
                    r.description = match status.as_str() {
                        "default" => "An error: `{error, message}`".to_string(),
                        code => code
                            .parse::<u16>()
                            .ok()
                            .and_then(|c| axum::http::StatusCode::from_u16(c).ok())
                            .and_then(|c| c.canonical_reason())
                            .unwrap_or("Response")
                            .to_string(),
                    };
                }
            }
        }
    }
}

/// `post /agents/v1/swaps/oneshot/{id}/execute` → `postAgentsV1SwapsOneshotIdExecute`.
fn operation_id(method: &str, path: &str) -> String {
    let mut id = method.to_string();
    for word in path.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            id.push(first.to_ascii_uppercase());
            id.extend(chars);
        }
    }
    id
}

/// Only `/agents/v1` (and the discovery documents it names).
pub fn agents(base: &str) -> Document {
    let mut doc = whole(base);
    doc.info.title = "svc Agent Privacy API (/agents/v1)".into();
    doc.paths.paths.retain(|path, _| path.starts_with("/agents/v1/"));
    doc
}

/// `GET /openapi.json`.
#[utoipa::path(get, path = "/openapi.json", tag = "discovery", summary = "This document: the whole public API (OpenAPI 3.1)",
    responses((status = 200, description = "An OpenAPI 3.1 document", body = Object)))]
pub async fn whole_document(State(app): State<App>, headers: HeaderMap) -> Response {
    serve(&app, &headers, &app.openapi.whole)
}

/// `GET /agents/v1/openapi.json`.
#[utoipa::path(get, path = "/agents/v1/openapi.json", tag = "discovery", summary = "The OpenAPI 3.1 document of /agents/v1",
    responses((status = 200, description = "An OpenAPI 3.1 document", body = Object)))]
pub async fn agents_document(State(app): State<App>, headers: HeaderMap) -> Response {
    serve(&app, &headers, &app.openapi.agents)
}

fn serve(app: &App, headers: &HeaderMap, doc: &impl Serialize) -> Response {
    super::cached_json(app, headers, doc)
}

/// Liveness: the process answers (`/ready` says whether it can serve).
#[derive(Serialize, utoipa::ToSchema)]
pub struct Health {
    pub status: &'static str,
}

/// Readiness: the database answers and at least one enclave has a key.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Readiness {
    pub ready: bool,
    pub database: bool,
    /// Enclaves whose key the relay holds now, of those configured.
    pub enclaves_up: usize,
    pub enclaves: usize,
}

#[utoipa::path(get, path = "/ready", tag = "meta", summary = "Readiness: the database answers and an enclave is up",
    responses((status = 200, body = Readiness), (status = 503, description = "Not ready", body = Readiness)))]
pub async fn ready(State(app): State<App>) -> Response {
    let database = sqlx::query("SELECT 1").fetch_optional(app.store.pool()).await.is_ok();
    let members = app.enclaves.members();
    let enclaves_up = members.iter().filter(|m| m.key().is_some()).count();
    let ready = database && enclaves_up > 0;
    let status = if ready { axum::http::StatusCode::OK } else { axum::http::StatusCode::SERVICE_UNAVAILABLE };
    (status, axum::Json(Readiness { ready, database, enclaves_up, enclaves: members.len() })).into_response()
}

#[utoipa::path(get, path = "/health", tag = "meta", summary = "Liveness", responses((status = 200, body = Health)))]
pub async fn health() -> axum::Json<Health> {
    axum::Json(Health { status: "ok" })
}

/// Both documents, built at start.
pub struct Documents {
    pub whole: Document,
    pub agents: Document,
}

impl Documents {
    pub fn new(base: &str) -> Self {
        Documents { whole: whole(base), agents: agents(base) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_of_the_table_is_documented_and_the_agents_document_is_a_subset() {
        let doc = serde_json::to_value(whole("https://relay.example")).unwrap();
        assert_eq!(doc["openapi"], "3.1.0");
        assert_eq!(doc["servers"][0]["url"], "https://relay.example");
        let paths = doc["paths"].as_object().unwrap();
        for p in [
            "/tee/process",
            "/agent",
            "/api/v1/x402/chat/completions",
            "/agents/v1/quote",
            "/agents/v1/swaps/oneshot/{id}/execute",
            "/attestation/by-tx/{signature}",
            "/attestation/{address}/ledger",
            "/log/v1/sth",
            "/log/v1/proof/inclusion",
            "/log/v1/proof/consistency",
            "/log/v1/entries",
            "/log/v1/anchors",
            "/health",
            "/ready",
            "/metrics",
        ] {
            assert!(paths.contains_key(p), "{p} missing");
        }
        assert!(doc["components"]["securitySchemes"]["ApiKey"]["bearerFormat"] == "sk_svc_*");
        let agents = serde_json::to_value(agents("https://relay.example")).unwrap();
        let agent_paths: Vec<&String> = agents["paths"].as_object().unwrap().keys().collect();
        assert!(agent_paths.iter().all(|p| p.starts_with("/agents/v1/")), "{agent_paths:?}");
        assert!(agent_paths.len() >= 8, "{agent_paths:?}");
    }
}
