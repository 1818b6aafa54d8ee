//! Writes the seed inputs of every fuzz target: real envelopes sealed to the fixture key, real
//! receipts and replies, dev-PKI quotes and collateral, the DCAP sample quotes and collateral of
//! `../shared/test-vectors/dcap-qvl-samples` (read from there, never copied into this
//! repository), payment transactions as the reference x402 client builds them, and request
//! bodies, pages and model answers shaped like the real ones.
//!
//! `cargo run --manifest-path tests/fuzz/Cargo.toml --example seeds -- <dir>` writes
//! `<dir>/<target>/seed-<name>`; `tests/fuzz/seeds.sh` runs it and merges the seeds into the corpus.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use shared::address::Address;
use shared::envelope::{self, Envelope};
use shared::keys::{PromptHash, TeeKey};
use shared::receipt::{Receipt, ReceiptBody, ReceiptContext};
use shared::solana::{Instruction, Message, MessageV0, Transaction, memo, system};
use shared::wire::{AgentReplyPlaintext, ChatCompletion, ReplyPlaintext, ToolCall, Usage};
use standins::facilitator::ExactPayment;
use svc_fuzz::{SeededRng, attest, enclave_keys, exchange, program_id, receipt_key, x402};

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/test-vectors/dcap-qvl-samples");

struct Out {
    root: PathBuf,
    count: usize,
}

impl Out {
    fn put(&mut self, target: &str, name: &str, bytes: impl AsRef<[u8]>) {
        let dir = self.root.join(target);
        std::fs::create_dir_all(&dir).expect("create the seed directory");
        std::fs::write(dir.join(format!("seed-{name}")), bytes).expect("write a seed");
        self.count += 1;
    }
}

fn sample(name: &str) -> Vec<u8> {
    let path = Path::new(SAMPLES).join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if name.ends_with(".hex") {
        let text = String::from_utf8(bytes).expect("hex text");
        hex::decode(text.trim()).expect("hex")
    } else {
        bytes
    }
}

/// Seals `plaintext` to the fixture enclave key, deterministically.
fn seal(plaintext: &[u8], seed: u64) -> Envelope {
    let (_, pk) = enclave_keys();
    envelope::seal(pk, plaintext, &mut SeededRng::new(seed)).expect("seal").0
}

/// The receipt the enclave issues for `envelope`.
fn receipt_for(envelope: &Envelope, model: &str, quote_hash: Option<[u8; 32]>) -> Receipt {
    let body = ReceiptBody {
        prompt_hash: envelope.ciphertext_hash(),
        tee_pubkey: TeeKey(enclave_keys().1),
        nonce: envelope.nonce,
        client_pubkey: envelope.client_key(),
        model: model.into(),
        provider: "svc-gpu".into(),
    };
    let ctx = ReceiptContext { program_id: program_id(), timestamp: 1_800_000_000, tdx_quote_hash: quote_hash };
    Receipt::issue(&body, &receipt_key(), &ctx).expect("issue")
}

const PROMPTS: [&str; 8] = [
    r#"{"prompt":"What is the capital of France?","timestamp":1800000000}"#,
    r#"{"prompt":"hi"}"#,
    r#"{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"2+2?"},{"role":"assistant","content":"4"},{"role":"user","content":"and 3+3?"}],"timestamp":1800000000}"#,
    r#"{"prompt":"Summarise this","model":"gpt-oss:20b","maxTokens":256,"temperature":0.7,"timestamp":1800000000}"#,
    r#"{"prompt":"x","temperature":2.0,"maxTokens":4294967295,"timestamp":18446744073709551615}"#,
    r#"{"messages":[]}"#,
    r#"{"prompt":"a","messages":[{"role":"user","content":"b"}]}"#,
    r#"{"prompt":"\u00e9\ud83d\ude00 unicode","model":"qwen3:8b","temperature":-0.5}"#,
];

fn envelopes(out: &mut Out) {
    for (i, p) in PROMPTS.iter().enumerate() {
        out.put("prompt", &format!("{i}"), p);
        let env = seal(p.as_bytes(), 100 + i as u64);
        let (sk, pk) = enclave_keys();
        assert!(env.open(sk, pk).is_ok(), "a seed envelope opens");
        out.put("envelope", &format!("prompt-{i}"), env.to_json_string());
    }
    let env = seal(PROMPTS[0].as_bytes(), 7);
    let mut no_key = env.clone();
    no_key.key_id = None;
    out.put("envelope", "no-key-id", no_key.to_json_string());
    let mut v: Value = serde_json::from_str(&env.to_json_string()).expect("json");
    v["keyId"] = Value::Null;
    out.put("envelope", "null-key-id", v.to_string());
    v["version"] = json!(2);
    out.put("envelope", "version-2", v.to_string());
    let (_, pk) = enclave_keys();
    let bundle = envelope::seal_for(envelope::Purpose::Provision, pk, b"{\"bundle\":1}", &mut SeededRng::new(8))
        .expect("seal")
        .0;
    out.put("envelope", "provision", bundle.to_json_string());
    out.put(
        "envelope",
        "pretty",
        serde_json::to_string_pretty(&serde_json::from_str::<Value>(&env.to_json_string()).expect("json"))
            .expect("json"),
    );
}

fn replies(out: &mut Out) {
    let ex = exchange();
    let receipt = receipt_for(&ex.envelope, "gpt-oss:20b", Some([5; 32]));
    let usage = Usage { prompt_tokens: 12, completion_tokens: 8, total_tokens: 20 };
    let chat = ReplyPlaintext {
        reply: "Paris.".into(),
        model: "gpt-oss:20b".into(),
        usage,
        receipt: receipt.clone(),
        served_by: None,
    };
    let agent = AgentReplyPlaintext {
        reply: "SOL is $150.".into(),
        tool_calls: vec![ToolCall {
            tool: "token_price".into(),
            args: json!({"mints": "SOL"}),
            result: json!({"prices": [{"mint": "So11111111111111111111111111111111111111112", "usdPrice": 150.1}]}),
        }],
        usage,
        iterations: 2,
        model: "gpt-oss:20b".into(),
        receipt: receipt.clone(),
        served_by: None,
    };
    let completion = ChatCompletion::new("Paris.".into(), "gpt-oss:20b", usage, receipt.clone(), 1_800_000_000);
    let plaintexts = [
        ("chat", serde_json::to_vec(&chat).expect("json")),
        ("agent", serde_json::to_vec(&agent).expect("json")),
        ("completion", serde_json::to_vec(&completion).expect("json")),
    ];
    for (i, (name, plaintext)) in plaintexts.iter().enumerate() {
        let sealed = shared::reply::seal(&ex.enclave, &ex.envelope.enc, plaintext, &mut SeededRng::new(200 + i as u64));
        out.put(
            "reply",
            &format!("sealed-{name}"),
            [b"0".as_slice(), &serde_json::to_vec(&sealed).expect("json")].concat(),
        );
        out.put("reply", &format!("plain-{name}"), [b"1".as_slice(), plaintext].concat());
    }

    assert!(receipt.verify(&program_id()).is_ok());
    out.put("receipt", "valid", [b"0".as_slice(), &serde_json::to_vec(&receipt).expect("json")].concat());
    let bare = receipt_for(&seal(PROMPTS[1].as_bytes(), 9), "qwen3.8:27b", None);
    out.put("receipt", "no-quote", [b"0".as_slice(), &serde_json::to_vec(&bare).expect("json")].concat());
    let mut fields = Vec::new();
    fields.extend_from_slice(&ex.envelope.ciphertext_hash().0);
    fields.extend_from_slice(&enclave_keys().1);
    fields.extend_from_slice(&ex.envelope.nonce);
    fields.extend_from_slice(&ex.envelope.enc);
    out.put("receipt", "issue", [b"1".as_slice(), &fields, b"gpt-oss:20b\0svc-gpu"].concat());
}

fn quotes(out: &mut Out) {
    let f = attest::fixture();
    // The dev quotes are accepted as they are: mutations start from a quote that passes.
    for quote in [&f.quote_v4, &f.quote_v5, &f.quote_v5_td10] {
        let evidence = shared::attest::Evidence {
            quote,
            collateral: &f.collateral,
            binding: Some(attest::binding()),
            nonce: Some(attest::proof()),
        };
        let document = shared::attest::verify(&evidence, &f.policy, attest::NOW);
        assert!(document.accepted(), "{document:#?}");
    }
    out.put("quote", "dev-v4", &f.quote_v4);
    out.put("quote", "dev-v5", &f.quote_v5);
    out.put("quote", "dev-v5-td10", &f.quote_v5_td10);
    for name in ["tdx_quote", "tdx_quote_outdated", "tdx_quote_td15ex", "sgx_quote", "quote-from-tappd.hex"] {
        out.put("quote", name, sample(name));
    }

    out.put("collateral", "dev", &f.collateral_json);
    for (i, c) in attest::other_collaterals().iter().enumerate() {
        out.put("collateral", &format!("dev-{i}"), c);
    }
    out.put("collateral", "tdx-sample", sample("tdx_quote_collateral.json"));
    // PCS responses as a PCCS answers them, assembled from the dev collateral.
    let c: Value = serde_json::from_str(&f.collateral_json).expect("json");
    let text = |k: &str| c[k].as_str().expect("a string field").to_string();
    let bytes = |k: &str| hex::decode(text(k)).expect("hex");
    let tcb_body = format!(r#"{{"tcbInfo":{},"signature":"{}"}}"#, text("tcb_info"), text("tcb_info_signature"));
    let qe_body =
        format!(r#"{{"enclaveIdentity":{},"signature":"{}"}}"#, text("qe_identity"), text("qe_identity_signature"));
    let parts: Vec<Vec<u8>> = vec![
        text("pck_crl_issuer_chain").into_bytes(),
        bytes("pck_crl"),
        bytes("root_ca_crl"),
        text("tcb_info_issuer_chain").into_bytes(),
        tcb_body.into_bytes(),
        text("qe_identity_issuer_chain").into_bytes(),
        qe_body.into_bytes(),
    ];
    out.put("collateral", "pcs", [b"P".as_slice(), &parts.join(&0u8)].concat());
}

fn payments(out: &mut Out) {
    let owner = x402::owner_key();
    let pay_to = Address::parse(x402::PAY_TO).expect("address").0;
    let payment = ExactPayment::new(x402::fee_payer(), owner.clone(), pay_to, x402::AMOUNT);
    let tx = payment.build();
    let tx_b64 = shared::b64::encode(&tx);
    let mut token_2022 = payment.clone();
    token_2022.token_program = Address::parse(shared::x402::TOKEN_2022_PROGRAM).expect("address").0;
    let mut no_memo = payment.clone();
    let mut instructions = no_memo.instructions();
    instructions.pop();
    no_memo.memo.clear();
    let variants =
        [("usdc", tx.clone()), ("token-2022", token_2022.build()), ("no-memo", no_memo.build_with(&instructions))];

    for (name, bytes) in &variants {
        out.put("solana_tx", &format!("payment-{name}"), bytes);
        let parsed = Transaction::parse(bytes).expect("a payment parses");
        out.put("x402_verify", &format!("message-{name}"), [b"M".as_slice(), &parsed.message.serialize()].concat());
    }
    for version in [1, 2] {
        let body = x402::verify_body(version, &tx_b64);
        assert!(shared::x402::check(&body, &x402::fee_payer()).is_ok(), "the seed payment is accepted");
        out.put("x402_verify", &format!("body-v{version}"), body.to_string());
    }
    let v1 = json!({"x402Version": 1, "scheme": "exact", "network": "solana", "payload": {"transaction": tx_b64}});
    let accepted = x402::verify_body(2, &tx_b64)["paymentRequirements"].clone();
    let v2 = json!({"x402Version": 2, "accepted": accepted, "resource": {"url": "http://127.0.0.1:8787/api/v1/x402/chat/completions"},
                    "payload": {"transaction": tx_b64}});
    out.put("x402_payment", "v1", shared::b64::encode(v1.to_string()));
    out.put("x402_payment", "v2", shared::b64::encode(v2.to_string()));
    out.put("x402_payment", "v1-padded", format!("  {}  ", shared::b64::encode(v1.to_string())));

    // A legacy transfer signed by its payer, a v0 memo with its fee payer's slot empty, and a
    // ledger commit as the relay writes them.
    let from = SeededKey::new(11);
    let transfer = system::transfer(&Address(from.public()), &Address([3; 32]), 1_000_000);
    let mut legacy =
        Transaction::new_unsigned(Message::compile(&Address(from.public()), &[transfer], [4; 32]).expect("compile"));
    legacy.sign(&[&from.0]).expect("sign");
    out.put("solana_tx", "legacy-transfer", legacy.serialize());
    let memo_ix: Instruction = memo::memo(b"0123456789abcdef", &[&Address(from.public())]);
    let v0 = MessageV0::compile(&Address([1; 32]), &[memo_ix], [7; 32]).expect("compile");
    out.put("solana_tx", "v0-memo-unsigned", Transaction::new_unsigned(v0).serialize());
    let (commit, _) = shared::ledger::build(&receipt_key(), &program_id(), &[6; 32], &PromptHash([8; 32]));
    out.put("solana_tx", "ledger-commit", commit);
}

struct SeededKey(ed25519_dalek::SigningKey);

impl SeededKey {
    fn new(seed: u8) -> Self {
        SeededKey(ed25519_dalek::SigningKey::from_bytes(&[seed; 32]))
    }
    fn public(&self) -> [u8; 32] {
        self.0.verifying_key().to_bytes()
    }
}

fn bodies(out: &mut Out) {
    let env = seal(PROMPTS[0].as_bytes(), 300).to_json_string();
    let env_b64 = shared::b64::encode(&env);
    let agent = [
        json!({"prompt": "What is 2+2?"}),
        json!({"prompt": "hi", "model": "svc-gpu:gpt-oss-20b", "useTools": false, "chatId": "c1:a_b-c.d"}),
        json!({"prompt": "Compare SOL vs JUP", "reasoning": "braid", "braidOptions": {"includeTrace": true, "forceGrdId": "comparison"}}),
        json!({"prompt": "x", "reasoning": "serv", "braidOptions": null}),
        json!({"prompt": "", "encryptedPrompt": env, "model": "qwen3:8b"}),
        json!({"encryptedPrompt": env_b64}),
        json!({"prompt": "x", "braidOptions": {"trace": true}}),
    ];
    for (i, b) in agent.iter().enumerate() {
        out.put("agent_body", &format!("{i}"), b.to_string());
    }
    let chat = [
        json!({"model": "gpt-oss:20b", "encryptedPrompt": env}),
        json!({"encryptedPrompt": env, "model": "svc-gpu:gpt-oss-20b", "maxTokens": 128}),
        json!({"encryptedPrompt": env_b64, "model": "qwen3:8b", "maxTokens": 1}),
        json!({"encryptedPrompt": env}),
        json!({"model": "gpt-oss:20b", "messages": [{"role": "developer", "content": "Be brief."},
               {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "there"}]},
               {"role": "assistant", "content": null}, {"role": "user", "content": "and?"}],
               "max_completion_tokens": 64, "temperature": 0.2, "stream": true}),
        json!({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 16}),
    ];
    for (i, b) in chat.iter().enumerate() {
        out.put("chat_body", &format!("{i}"), b.to_string());
    }
}

fn pages(out: &mut Out) {
    let html = r#"<!DOCTYPE html><html><head><title>A &amp; B &mdash; test</title><style>p{color:red}</style>
<script>var x = "<p>not text</p>";</script></head><body><h1>Heading</h1><p>Text with &lt;tags&gt;, &#8364;5, &#x1F600;,
&unknown; &amp &#0; &#xD800; and <a href="/a?b=1&amp;c=2">a link</a> <a href='https://x.example/'>x</a>
<A HREF=unquoted>u</A></p><!-- comment --><ul><li>one</li><li>two</li></ul><br/><svg><text>no</text></svg>
<table><tr><td>1</td><td>2</td></tr></table><noscript>no</noscript><?xml x?><![CDATA[c]]></body></html>"#;
    let pages: [(&str, &[u8]); 7] = [
        ("html", html.as_bytes()),
        ("html-latin1", b"<html><title>caf\xe9</title><body>na\xefve &eacute;</body></html>"),
        ("plain", b"just text &amp; more\n\n  spaced"),
        ("json", br#"{"a": "b &amp; c"}"#),
        ("binary", b"\x89PNG\r\n\x1a\n\0\0"),
        ("unterminated", b"<html><body><p>open <a href=\"x <title>t <script>never closed"),
        ("entities", b"&#65;&#x42;&#67&amp;&lt;&gt;&quot;&apos;&nbsp;&hellip;&euro;&#99999999;&#x110000;&szlig;&"),
    ];
    let types = [
        "text/html; charset=utf-8",
        "text/html; charset=\"ISO-8859-1\"",
        "text/plain",
        "application/json",
        "image/png",
        "",
        "",
    ];
    for (i, ((name, body), ty)) in pages.iter().zip(types).enumerate() {
        let input = if i >= 5 { body.to_vec() } else { [ty.as_bytes(), b"\0", body].concat() };
        out.put("html", name, input);
    }
}

fn model(out: &mut Out) {
    let call = |name: &str, args: &str| {
        json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": name, "arguments": args}}]}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})
        .to_string()
    };
    let done = r#"0{"choices":[{"message":{"role":"assistant","content":"Done."}}],"usage":{"prompt_tokens":150,"completion_tokens":5,"total_tokens":155}}"#;
    let sol = "So11111111111111111111111111111111111111112";
    let usdc = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
    let wallet = "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4";
    let flows: Vec<(&str, Vec<String>)> = vec![
        ("text", vec![done.to_string()]),
        (
            "price",
            vec![
                format!("0{}", call("token_price", r#"{"mints":"SOL, $USDC"}"#)),
                format!(
                    "0{}",
                    json!({sol: {"usdPrice": 150.25, "priceChange24h": -1.5, "decimals": 9, "blockId": 1}, usdc: {"usdPrice": 1.0}})
                ),
                done.to_string(),
            ],
        ),
        (
            "search",
            vec![
                format!("0{}", call("web_search", r#"{"query":"solana news","count":"3"}"#)),
                format!(
                    "0{}",
                    json!({"web": {"results": [{"title": "A <strong>b</strong>", "url": "https://a.example/", "description": "x &amp; y"}, {"title": "no url"}]}})
                ),
                done.to_string(),
            ],
        ),
        (
            "trending",
            vec![
                format!("0{}", call("trending_tokens", r#"{"limit":2}"#)),
                format!(
                    "0{}",
                    json!({"coins": [{"item": {"id": "bonk", "name": "Bonk", "symbol": "BONK", "market_cap_rank": 60, "score": 0,
                "data": {"price": 0.0000231, "price_change_percentage_24h": {"usd": 12.5}, "market_cap": "$1,612,345,678", "total_volume": "$234,567"}}}]})
                ),
                done.to_string(),
            ],
        ),
        (
            "quote",
            vec![
                format!(
                    "0{}",
                    call(
                        "swap_quote",
                        &json!({"inputMint": "SOL", "outputMint": usdc, "amount": "1000000000", "slippageBps": 50})
                            .to_string()
                    )
                ),
                format!(
                    "0{}",
                    json!({"inputMint": sol, "outputMint": usdc, "inAmount": "1000000000", "outAmount": "150250000",
                "otherAmountThreshold": "149500000", "swapMode": "ExactIn", "slippageBps": 50, "priceImpactPct": "0.0012",
                "routePlan": [{"swapInfo": {"label": "Whirlpool"}, "percent": 100}], "contextSlot": 1})
                ),
                done.to_string(),
            ],
        ),
        (
            "balance",
            vec![
                format!("0{}", call("solana_balance", &json!({"address": wallet}).to_string())),
                format!(
                    "0{}",
                    json!({"jsonrpc": "2.0", "id": 1, "result": {"context": {"slot": 5}, "value": 2_500_000_000u64}})
                ),
                format!(
                    "0{}",
                    json!({"jsonrpc": "2.0", "id": 1, "result": {"context": {"slot": 5}, "value": [
                {"account": {"data": {"parsed": {"info": {"mint": usdc, "tokenAmount": {"amount": "1500000", "decimals": 6}}}}}}]}})
                ),
                format!("0{}", json!({"jsonrpc": "2.0", "id": 1, "result": {"context": {"slot": 5}, "value": []}})),
                done.to_string(),
            ],
        ),
        (
            "malformed-args",
            vec![
                format!(
                    "0{}",
                    json!({"choices": [{"message": {"content": "", "tool_calls": [
                {"function": {"name": "token_price", "arguments": "{\"mints\": "}},
                {"function": {"name": "nope", "arguments": {"a": 1}}},
                {"id": "", "function": {"name": " web_search ", "arguments": "[1]"}}]}}]})
                ),
                done.to_string(),
            ],
        ),
        // Token counts that overflow u64 when added (they saturate: agent's regression tests).
        (
            "usage-overflow",
            vec![
                format!(
                    "0{}",
                    json!({"choices": [{"message": {"content": "", "tool_calls": [
                {"function": {"name": "trending_tokens", "arguments": "{}"}}]}}],
                "usage": {"prompt_tokens": u64::MAX, "completion_tokens": 1, "total_tokens": u64::MAX}})
                ),
                "4".into(),
                format!(
                    "0{}",
                    json!({"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": 5, "completion_tokens": u64::MAX}})
                ),
            ],
        ),
        ("warming", vec!["3Loading model".into(), done.to_string()]),
        ("context", vec![r#"1{"error":{"type":"exceed_context_size_error"}}"#.into()]),
        ("unparsed", vec!["2Failed to parse input at pos 12".into(), done.to_string()]),
        (
            "jupiter-error",
            vec![
                format!("0{}", call("token_price", r#"{"mints":["JUP","BONK"]}"#)),
                r#"1{"error":"no route","errorCode":"COULD_NOT_FIND_ANY_ROUTE"}"#.into(),
                done.to_string(),
            ],
        ),
    ];
    for (name, answers) in flows {
        out.put("model", name, answers.join("\0"));
    }
}

/// The real mainnet Jupiter transactions of `../shared/test-vectors/jupiter-mainnet` and the
/// route instructions inside them.
fn jupiter(out: &mut Out) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/test-vectors/jupiter-mainnet");
    let mut names: Vec<_> =
        std::fs::read_dir(dir).expect("the Jupiter vectors").flatten().map(|e| e.file_name()).collect();
    names.sort();
    for name in names.iter().filter_map(|n| n.to_str()?.strip_suffix(".tx.b64").map(String::from)) {
        let text = std::fs::read_to_string(format!("{dir}/{name}.tx.b64")).expect("a vector");
        let bytes = shared::b64::decode(text.trim()).expect("base64");
        let tx = Transaction::parse(&bytes).expect("a transaction");
        for (i, ix) in tx.message.instructions().iter().enumerate() {
            if tx.message.program_id(ix) == Some(&shared::solana::programs::JUPITER_PROGRAM) {
                out.put("jupiter_route", &format!("{name}-ix{i}"), ix.data.clone());
            }
        }
        out.put("jupiter_route", &name, bytes);
    }
}

/// The real NVIDIA evidence of `../shared/test-vectors/nvidia-gpu-samples`: the H100 report,
/// its chain, one OCSP answer, and the three together as the `gpu_evidence` target splits them.
fn gpu(out: &mut Out) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/test-vectors/nvidia-gpu-samples/go-nvattest-tools");
    let report = std::fs::read(format!("{dir}/test_raw_gpu_attestation_report.dat")).expect("the H100 report");
    let chain = std::fs::read(format!("{dir}/test_gpu_attestation_certificate_chain.dat")).expect("its chain");
    let ocsp = std::fs::read_to_string(format!("{dir}/ocsp/test_gpu_certificate_l4_base64encoded_ocsp_response.dat"))
        .expect("an OCSP answer");
    let ocsp = shared::b64::decode(ocsp.trim()).expect("base64");
    out.put("gpu_evidence", "report", [&[0u8][..], &report].concat());
    out.put("gpu_evidence", "chain", [&[1u8][..], &chain].concat());
    let len = |b: &[u8]| u16::try_from(b.len()).expect("short").to_le_bytes();
    out.put("gpu_evidence", "all", [&[2u8][..], &len(&report), &report, &len(&chain), &chain, &ocsp].concat());
    // A node's answer (mode 3): a real Intel quote with its collateral, and the H100 evidence.
    let node = shared::gpu::node::NodeEvidence {
        quote: hex::encode(sample("tdx_quote")),
        collateral: String::from_utf8(sample("tdx_quote_collateral.json")).expect("JSON"),
        gpus: vec![shared::gpu::node::GpuEvidence {
            report: shared::b64::encode(&report),
            certificate_chain: String::from_utf8(chain).expect("PEM"),
            ocsp: vec![shared::b64::encode(&ocsp)],
        }],
    };
    out.put("gpu_evidence", "node", [&[3u8][..], &serde_json::to_vec(&node).expect("JSON")].concat());
}

fn main() {
    let root = std::env::args().nth(1).expect("usage: seeds <dir>");
    let mut out = Out { root: PathBuf::from(root), count: 0 };
    envelopes(&mut out);
    replies(&mut out);
    quotes(&mut out);
    payments(&mut out);
    bodies(&mut out);
    pages(&mut out);
    model(&mut out);
    jupiter(&mut out);
    gpu(&mut out);
    println!("wrote {} seeds under {}", out.count, out.root.display());
}
