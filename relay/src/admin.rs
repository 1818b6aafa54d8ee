//! `relay [--config FILE] admin …`: the operator's commands, run against the configured
//! database (and enclaves) without serving.

use std::time::Duration;

use crate::config::RelayConfig;
use crate::enclaves::{EnclavePool, objects};
use crate::store::Store;

pub const USAGE: &str = "usage: relay [--config FILE] admin <command>
  credit --key-id ID --currency usdc|svc --amount BASE_UNITS [--reference TEXT]
      add prepaid balance to a key (docs/billing.md)
  objects new --kind signing-key     have an enclave make and seal a new object; prints it
  objects open --id ID                have an enclave open a stored object (re-sealing it
                                      under the current KEK when needed); prints what it says
  objects rewrap                      re-seal every stored object under the current KEK";

/// Flags `--name value` into pairs; anything else is a usage error.
fn flags(args: &[String]) -> Result<Vec<(&str, &str)>, String> {
    args.chunks(2)
        .map(|pair| match pair {
            [flag, value] if flag.starts_with("--") => Ok((flag.as_str(), value.as_str())),
            _ => Err(USAGE.to_string()),
        })
        .collect()
}

fn flag<'a>(flags: &[(&str, &'a str)], name: &str) -> Option<&'a str> {
    flags.iter().find(|(f, _)| *f == name).map(|(_, v)| *v)
}

async fn store(config: &RelayConfig) -> Result<Store, String> {
    std::fs::create_dir_all(&config.data_dir).map_err(|e| format!("data dir: {e}"))?;
    Store::open(&config.database_url()).await.map_err(|e| e.to_string())
}

pub async fn run(config: &RelayConfig, args: &[String]) -> Result<(), String> {
    match args {
        [cmd, rest @ ..] if cmd == "credit" => credit(config, &flags(rest)?).await,
        [cmd, sub, rest @ ..] if cmd == "objects" => objects(config, sub, &flags(rest)?).await,
        _ => Err(USAGE.into()),
    }
}

async fn credit(config: &RelayConfig, flags: &[(&str, &str)]) -> Result<(), String> {
    let (Some(key_id), Some(currency), Some(amount)) =
        (flag(flags, "--key-id"), flag(flags, "--currency"), flag(flags, "--amount"))
    else {
        return Err(USAGE.into());
    };
    let amount: i64 = amount.parse().map_err(|_| "--amount must be an integer number of base units")?;
    let reference = flag(flags, "--reference").unwrap_or("operator credit");
    let store = store(config).await?;
    // A mistyped id would credit an account nobody holds: only known keys can be credited.
    let configured = config.api_keys.iter().any(|k| crate::accounts::key_id(k) == key_id);
    if !configured && !crate::accounts::sign_in::exists(&store, key_id).await.map_err(|e| e.to_string())? {
        return Err(format!("unknown key id `{key_id}`: not a configured key and not issued by sign-in"));
    }
    let after =
        crate::billing::balances::credit(&store, key_id, currency, amount, "admin", reference, crate::unix_now())
            .await
            .map_err(|e| e.to_string())?;
    println!("{key_id}: {currency} balance is now {after} base units");
    Ok(())
}

async fn objects(config: &RelayConfig, sub: &str, flags: &[(&str, &str)]) -> Result<(), String> {
    let store = store(config).await?;
    let enclaves = EnclavePool::new(
        &config.enclave_urls(),
        Duration::from_secs(config.enclave_timeout_secs),
        None,
        config.enclave_max_in_flight,
    );
    enclaves.refresh().await;
    let json = match (sub, flag(flags, "--kind"), flag(flags, "--id")) {
        ("new", Some(kind), None) => {
            serde_json::to_string(&objects::create(&store, &enclaves, kind).await.map_err(show)?)
        }
        ("open", None, Some(id)) => serde_json::to_string(&objects::open(&store, &enclaves, id).await.map_err(show)?),
        ("rewrap", None, None) => {
            let (total, rewrapped) = objects::rewrap_all(&store, &enclaves).await.map_err(show)?;
            serde_json::to_string(&serde_json::json!({"objects": total, "rewrapped": rewrapped}))
        }
        _ => return Err(USAGE.into()),
    };
    println!("{}", json.map_err(|e| e.to_string())?);
    Ok(())
}

fn show(e: crate::http::error::RelayError) -> String {
    let (status, code) = e.status_and_code();
    format!("{code} ({status}): {e}")
}
