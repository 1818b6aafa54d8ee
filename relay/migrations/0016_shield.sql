-- Shield sessions (docs/wallets.md "Shield"): their fourth transaction, the intermediate key's
-- close that returns its SOL to the pool.
ALTER TABLE swap_sessions ADD COLUMN close_tx_sig TEXT;
