//! Stand-in for a Solana JSON-RPC 2.0 node: `POST /` with `getBalance`,
//! `getTokenAccountsByOwner` (`jsonParsed`), and, for the x402 client that builds payment
//! transactions, `getAccountInfo` (`base64` or `base58`: the mints below as 82-byte SPL Mint
//! accounts owned by their token program, the wallet's token accounts as 165-byte token accounts,
//! the wallet as a system account, `value: null` for any other address) and `getLatestBlockhash`
//! ([`BLOCKHASH`], valid to [`LAST_VALID_BLOCK_HEIGHT`]).
//!
//! `start()` serves on loopback and returns `(Running, Recorder)`; the `solanaRpc` upstream's
//! base URL is `Running::base_url`. [`WALLET`] holds 2.5 SOL, two USDC accounts (1 and 0.5),
//! an empty BONK account and 12.345678 JUP under the SPL Token program, and 3.25 PYUSD under
//! Token-2022; any other valid address holds nothing. Like a real node it answers JSON-RPC
//! errors in a 200 response: -32700 for a body that is not JSON, -32600 for a request that is
//! not JSON-RPC 2.0, -32601 for an unknown method, -32602 for bad params (an address that is
//! not a 32-byte base58 key, an unknown commitment, a program id that is not a token program,
//! an encoding other than `jsonParsed`). Batches are answered element by element.
//! `Recorder::requests` lists every call (method and params); `Recorder::fail_with` makes
//! later requests fail at the HTTP level, as garbage, or with a JSON-RPC error.

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// The wallet with balances.
pub const WALLET: &str = "vines1vzrYbzLMRdu58ou5XTby4qAqVRLmqo36NKPTg";
pub const WALLET_LAMPORTS: u64 = 2_500_000_000;
pub const TOKEN_PROGRAM: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
pub const TOKEN_2022_PROGRAM: &str = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
pub const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
pub const BONK: &str = "DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263";
pub const JUP: &str = "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN";
pub const PYUSD: &str = "2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo";
/// The slot every answer reports.
pub const SLOT: u64 = 341_197_053;
/// The blockhash `getLatestBlockhash` answers (32 bytes, base58).
pub const BLOCKHASH: &str = "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N";
pub const LAST_VALID_BLOCK_HEIGHT: u64 = 319_482_211;
const SYSTEM_PROGRAM: &str = "11111111111111111111111111111111";

/// The mints `getAccountInfo` knows: (mint, token program, decimals).
pub const MINTS: [(&str, &str, u8); 4] =
    [(USDC, TOKEN_PROGRAM, 6), (BONK, TOKEN_PROGRAM, 5), (JUP, TOKEN_PROGRAM, 6), (PYUSD, TOKEN_2022_PROGRAM, 6)];

/// The wallet's token accounts: (program, account, mint, raw amount, decimals).
const ACCOUNTS: [(&str, &str, &str, u64, u8); 5] = [
    (TOKEN_PROGRAM, "8ZUXnUkqAb1mrLkGq3Kx6gY5FCAAqnaGrkzJhqb3eDaA", USDC, 1_000_000, 6),
    (TOKEN_PROGRAM, "3emsAVdmGKERbHjmGfQ6oZ1e35dkf5iYcS6U4CPKFVaa", BONK, 0, 5),
    (TOKEN_PROGRAM, "GfG7W2m4Na8tAixnR3uDxVHbkUbRUzHjVRTCfGgNJ7Rq", JUP, 12_345_678, 6),
    (TOKEN_PROGRAM, "5Fq3Bha1VCeaW2ksh3EVAe5hn5Nhsuap1FhSqa8PMU2F", USDC, 500_000, 6),
    (TOKEN_2022_PROGRAM, "HU3ZDLmcuSVhvRD3WMYtjh3rZ1o7wZFjEUMoTs7Eawrr", PYUSD, 3_250_000, 6),
];

#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    pub method: String,
    pub params: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// This HTTP status, with a body the tool must not repeat.
    Status(u16),
    /// 200 with a body that is not JSON.
    Garbage,
    /// A JSON-RPC error with this code (and a message the tool must not repeat).
    Rpc(i64),
}

/// What the stand-in was asked, and how it should fail.
pub type Recorder = crate::Recorder<Seen, Failure>;

/// The text of forced failures; tests check it never reaches the model.
pub const FAILURE_DETAIL: &str = "solana-internal-detail-5eed";

pub async fn start() -> (crate::Running, Recorder) {
    let recorder = Recorder::default();
    let router = Router::new().route("/", post(rpc)).with_state(recorder.clone());
    (crate::serve(router).await, recorder)
}

/// Decodes base58 (Bitcoin alphabet); `None` on a character outside it.
pub fn decode_base58(s: &str) -> Option<Vec<u8>> {
    const ALPHABET: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let mut little_endian: Vec<u8> = Vec::new();
    for c in s.bytes() {
        let mut carry = ALPHABET.iter().position(|&a| a == c)? as u32;
        for byte in little_endian.iter_mut() {
            carry += u32::from(*byte) * 58;
            *byte = (carry & 0xff) as u8;
            carry >>= 8;
        }
        while carry > 0 {
            little_endian.push((carry & 0xff) as u8);
            carry >>= 8;
        }
    }
    let zeros = s.bytes().take_while(|&c| c == b'1').count();
    little_endian.extend(std::iter::repeat_n(0, zeros));
    little_endian.reverse();
    Some(little_endian)
}

/// True for a base58 string of 32 bytes (a Solana public key).
pub fn is_pubkey(s: &str) -> bool {
    decode_base58(s).is_some_and(|b| b.len() == 32)
}

async fn rpc(State(recorder): State<Recorder>, body: Bytes) -> Response {
    match recorder.failure() {
        Some(Failure::Status(code)) => {
            let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            return (status, FAILURE_DETAIL).into_response();
        }
        Some(Failure::Garbage) => return (StatusCode::OK, "<html>definitely not json</html>").into_response(),
        _ => {}
    }
    let request: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(_) => return Json(error(Value::Null, -32700, "Parse error")).into_response(),
    };
    match request {
        Value::Array(calls) if !calls.is_empty() => {
            Json(Value::Array(calls.iter().map(|c| call(&recorder, c)).collect())).into_response()
        }
        single => Json(call(&recorder, &single)).into_response(),
    }
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": id})
}

fn call(recorder: &Recorder, request: &Value) -> Value {
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let (Some("2.0"), Some(method)) =
        (request.get("jsonrpc").and_then(Value::as_str), request.get("method").and_then(Value::as_str))
    else {
        return error(id, -32600, "Invalid request");
    };
    let params = request.get("params").cloned().unwrap_or(Value::Null);
    recorder.push(Seen { method: method.to_string(), params: params.clone() });
    if let Some(Failure::Rpc(code)) = recorder.failure() {
        return error(id, code, FAILURE_DETAIL);
    }
    let result = match method {
        "getBalance" => get_balance(&params),
        "getTokenAccountsByOwner" => get_token_accounts(&params),
        "getAccountInfo" => get_account_info(&params),
        "getLatestBlockhash" => get_latest_blockhash(&params),
        _ => return error(id, -32601, "Method not found"),
    };
    match result {
        Ok(result) => json!({"jsonrpc": "2.0", "result": result, "id": id}),
        Err(message) => error(id, -32602, &message),
    }
}

fn context() -> Value {
    json!({"apiVersion": "2.2.3", "slot": SLOT})
}

type Config = serde_json::Map<String, Value>;

/// The address in `params[0]` and the config object at `params[at]` (if any).
fn address_and_config(params: &Value, at: usize) -> Result<(&str, Option<&Config>), String> {
    let list = params.as_array().ok_or("Invalid params: expected an array")?;
    let address = list.first().and_then(Value::as_str).ok_or("Invalid params: missing address")?;
    if !is_pubkey(address) {
        return Err("Invalid param: Invalid".into());
    }
    let config = match list.get(at) {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => Some(o),
        Some(_) => return Err("Invalid params: the configuration must be an object".into()),
    };
    if let Some(commitment) = config.and_then(|c| c.get("commitment"))
        && !matches!(commitment.as_str(), Some("processed" | "confirmed" | "finalized"))
    {
        return Err("Invalid params: unknown commitment".into());
    }
    Ok((address, config))
}

fn get_balance(params: &Value) -> Result<Value, String> {
    let (address, _) = address_and_config(params, 1)?;
    let lamports = if address == WALLET { WALLET_LAMPORTS } else { 0 };
    Ok(json!({"context": context(), "value": lamports}))
}

fn get_token_accounts(params: &Value) -> Result<Value, String> {
    let (address, config) = address_and_config(params, 2)?;
    let filter = params.get(1).and_then(Value::as_object).ok_or("Invalid params: missing filter")?;
    let (program, mint) =
        match (filter.get("programId").and_then(Value::as_str), filter.get("mint").and_then(Value::as_str)) {
            (Some(program), None) => {
                if program != TOKEN_PROGRAM && program != TOKEN_2022_PROGRAM {
                    return Err("Invalid param: unrecognized Token program id".into());
                }
                (Some(program), None)
            }
            (None, Some(mint)) if is_pubkey(mint) => (None, Some(mint)),
            _ => return Err("Invalid params: filter must be {\"mint\": ..} or {\"programId\": ..}".into()),
        };
    if config.and_then(|c| c.get("encoding")).and_then(Value::as_str) != Some("jsonParsed") {
        return Err("Invalid params: this stand-in answers encoding jsonParsed only".into());
    }
    let accounts: Vec<Value> = if address == WALLET {
        ACCOUNTS
            .iter()
            .filter(|(p, _, m, _, _)| program.is_none_or(|want| want == *p) && mint.is_none_or(|want| want == *m))
            .map(|(p, account, m, amount, decimals)| {
                let ui = *amount as f64 / 10f64.powi(i32::from(*decimals));
                json!({"pubkey": account, "account": {
                    "data": {"parsed": {"info": {
                        "isNative": false, "mint": m, "owner": address, "state": "initialized",
                        "tokenAmount": {"amount": amount.to_string(), "decimals": decimals, "uiAmount": ui,
                                        "uiAmountString": ui.to_string()}
                    }, "type": "account"}, "program": if *p == TOKEN_PROGRAM { "spl-token" } else { "spl-token-2022" },
                    "space": 165},
                    "executable": false, "lamports": 2_039_280, "owner": p, "rentEpoch": 18_446_744_073_709_551_615u64,
                    "space": 165
                }})
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(json!({"context": context(), "value": accounts}))
}

/// An 82-byte SPL Mint: no mint or freeze authority, initialized, `decimals` at byte 44.
fn mint_data(decimals: u8) -> Vec<u8> {
    let mut data = vec![0u8; 82];
    data[36..44].copy_from_slice(&1_000_000_000_000u64.to_le_bytes());
    data[44] = decimals;
    data[45] = 1;
    data
}

/// A 165-byte SPL token account: mint, owner, amount, initialized.
fn token_account_data(mint: &str, owner: &str, amount: u64) -> Vec<u8> {
    let mut data = vec![0u8; 165];
    data[..32].copy_from_slice(&decode_base58(mint).unwrap_or_default());
    data[32..64].copy_from_slice(&decode_base58(owner).unwrap_or_default());
    data[64..72].copy_from_slice(&amount.to_le_bytes());
    data[108] = 1;
    data
}

fn get_account_info(params: &Value) -> Result<Value, String> {
    let (address, config) = address_and_config(params, 1)?;
    let encoding = config.and_then(|c| c.get("encoding")).and_then(Value::as_str).unwrap_or("base58");
    if encoding != "base64" && encoding != "base58" {
        return Err("Invalid params: this stand-in answers encoding base64 or base58 only".into());
    }
    let found: Option<(Vec<u8>, &str, u64)> = if let Some((_, program, decimals)) =
        MINTS.iter().find(|(mint, _, _)| *mint == address)
    {
        Some((mint_data(*decimals), program, 1_461_600))
    } else if let Some((program, _, mint, amount, _)) = ACCOUNTS.iter().find(|(_, account, ..)| *account == address) {
        Some((token_account_data(mint, WALLET, *amount), program, 2_039_280))
    } else if address == WALLET {
        Some((Vec::new(), SYSTEM_PROGRAM, WALLET_LAMPORTS))
    } else {
        None
    };
    let value = found.map(|(data, owner, lamports)| {
        let encoded = match encoding {
            "base64" => shared::b64::encode(&data),
            _ => bs58::encode(&data).into_string(),
        };
        json!({"data": [encoded, encoding], "executable": false, "lamports": lamports, "owner": owner,
               "rentEpoch": 18_446_744_073_709_551_615u64, "space": data.len()})
    });
    Ok(json!({"context": context(), "value": value}))
}

fn get_latest_blockhash(params: &Value) -> Result<Value, String> {
    match params {
        Value::Null => {}
        Value::Array(list) if list.len() <= 1 && list.iter().all(|c| c.is_object() || c.is_null()) => {
            if let Some(commitment) = list.first().and_then(|c| c.get("commitment"))
                && !matches!(commitment.as_str(), Some("processed" | "confirmed" | "finalized"))
            {
                return Err("Invalid params: unknown commitment".into());
            }
        }
        _ => return Err("Invalid params: expected [config]".into()),
    }
    Ok(
        json!({"context": context(), "value": {"blockhash": BLOCKHASH, "lastValidBlockHeight": LAST_VALID_BLOCK_HEIGHT}}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixture_keys_are_32_bytes() {
        for key in [WALLET, TOKEN_PROGRAM, TOKEN_2022_PROGRAM, USDC, BONK, JUP, PYUSD] {
            assert!(is_pubkey(key), "{key}");
        }
        for (_, account, _, _, _) in ACCOUNTS {
            assert!(is_pubkey(account), "{account}");
        }
        assert_eq!(decode_base58("11111111111111111111111111111111"), Some(vec![0; 32]));
        assert_eq!(decode_base58("2g"), Some(vec![0x61]));
        assert!(!is_pubkey("0OIl"));
        assert!(is_pubkey(BLOCKHASH));
    }

    #[test]
    fn account_info_of_mints_and_accounts() {
        let ask = |method: &str, params: Value| {
            let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
            call(&Recorder::default(), &request)
        };
        let usdc = ask("getAccountInfo", json!([USDC, {"encoding": "base64"}]));
        let value = &usdc["result"]["value"];
        assert_eq!(value["owner"], TOKEN_PROGRAM);
        let data = shared::b64::decode(value["data"][0].as_str().unwrap()).unwrap();
        assert_eq!((data.len(), data[44], data[45]), (82, 6, 1));
        let pyusd = ask("getAccountInfo", json!([PYUSD, {"encoding": "base64"}]));
        assert_eq!(pyusd["result"]["value"]["owner"], TOKEN_2022_PROGRAM);
        let account = ask("getAccountInfo", json!([ACCOUNTS[0].1, {"encoding": "base58"}]));
        let data = decode_base58(account["result"]["value"]["data"][0].as_str().unwrap()).unwrap();
        assert_eq!(&data[64..72], &1_000_000u64.to_le_bytes());
        let nobody = ask("getAccountInfo", json!(["11111111111111111111111111111112", {"encoding": "base64"}]));
        assert_eq!(nobody["result"]["value"], Value::Null);
        let parsed = ask("getAccountInfo", json!([USDC, {"encoding": "jsonParsed"}]));
        assert_eq!(parsed["error"]["code"], -32602);
        let hash = ask("getLatestBlockhash", json!([{"commitment": "confirmed"}]));
        assert_eq!(hash["result"]["value"]["blockhash"], BLOCKHASH);
        assert_eq!(ask("getLatestBlockhash", json!([{"commitment": "soon"}]))["error"]["code"], -32602);
        assert_eq!(ask("getSlot", json!([]))["error"]["code"], -32601);
    }
}
