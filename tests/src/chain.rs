//! A real local Solana chain for tests: `tests/chain/chain.mjs` (Surfpool's Surfnet, offline)
//! as a child process, its driver commands, and helpers that make mints and mint tokens with
//! real transactions built by `shared::solana` and sent through `chain::RpcChain`, and the pool
//! the router stand-in trades against.
//!
//! Needs Node.js and `npm ci --prefix tests/chain` (`tools/test.sh` does it). Dropping the
//! chain closes the driver's stdin, which stops it; only if it is still running a second later
//! is the child killed (by its own handle, nothing else).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chain::{Chain, ChainError, Commitment, Confirmation, RpcChain};
use ed25519_dalek::SigningKey;
use serde_json::{Value, json};
use shared::address::Address;
use shared::solana::programs::TOKEN_PROGRAM;
use shared::solana::{Instruction, Message, Transaction, associated_token, system, token};
use standins::router::PoolConfig;

/// How long a test waits for a transaction to reach `confirmed` (the chain: milliseconds).
pub const CONFIRM_TIMEOUT: Duration = Duration::from_secs(20);

struct Driver {
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

pub struct LocalChain {
    child: Child,
    driver: Mutex<Driver>,
    pub rpc_url: String,
    pub ws_url: String,
    /// Holds 10 SOL at start; mint authority of the mints `create_mint` makes.
    pub payer: SigningKey,
}

/// A fresh random key.
pub fn new_key() -> SigningKey {
    SigningKey::generate(&mut rand_core::OsRng)
}

pub fn address_of(key: &SigningKey) -> Address {
    Address(key.verifying_key().to_bytes())
}

impl LocalChain {
    /// Starts a chain and waits for its ready line.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// As [`LocalChain::start`], with driver options (e.g. `--slot-time-ms 5`; see
    /// tests/chain/README.md).
    pub fn start_with(args: &[&str]) -> Self {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("chain/chain.mjs");
        let modules = Path::new(env!("CARGO_MANIFEST_DIR")).join("chain/node_modules");
        assert!(
            modules.exists(),
            "{} is missing: run `npm ci --prefix tests/chain` (make test does)",
            modules.display()
        );
        let mut child = Command::new("node")
            .arg(&script)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs (Node.js 20 or later is needed for the local chain)");
        let stdin = child.stdin.take().expect("piped stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("the driver's ready line");
        let ready: Value = serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("the chain did not start (ready line {line:?}); is tests/chain installed?"));
        let secret: Vec<u8> = serde_json::from_value(ready["payerSecretKey"].clone()).expect("payer secret key");
        let seed: [u8; 32] = secret[..32].try_into().expect("64-byte secret key");
        let payer = SigningKey::from_bytes(&seed);
        assert_eq!(address_of(&payer).to_string(), ready["payer"].as_str().unwrap(), "payer key and address agree");
        LocalChain {
            child,
            driver: Mutex::new(Driver { stdin: Some(stdin), stdout, next_id: 1 }),
            rpc_url: ready["rpcUrl"].as_str().unwrap().to_string(),
            ws_url: ready["wsUrl"].as_str().unwrap().to_string(),
            payer,
        }
    }

    /// An RPC client at commitment `confirmed`.
    pub fn rpc(&self) -> RpcChain {
        RpcChain::new(&self.rpc_url, Duration::from_secs(10)).unwrap()
    }

    pub fn payer_address(&self) -> Address {
        address_of(&self.payer)
    }

    /// One driver command; its `result`, or the driver's error text.
    pub fn command(&self, mut cmd: Value) -> Result<Value, String> {
        let mut d = self.driver.lock().unwrap_or_else(|e| e.into_inner());
        let id = d.next_id;
        d.next_id += 1;
        cmd["id"] = json!(id);
        let stdin = d.stdin.as_mut().expect("driver running");
        writeln!(stdin, "{cmd}").and_then(|_| stdin.flush()).expect("write to the driver");
        let mut line = String::new();
        d.stdout.read_line(&mut line).expect("read from the driver");
        let answer: Value = serde_json::from_str(&line).expect("the driver answers JSON");
        assert_eq!(answer["id"], json!(id), "answers come in order");
        if answer["ok"] == json!(true) {
            Ok(answer["result"].clone())
        } else {
            Err(answer["error"].as_str().unwrap_or_default().to_string())
        }
    }

    /// Sets (not adds) an account's lamports.
    pub fn fund_sol(&self, address: &Address, lamports: u64) {
        self.command(json!({"cmd": "fundSol", "address": address.to_string(), "lamports": lamports})).unwrap();
    }

    /// Sets `owner`'s token balance of `mint` (creating the associated account); returns it.
    pub fn fund_token(&self, owner: &Address, mint: &Address, amount: u64) -> Address {
        let r = self
            .command(
                json!({"cmd": "fundToken", "owner": owner.to_string(), "mint": mint.to_string(), "amount": amount}),
            )
            .unwrap();
        Address::parse(r["ata"].as_str().unwrap()).unwrap()
    }

    pub fn set_account(&self, address: &Address, lamports: u64, data: &[u8], owner: &Address) {
        self.command(json!({"cmd": "setAccount", "address": address.to_string(), "lamports": lamports,
                            "dataBase64": shared::b64::encode(data), "owner": owner.to_string()}))
            .unwrap();
    }

    /// Deploys the sBPF program `elf` at `program_id`.
    pub fn deploy(&self, program_id: &Address, elf: &[u8]) {
        self.command(json!({"cmd": "deploy", "programId": program_id.to_string(),
                            "soBase64": shared::b64::encode(elf)}))
            .unwrap();
    }

    /// Moves the clock forward to `unix_ms` (milliseconds); returns the epoch info.
    pub fn time_travel(&self, unix_ms: u64) -> Value {
        self.command(json!({"cmd": "timeTravel", "timestamp": unix_ms})).unwrap()
    }

    /// Builds, signs (the payer first), sends and confirms a legacy transaction; returns its
    /// signature, or the error the chain refused it with.
    pub async fn send(&self, ixs: &[Instruction], signers: &[&SigningKey]) -> Result<String, ChainError> {
        let rpc = self.rpc();
        let latest = rpc.latest_blockhash().await?;
        let mut tx = Transaction::new_unsigned(Message::compile(&self.payer_address(), ixs, latest.blockhash).unwrap());
        let mut keys = vec![&self.payer];
        keys.extend_from_slice(signers);
        tx.sign(&keys).unwrap();
        let signature = rpc.send_transaction(&tx.serialize()).await?;
        assert_eq!(signature, tx.id());
        let done =
            rpc.confirm(&signature, latest.last_valid_block_height, Commitment::Confirmed, CONFIRM_TIMEOUT).await?;
        assert_eq!(done, Confirmation::Confirmed, "{signature}");
        Ok(signature)
    }

    /// A new SPL Token mint (authority: the payer), made by a real transaction.
    pub async fn create_mint(&self, decimals: u8) -> Address {
        let mint = new_key();
        let rent = self.rpc().minimum_balance_for_rent_exemption(token::MINT_LEN).await.unwrap();
        let ixs = [
            system::create_account(
                &self.payer_address(),
                &address_of(&mint),
                rent,
                token::MINT_LEN as u64,
                &TOKEN_PROGRAM,
            ),
            token::initialize_mint2(&address_of(&mint), decimals, &self.payer_address(), None),
        ];
        self.send(&ixs, &[&mint]).await.unwrap();
        address_of(&mint)
    }

    /// Creates `owner`'s associated token account of `mint` (if missing); returns it.
    pub async fn create_token_account(&self, owner: &Address, mint: &Address) -> Address {
        let ata = associated_token::address(owner, mint, &TOKEN_PROGRAM);
        let ixs = [associated_token::create_idempotent(&self.payer_address(), owner, mint, &TOKEN_PROGRAM)];
        self.send(&ixs, &[]).await.unwrap();
        ata
    }

    /// Mints `amount` base units to `owner`'s associated token account (created if missing);
    /// returns that account.
    pub async fn mint_to(&self, mint: &Address, owner: &Address, amount: u64) -> Address {
        let ata = associated_token::address(owner, mint, &TOKEN_PROGRAM);
        let ixs = [
            associated_token::create_idempotent(&self.payer_address(), owner, mint, &TOKEN_PROGRAM),
            token::mint_to(mint, &ata, &self.payer_address(), amount),
        ];
        self.send(&ixs, &[]).await.unwrap();
        ata
    }

    /// A pool for the router stand-in (`standins::router`): a fresh authority holding
    /// `lamports` of SOL and, for each `(mint, amount)`, `amount` in its associated account,
    /// minted by real `MintTo` transactions (so the mints must be this chain's, from
    /// [`LocalChain::create_mint`]).
    pub async fn create_pool(&self, liquidity: &[(Address, u64)], lamports: u64) -> PoolConfig {
        let authority = new_key();
        self.fund_sol(&address_of(&authority), lamports);
        for (mint, amount) in liquidity {
            self.mint_to(mint, &address_of(&authority), *amount).await;
        }
        PoolConfig::new(authority, liquidity.iter().map(|(mint, _)| *mint).collect())
    }
}

impl Drop for LocalChain {
    fn drop(&mut self) {
        // Closing stdin is the driver's clean stop.
        drop(self.driver.lock().unwrap_or_else(|e| e.into_inner()).stdin.take());
        let deadline = Instant::now() + Duration::from_secs(1);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The smallest program the chain accepts: `mov64 r0, 0; exit`, so every instruction to it
/// succeeds whatever its data. It stands at the attestation program id on the local chain,
/// where the receipt program is not deployed: a commit's receipt is its instruction data,
/// which lookups read back from the transaction (docs/log.md "Ledger writer").
///
/// An sBPF v0 ELF built by hand: the 64-byte header (64-bit, little-endian, ET_DYN, EM_BPF,
/// entry at the code), the code, the section-name table, then three section headers (null,
/// `.text`, `.shstrtab`) and no program headers, which a program without relocations or
/// calls does not need.
pub fn noop_program_elf() -> Vec<u8> {
    const EM_BPF: u16 = 247;
    const ET_DYN: u16 = 3;
    let code: [u8; 16] = [0xb7, 0, 0, 0, 0, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0];
    let names = b"\0.text\0.shstrtab\0";
    let code_at = 64u64;
    let names_at = code_at + code.len() as u64;
    let headers_at = (names_at + names.len() as u64).div_ceil(8) * 8;
    let mut elf = Vec::new();
    elf.extend_from_slice(b"\x7fELF");
    elf.extend_from_slice(&[2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    elf.extend_from_slice(&ET_DYN.to_le_bytes());
    elf.extend_from_slice(&EM_BPF.to_le_bytes());
    elf.extend_from_slice(&1u32.to_le_bytes()); // e_version
    elf.extend_from_slice(&code_at.to_le_bytes()); // e_entry
    elf.extend_from_slice(&0u64.to_le_bytes()); // e_phoff: none
    elf.extend_from_slice(&headers_at.to_le_bytes()); // e_shoff
    elf.extend_from_slice(&0u32.to_le_bytes()); // e_flags: sBPF v0
    for half in [64u16, 56, 0, 64, 3, 2] {
        // e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx
        elf.extend_from_slice(&half.to_le_bytes());
    }
    elf.extend_from_slice(&code);
    elf.extend_from_slice(names);
    elf.resize(headers_at as usize, 0);
    let section = |name: u32, kind: u32, flags: u64, addr: u64, offset: u64, size: u64, align: u64| {
        let mut h = Vec::with_capacity(64);
        h.extend_from_slice(&name.to_le_bytes());
        h.extend_from_slice(&kind.to_le_bytes());
        for v in [flags, addr, offset, size] {
            h.extend_from_slice(&v.to_le_bytes());
        }
        h.extend_from_slice(&[0; 8]); // sh_link, sh_info
        h.extend_from_slice(&align.to_le_bytes());
        h.extend_from_slice(&0u64.to_le_bytes()); // sh_entsize
        h
    };
    elf.extend_from_slice(&[0; 64]);
    // .text: PROGBITS, ALLOC | EXECINSTR, loaded where it lies in the file.
    elf.extend_from_slice(&section(1, 1, 6, code_at, code_at, code.len() as u64, 4));
    // .shstrtab: STRTAB.
    elf.extend_from_slice(&section(7, 3, 0, 0, names_at, names.len() as u64, 1));
    elf
}
