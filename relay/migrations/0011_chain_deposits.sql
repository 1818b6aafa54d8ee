-- Deposits from the chain (docs/billing.md "Deposits"). Each account (key id) has a deposit
-- owner: a signing key the enclave made and sealed (its blob in sealed_objects); deposits go to
-- that owner's token account of each accepted mint. Every transfer seen is one row, keyed by
-- transaction signature and instruction index (-1: a balance change no top-level transfer
-- explains), so a transfer is recorded, and credited, once.
CREATE TABLE deposit_addresses (
    key_id     TEXT   PRIMARY KEY,
    owner      TEXT   NOT NULL UNIQUE,
    object_id  TEXT   NOT NULL,
    created_at BIGINT NOT NULL
);

-- state: seen (landed, not yet finalized), finalized (to credit), credited, ignored (reason:
-- unknown_mint, below_minimum).
CREATE TABLE chain_deposits (
    signature  TEXT   NOT NULL,
    ix         BIGINT NOT NULL,
    key_id     TEXT   NOT NULL,
    owner      TEXT   NOT NULL,
    mint       TEXT   NOT NULL,
    currency   TEXT,
    amount     BIGINT NOT NULL,
    state      TEXT   NOT NULL,
    reason     TEXT,
    slot       BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (signature, ix)
);

CREATE INDEX chain_deposits_by_key ON chain_deposits (key_id, created_at);

CREATE INDEX chain_deposits_by_state ON chain_deposits (state);

-- The newest signature scanned per watched address.
CREATE TABLE deposit_cursors (
    address        TEXT   PRIMARY KEY,
    last_signature TEXT   NOT NULL,
    updated_at     BIGINT NOT NULL
);

-- The interface-only deposits table before these: nothing wrote to it but tests.
DROP TABLE deposits;

-- A key's currency for paid calls (usdc or svc); none: whichever covers the call.
ALTER TABLE api_keys ADD COLUMN currency TEXT;
