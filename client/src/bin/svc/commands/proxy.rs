//! `svc proxy`: the OpenAI API on a loopback address, sealing every request to the verified
//! enclave, and the web app from this svc's own copy of the published bundle.

use std::net::SocketAddr;
use std::time::Duration;

use crate::Context;
use crate::exit::{Exit, Failure};

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, default_value = "127.0.0.1:8000")]
    listen: String,
    /// A secret every caller must send as `Authorization: Bearer <token>`.
    #[arg(long, env = "SVC_PROXY_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

pub async fn run(ctx: Context, args: Args) -> Result<Exit, Failure> {
    let Args { listen, token } = args;
    // An address, not a name: a name could resolve anywhere.
    let Some(address) = listen.parse::<SocketAddr>().ok().filter(|a| a.ip().is_loopback()) else {
        return Err(Failure::bad_input(
            "--listen must be a loopback address and port (e.g. 127.0.0.1:8000): the proxy answers in plaintext",
        ));
    };
    if token.as_deref().is_some_and(str::is_empty) {
        return Err(Failure::bad_input("--token must not be empty"));
    }
    let listener = tokio::net::TcpListener::bind(&listen)
        .await
        .map_err(|e| Failure::failed(format!("cannot listen on {listen}: {e}")))?;
    let client = ctx.client.with_attestation(ctx.trust.options()?);
    eprintln!("svc proxy: verifying the enclave, then serving http://{listen}/v1 (OpenAI-compatible)");
    if ctx.json {
        // One line, so a supervisor can read it before the proxy's first request.
        let line = serde_json::json!({"listen": listen, "baseUrl": format!("http://{listen}/v1")});
        println!("{line}");
    }
    let access = client::proxy::Access::new(address, token.as_deref());
    let page = client::proxy_page::PageRelay {
        base: ctx.relay.clone(),
        // A relay that stalls must not hold the page's calls forever (the enclave's own calls
        // are bounded by the relay at 330 s).
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(360))
            .build()
            .map_err(|e| Failure::failed(format!("http client: {e}")))?,
        dev_trust: ctx.trust.page_dev_trust()?,
    };
    client::proxy::serve(client, listener, access, page).await.map_err(Failure::verifying)?;
    Ok(Exit::Ok)
}
