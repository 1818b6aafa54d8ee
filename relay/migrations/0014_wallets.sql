-- Managed wallets (Mode A, docs/wallets.md). A wallet's key is a sealed object the enclave made
-- (kind signing-key, its blob in sealed_objects); only its public half is here. key_id is the
-- account that made the wallet: every route of it answers 403 to any other.
CREATE TABLE wallets (
    id             TEXT   PRIMARY KEY,
    key_id         TEXT   NOT NULL,
    address        TEXT   NOT NULL UNIQUE,
    object_id      TEXT   NOT NULL,
    owner_pubkey   TEXT,
    network        TEXT   NOT NULL,
    webhook_url    TEXT   NOT NULL,
    webhook_secret TEXT   NOT NULL,
    created_at     BIGINT NOT NULL
);

CREATE INDEX wallets_by_key ON wallets (key_id);

-- The wallet's operations, newest first by (at_ms, id). id is also the webhook message id of
-- the event the operation emitted.
CREATE TABLE wallet_audit (
    id         TEXT   PRIMARY KEY,
    wallet_id  TEXT   NOT NULL REFERENCES wallets (id),
    kind       TEXT   NOT NULL,
    details    TEXT   NOT NULL,
    at_ms      BIGINT NOT NULL
);

CREATE INDEX wallet_audit_by_wallet ON wallet_audit (wallet_id, at_ms);

-- The webhook outbox: one row per event, written in the same database transaction as the
-- operation, so an operation that happened is an event that will be delivered (a relay
-- restart loses none). state: pending → delivered, or failed once the retry window is over.
-- attempts doubles as a version: a worker claims a row by updating it where attempts is what
-- it read, so two relays on one database never send the same attempt.
CREATE TABLE webhook_outbox (
    id              TEXT   PRIMARY KEY,
    wallet_id       TEXT   NOT NULL REFERENCES wallets (id),
    event_type      TEXT   NOT NULL,
    payload         TEXT   NOT NULL,
    state           TEXT   NOT NULL,
    attempts        BIGINT NOT NULL,
    next_attempt_at BIGINT NOT NULL,
    created_at      BIGINT NOT NULL,
    delivered_at    BIGINT
);

CREATE INDEX webhook_outbox_due ON webhook_outbox (state, next_attempt_at);

-- Every delivery attempt: the wallet's delivery log.
CREATE TABLE webhook_deliveries (
    message_id  TEXT   NOT NULL,
    attempt     BIGINT NOT NULL,
    wallet_id   TEXT   NOT NULL,
    event_type  TEXT   NOT NULL,
    at          BIGINT NOT NULL,
    http_status BIGINT,
    error       TEXT,
    delivered   BIGINT NOT NULL,
    PRIMARY KEY (message_id, attempt)
);

CREATE INDEX webhook_deliveries_by_wallet ON webhook_deliveries (wallet_id, at);
