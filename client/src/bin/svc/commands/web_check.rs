//! `svc web-check`: compare the web app a deployment serves with the published bundle.

use std::path::PathBuf;

use crate::Context;
use crate::exit::{Exit, Failure};
use crate::output::print_json;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    published: Option<PathBuf>,
}

pub async fn run(ctx: Context, args: Args) -> Result<Exit, Failure> {
    let expected = match &args.published {
        None => client::web_check::Published::embedded(),
        Some(path) => std::fs::read(path).ok().and_then(|b| serde_json::from_slice(&b).ok()).ok_or_else(|| {
            Failure::bad_input(format!("{} is not a published web bundle (measurements/web.json)", path.display()))
        })?,
    };
    let log_key = ctx
        .log_key
        .as_deref()
        .map(|k| shared::tlog::hash::parse_hex(k).ok_or_else(|| Failure::bad_input("--log-key must be 64 hex")))
        .transpose()?;
    let report = client::web_check::check(&reqwest::Client::new(), &ctx.relay, &expected, log_key.as_ref()).await;
    match ctx.json {
        true => print_json(&report),
        false => print!("{}", report.render()),
    }
    Ok(if report.matches { Exit::Ok } else { Exit::Rejected })
}
