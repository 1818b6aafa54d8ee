//! `svc agent`: ask the agent, in plaintext through the relay's tool loop, or sealed to the
//! verified enclave (`--encrypted`), which runs the loop itself.

use crate::Context;
use crate::exit::{Exit, Failure};
use crate::output::print_json;

#[derive(clap::Args)]
pub struct Args {
    prompt: String,
    #[arg(long)]
    encrypted: bool,
    #[arg(long)]
    model: Option<String>,
    /// One plain completion, no tools (plaintext only).
    #[arg(long)]
    no_tools: bool,
    /// Keep history under this chat id (plaintext only).
    #[arg(long)]
    chat_id: Option<String>,
    /// Guided reasoning (plaintext only).
    #[arg(long)]
    braid: bool,
    /// With --braid: run this plan instead of detecting one.
    #[arg(long)]
    plan: Option<String>,
}

pub async fn run(ctx: Context, args: Args) -> Result<Exit, Failure> {
    match args.encrypted {
        true => encrypted(ctx, args).await,
        false => plaintext(ctx, args).await,
    }
}

async fn encrypted(ctx: Context, args: Args) -> Result<Exit, Failure> {
    if args.no_tools || args.chat_id.is_some() || args.braid || args.plan.is_some() {
        return Err(Failure::bad_input("--no-tools, --chat-id, --braid and --plan need the plaintext path"));
    }
    let client = ctx.client.with_attestation(ctx.trust.options()?);
    let out = client.agent_private(&args.prompt, args.model.as_deref()).await?;
    if ctx.json {
        print_json(&serde_json::json!({
            "reply": out.reply, "toolCalls": out.tool_calls, "usage": out.usage, "iterations": out.iterations,
            "model": out.model, "onchainAttestation": out.onchain,
            "freeMessagesRemaining": out.free_messages_remaining,
        }));
    } else {
        println!("{}", out.reply);
        eprintln!();
        for call in &out.tool_calls {
            eprintln!("tool:     {} {}", call.tool, call.args);
        }
        eprintln!("model:    {} ({} model calls, {} tokens)", out.model, out.iterations, out.usage.total_tokens);
        eprintln!("receipt:  {} (verified; the relay saw only ciphertext)", out.onchain.address);
    }
    Ok(Exit::Ok)
}

async fn plaintext(ctx: Context, args: Args) -> Result<Exit, Failure> {
    let options = client::agent::AgentOptions {
        model: args.model,
        use_tools: args.no_tools.then_some(false),
        chat_id: args.chat_id,
        braid: args.braid || args.plan.is_some(),
        include_trace: true,
        force_grd_id: args.plan,
    };
    let body = ctx.client.agent(&args.prompt, &options).await?;
    if ctx.json || body.get("success") != Some(&serde_json::Value::Bool(true)) {
        print_json(&body);
        return Ok(Exit::Ok);
    }
    println!("{}", body["reply"].as_str().unwrap_or_default());
    eprintln!();
    for call in body["toolCalls"].as_array().into_iter().flatten() {
        eprintln!("tool:     {} {}", call["tool"].as_str().unwrap_or("?"), call["args"]);
    }
    if let Some(trace) = body.get("braidTrace") {
        let text = |v: &serde_json::Value| v.as_str().unwrap_or("?").to_string();
        eprintln!("plan:     {} (intent {})", text(&trace["grdId"]), text(&trace["intent"]));
    }
    eprintln!("model:    {} ({} iterations)", body["model"].as_str().unwrap_or("?"), body["iterations"]);
    eprintln!("billing:  {}; free messages left today: {}", body["billing"], body["freeMessagesRemaining"]);
    eprintln!("note:     plaintext path: the relay saw this prompt (use --encrypted to avoid that)");
    Ok(Exit::Ok)
}
