//! The key holder's commands: `svc provision` (one enclave), `svc keyholder` (every enclave
//! the relay lists, as a daemon) and `svc provisioner-key` (a new signing key). Secrets go
//! only to an enclave that passes verification.

use std::path::{Path, PathBuf};

use client::provision::Secrets;
use client::witness::Witness;
use ed25519_dalek::SigningKey;
use shared::address::Address;

use crate::Context;
use crate::exit::{Exit, Failure};
use crate::output::print_json;
use crate::render;

/// The files the key holder releases from.
#[derive(clap::Args)]
pub struct SecretsArgs {
    /// The secrets file: age-encrypted JSON {version, kek, previousKeks, credentials}.
    #[arg(long)]
    secrets: PathBuf,
    /// The provisioner key file (64 hex characters, mode 0600).
    #[arg(long)]
    provisioner_key: PathBuf,
    /// The age identity that opens the secrets file (`age-keygen -o`); else the passphrase in
    /// SVC_SECRETS_PASSPHRASE.
    #[arg(long, env = "SVC_SECRETS_IDENTITY")]
    identity: Option<PathBuf>,
    /// The freshness witness's heads file (DESIGN §13; docs/custody.md): per mint the pool book
    /// it acknowledged last. Keep it as safe as the secrets: lost, the pool's books start over.
    /// Default: the secrets file's path with `.witness.json` added.
    #[arg(long)]
    witness: Option<PathBuf>,
}

impl SecretsArgs {
    fn load(&self) -> Result<(Secrets, SigningKey, Witness), Failure> {
        let passphrase = std::env::var("SVC_SECRETS_PASSPHRASE").ok().map(zeroize::Zeroizing::new);
        let secrets = client::provision::read_secrets(&self.secrets, self.identity.as_deref(), passphrase)?;
        let key = client::provision::read_provisioner_key(&self.provisioner_key)?;
        let path = self.witness.clone().unwrap_or_else(|| {
            let mut name = self.secrets.clone().into_os_string();
            name.push(".witness.json");
            name.into()
        });
        let witness = Witness::open(&path, key.clone())?;
        Ok((secrets, key, witness))
    }
}

#[derive(clap::Args)]
pub struct ProvisionArgs {
    #[command(flatten)]
    keys: SecretsArgs,
    /// The enclave to provision, by key id (hex sha256 of its X25519 key); default any.
    #[arg(long)]
    key_id: Option<String>,
}

#[derive(clap::Args)]
pub struct KeyholderArgs {
    #[command(flatten)]
    keys: SecretsArgs,
    /// Seconds between looks at the relay's enclaves.
    #[arg(long, default_value_t = 2)]
    interval: u64,
}

/// `svc provision`: exits `Rejected` (or the verdict's own code) when nothing was sent.
pub async fn provision(ctx: Context, args: ProvisionArgs) -> Result<Exit, Failure> {
    let options = ctx.trust.key_holder_options()?;
    let (secrets, provisioner, witness) = args.keys.load()?;
    let key_id = args
        .key_id
        .map(|k| shared::receipt::decode_hex32(&k).ok_or(Failure::bad_input("--key-id must be 64 lowercase hex")))
        .transpose()?;
    let out = ctx.client.with_attestation(options).provision(&secrets, &provisioner, key_id, Some(&witness)).await?;
    if ctx.json {
        print_json(&out);
    } else {
        eprint!("{}", render::report(&out.report));
        match &out.state {
            Some(state) => println!(
                "provisioned enclave {}: bundle v{} by provisioner {}",
                out.key_id,
                state.bundle_version.unwrap_or_default(),
                state.provisioner_key.as_deref().unwrap_or("?")
            ),
            None => eprintln!("not provisioned: the enclave failed verification; nothing was sent"),
        }
    }
    Ok(match (&out.state, Exit::from(out.report.verdict)) {
        (Some(_), _) => Exit::Ok,
        (None, Exit::Ok) => Exit::Rejected,
        (None, refused) => refused,
    })
}

/// `svc keyholder`: runs until interrupted.
pub async fn keyholder(ctx: Context, args: KeyholderArgs) -> Result<Exit, Failure> {
    log_to_stderr(ctx.json);
    let options = ctx.trust.key_holder_options()?;
    let (secrets, provisioner, witness) = args.keys.load()?;
    let client = ctx.client.with_attestation(options);
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let interval = std::time::Duration::from_secs(args.interval.max(1));
    client::provision::keyholder(&client, &secrets, &provisioner, &witness, interval, stop).await;
    Ok(Exit::Ok)
}

/// `svc provisioner-key FILE`.
pub fn new_key(file: &Path, json: bool) -> Result<Exit, Failure> {
    let key = client::provision::new_provisioner_key(file)?;
    let public = Address(key.verifying_key().to_bytes()).to_string();
    match json {
        true => print_json(&serde_json::json!({"publicKey": public, "file": file})),
        false => println!("{public}"),
    }
    eprintln!("wrote {} (mode 0600); put the public key above in the enclave's `provisioners`", file.display());
    Ok(Exit::Ok)
}

/// Log lines of the key holder daemon go to stderr: text, or one JSON object per line
/// (`--json`; the relay's shape: timestamp, level, target and the event's fields, flat).
fn log_to_stderr(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match json {
        true => builder.json().flatten_event(true).with_current_span(false).with_span_list(false).init(),
        false => builder.with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())).init(),
    }
}
