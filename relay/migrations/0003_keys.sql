-- API keys issued after a wallet sign-in. Only the sha256 of a key is stored; the id is
-- stable across rotation, so balances (kept per key id) survive it.
CREATE TABLE api_keys (
    id         TEXT   PRIMARY KEY,
    key_hash   TEXT   NOT NULL UNIQUE,
    wallet     TEXT   NOT NULL,
    scopes     TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);

CREATE INDEX api_keys_by_wallet ON api_keys (wallet);

-- One-time sign-in challenges.
CREATE TABLE sign_in_challenges (
    nonce      TEXT   PRIMARY KEY,
    wallet     TEXT   NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);
