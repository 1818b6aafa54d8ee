//! What an AI agent driving `svc mcp` may do with the owner's key, decided here before anything
//! is signed (docs/mcp.md, "Guardrails"). The agent reads text the relay controls, so a relay
//! (or anything it relays) can try to talk it into paying an attacker: every payout's
//! destination must be one the owner allowed (`--allow-destination`, or a yes on the terminal
//! with `--confirm`), a call may move at most `--max-amount`, and a day at most `--max-daily`
//! of a mint. The day's spending is written to a local file before the request is sent, so a
//! restarted server, or a call whose answer was lost, still counts. A call counts once it is
//! admitted, whatever the relay answers: the relay could still carry out a request it said it
//! refused, while its signature is fresh.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use shared::address::Address;

/// A local refusal: the tool error's code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
}

fn refuse(code: &'static str, message: String) -> Refusal {
    Refusal { code, message }
}

/// A limit in base units: one for every mint, and overrides per mint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limit {
    every_mint: Option<u128>,
    per_mint: BTreeMap<Address, u128>,
}

impl Limit {
    /// Reads `--max-…` values: `N` (every mint) or `MINT=N` (that mint), base units.
    pub fn parse(values: &[String]) -> Result<Self, String> {
        let mut limit = Limit::default();
        for value in values {
            let number =
                |n: &str| n.parse::<u128>().map_err(|_| format!("`{value}`: expected N or MINT=N in base units"));
            match value.split_once('=') {
                None => limit.every_mint = Some(number(value)?),
                Some((mint, n)) => {
                    let mint = Address::parse(mint).ok_or_else(|| format!("`{mint}` is not a base58 address"))?;
                    limit.per_mint.insert(mint, number(n)?);
                }
            }
        }
        Ok(limit)
    }

    fn of(&self, mint: &Address) -> Option<u128> {
        self.per_mint.get(mint).copied().or(self.every_mint)
    }
}

/// Asks the person at the terminal whether a destination may be paid.
pub type Confirm = Box<dyn Fn(&str) -> bool + Send + Sync>;

/// The day's spending per mint, as the state file keeps it.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Spent {
    /// Days since the Unix epoch (UTC).
    day: u64,
    /// Mint (base58) → base units, as decimal strings.
    spent: BTreeMap<String, String>,
}

/// The guardrails of one `svc mcp` server.
pub struct Guardrails {
    allowed: Mutex<BTreeSet<Address>>,
    confirm: Option<Confirm>,
    per_call: Limit,
    per_day: Limit,
    /// The day's spending (0600, `private_file`), recorded for every payout; a write that fails
    /// refuses the payout only when `per_day` limits its mint.
    state: PathBuf,
    state_lock: Mutex<()>,
}

/// A fund move an agent asks for.
pub struct Move<'a> {
    pub tool: &'a str,
    pub mint: &'a str,
    pub amount: &'a str,
    /// Who receives the funds; `None` when they stay in the wallet (an encrypt).
    pub destination: Option<&'a str>,
}

impl Guardrails {
    pub fn new(
        allowed: Vec<Address>,
        confirm: Option<Confirm>,
        per_call: Limit,
        per_day: Limit,
        state: PathBuf,
    ) -> Self {
        Guardrails {
            allowed: Mutex::new(allowed.into_iter().collect()),
            confirm,
            per_call,
            per_day,
            state,
            state_lock: Mutex::new(()),
        }
    }

    /// Whether `request` may be signed and sent; when it may, its amount is already counted
    /// in the day's spending, on disk.
    pub fn admit(&self, request: &Move, now: u64) -> Result<(), Refusal> {
        let invalid = |what: &str| refuse("invalid_field", format!("`{what}` is not valid"));
        let mint = Address::parse(request.mint).ok_or_else(|| invalid("mint"))?;
        let amount: u128 = request.amount.parse().map_err(|_| invalid("amount"))?;
        let destination = request.destination.map(Address::parse);
        if destination.is_some_and(|d| d.is_none()) {
            return Err(invalid("destinationPubkey"));
        }
        // The limit first: the owner is not asked about a destination for a call refused anyway.
        if let Some(max) = self.per_call.of(&mint).filter(|max| amount > *max) {
            return Err(refuse("amount_over_limit", format!("{amount} is above this server's --max-amount of {max}")));
        }
        if let Some(destination) = destination.flatten() {
            self.check_destination(request, &destination)?;
        }
        // Counted even without a limit, so a limit set later knows the day's spending; only a
        // limit makes a record that cannot be written a refusal.
        let max = self.per_day.of(&mint);
        match (self.count(&mint, amount, max, now), max) {
            (Err(e), None) if e.code == "client_error" => {
                tracing::warn!(error = %e.message, "the day's spending was not recorded");
                Ok(())
            }
            (outcome, _) => outcome,
        }
    }

    fn check_destination(&self, request: &Move, destination: &Address) -> Result<(), Refusal> {
        let mut allowed = self.allowed.lock().unwrap_or_else(|p| p.into_inner());
        if allowed.contains(destination) {
            return Ok(());
        }
        let question = format!(
            "svc mcp: {} wants to send {} base units of {} to {destination}, which --allow-destination does not \
             name. Allow this destination for this session? [y/N] ",
            request.tool, request.amount, request.mint
        );
        if self.confirm.as_ref().is_some_and(|ask| ask(&question)) {
            allowed.insert(*destination);
            return Ok(());
        }
        Err(refuse(
            "destination_not_allowed",
            format!("{destination} is not an allowed destination: the owner starts svc mcp with --allow-destination"),
        ))
    }

    /// Adds `amount` to the day's spending of `mint` unless that passes `max`.
    fn count(&self, mint: &Address, amount: u128, max: Option<u128>, now: u64) -> Result<(), Refusal> {
        let _one_at_a_time = self.state_lock.lock().unwrap_or_else(|p| p.into_inner());
        let state_error = |e: String| refuse("client_error", format!("spending record {}: {e}", self.state.display()));
        let today = now / 86_400;
        let mut record: Spent = match std::fs::read(&self.state) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| state_error(e.to_string()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Spent::default(),
            Err(e) => return Err(state_error(e.to_string())),
        };
        if record.day != today {
            record = Spent { day: today, spent: BTreeMap::new() };
        }
        let key = mint.to_string();
        let spent: u128 =
            record.spent.get(&key).map_or(Ok(0), |s| s.parse()).map_err(|_| state_error("corrupt".into()))?;
        let total = spent.saturating_add(amount);
        if let Some(max) = max.filter(|max| total > *max) {
            return Err(refuse(
                "daily_limit_exceeded",
                format!("{amount} more of {key} today would make {total}, above this server's --max-daily of {max}"),
            ));
        }
        record.spent.insert(key, total.to_string());
        let bytes = serde_json::to_vec_pretty(&record).map_err(|e| state_error(e.to_string()))?;
        crate::private_file::write(&self.state, &bytes).map_err(|e| state_error(e.to_string()))
    }
}

/// Asks on the controlling terminal (stdin and stdout carry the MCP protocol); no terminal: no.
pub fn ask_on_terminal(question: &str) -> bool {
    use std::io::{BufRead, Write};
    let Ok(mut tty) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty") else { return false };
    if tty.write_all(question.as_bytes()).and_then(|_| tty.flush()).is_err() {
        return false;
    }
    let mut line = String::new();
    std::io::BufReader::new(tty).read_line(&mut line).is_ok() && matches!(line.trim(), "y" | "Y" | "yes")
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINT: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
    const FRIEND: &str = "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4";
    const ATTACKER: &str = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
    const DAY: u64 = 20_000 * 86_400;

    fn payout<'a>(amount: &'a str, to: &'a str) -> Move<'a> {
        Move { tool: "priv_withdraw", mint: MINT, amount, destination: Some(to) }
    }

    fn guard(dir: &std::path::Path, confirm: Option<Confirm>) -> Guardrails {
        let limits = |v: &[&str]| Limit::parse(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        Guardrails::new(
            vec![Address::parse(FRIEND).unwrap()],
            confirm,
            limits(&["1000"]),
            limits(&[&format!("{MINT}=2500")]),
            dir.join("spent.json"),
        )
    }

    fn code(r: Result<(), Refusal>) -> Result<(), &'static str> {
        r.map_err(|r| r.code)
    }

    #[test]
    fn payouts_go_only_to_allowed_destinations_within_the_limits() {
        let dir = tempfile::tempdir().unwrap();
        let g = guard(dir.path(), None);
        assert_eq!(code(g.admit(&payout("900", ATTACKER), DAY)), Err("destination_not_allowed"));
        assert_eq!(code(g.admit(&payout("1001", FRIEND), DAY)), Err("amount_over_limit"));
        assert_eq!(code(g.admit(&payout("ten", FRIEND), DAY)), Err("invalid_field"));
        assert_eq!(code(g.admit(&payout("1000", FRIEND), DAY)), Ok(()));
        assert_eq!(code(g.admit(&payout("1000", FRIEND), DAY + 1)), Ok(()));
        // The day's record is on disk: a new server (a restart) counts what was spent.
        let g = guard(dir.path(), None);
        assert_eq!(code(g.admit(&payout("501", FRIEND), DAY + 2)), Err("daily_limit_exceeded"));
        assert_eq!(code(g.admit(&payout("500", FRIEND), DAY + 3)), Ok(()));
        assert_eq!(code(g.admit(&payout("1", FRIEND), DAY + 4)), Err("daily_limit_exceeded"));
        // A new day starts from nothing.
        assert_eq!(code(g.admit(&payout("1000", FRIEND), DAY + 86_400)), Ok(()));
        // An encrypt names no destination; another mint has no daily limit here.
        let encrypt = Move { tool: "priv_encrypt", mint: MINT, amount: "1000", destination: None };
        assert_eq!(code(g.admit(&encrypt, DAY + 86_400)), Ok(()));
        let other = Move { mint: FRIEND, ..payout("1000", FRIEND) };
        assert_eq!(code(g.admit(&other, DAY + 86_400)), Ok(()));
    }

    #[test]
    fn a_new_destination_is_asked_for_once_when_confirming() {
        let dir = tempfile::tempdir().unwrap();
        let asked = std::sync::Arc::new(Mutex::new(Vec::new()));
        let log = asked.clone();
        let g = guard(
            dir.path(),
            Some(Box::new(move |q: &str| {
                log.lock().unwrap().push(q.to_string());
                q.contains(ATTACKER) && !q.contains("999")
            })),
        );
        assert_eq!(code(g.admit(&payout("999", ATTACKER), DAY)), Err("destination_not_allowed"), "the owner said no");
        assert_eq!(code(g.admit(&payout("10", ATTACKER), DAY)), Ok(()), "the owner said yes");
        assert_eq!(code(g.admit(&payout("10", ATTACKER), DAY)), Ok(()));
        assert_eq!(asked.lock().unwrap().len(), 2, "a yes holds for the session");
        assert!(asked.lock().unwrap()[0].contains("priv_withdraw wants to send 999 base units"));
    }

    #[test]
    fn limits_read_every_mint_and_per_mint_values() {
        let l = Limit::parse(&["5".into(), format!("{MINT}=7")]).unwrap();
        assert_eq!((l.of(&Address::parse(MINT).unwrap()), l.of(&Address::parse(FRIEND).unwrap())), (Some(7), Some(5)));
        assert!(Limit::parse(&["x".into()]).is_err());
        assert!(Limit::parse(&["notamint=5".into()]).is_err());
    }
}
