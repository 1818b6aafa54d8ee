//! What a plan's tools need, read from the prompt: Solana addresses and token symbols.

/// Symbols the tools understand (they map them to mints).
const KNOWN_SYMBOLS: &[&str] = &["SOL", "USDC", "USDT", "JUP", "BONK"];

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entities {
    /// Base58 strings of Solana-address length (32–44 characters).
    pub addresses: Vec<String>,
    /// Known symbols, upper case, in order of appearance, no repeats.
    pub tokens: Vec<String>,
}

impl Entities {
    pub fn read(prompt: &str) -> Self {
        let mut out = Entities::default();
        for word in prompt.split(|c: char| c.is_whitespace() || ",;()[]{}\"'?!".contains(c)) {
            let word = word.trim_end_matches(['.', ':']);
            if is_base58_address(word) {
                if !out.addresses.iter().any(|a| a == word) {
                    out.addresses.push(word.to_string());
                }
                continue;
            }
            let symbol = word.trim_start_matches('$').to_ascii_uppercase();
            if KNOWN_SYMBOLS.contains(&symbol.as_str()) && !out.tokens.contains(&symbol) {
                out.tokens.push(symbol);
            }
        }
        out
    }
}

fn is_base58_address(word: &str) -> bool {
    (32..=44).contains(&word.len())
        && word.bytes().all(|b| b.is_ascii_alphanumeric() && !matches!(b, b'0' | b'O' | b'I' | b'l'))
        // Plain words of that length are not addresses: require a digit or mixed case.
        && word.bytes().any(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
        && word.bytes().any(|b| b.is_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_addresses_and_symbols() {
        let e = Entities::read(
            "Compare $sol vs JUP, then check 9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM. And sol again?",
        );
        assert_eq!(e.tokens, ["SOL", "JUP"]);
        assert_eq!(e.addresses, ["9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"]);
        let none = Entities::read("solution consolidation internationalisation-of-everything-everywhere");
        assert_eq!(none, Entities::default());
    }
}
