-- One row per paid call of a key, written in the same transaction as its debit; a refund or a
-- settlement updates it in the same transaction as the balance change.
CREATE TABLE usage_records (
    id                TEXT   PRIMARY KEY,
    key_id            TEXT   NOT NULL,
    route             TEXT   NOT NULL,
    model             TEXT   NOT NULL,
    status            TEXT   NOT NULL,
    prompt_tokens     BIGINT NOT NULL,
    completion_tokens BIGINT NOT NULL,
    charged           BIGINT NOT NULL,
    currency          TEXT   NOT NULL,
    created_at        BIGINT NOT NULL
);

CREATE INDEX usage_records_by_key ON usage_records (key_id, created_at);

-- Deposits credited by a deposit watcher: the ledger transaction is the key, so a deposit seen
-- twice (a restart, two relays) is credited once.
CREATE TABLE deposits (
    signature  TEXT   PRIMARY KEY,
    key_id     TEXT   NOT NULL,
    currency   TEXT   NOT NULL,
    amount     BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);

-- Fixed-window request counters for rate limits, shared by every relay on the database.
CREATE TABLE rate_windows (
    subject      TEXT   NOT NULL,
    window_start BIGINT NOT NULL,
    used         BIGINT NOT NULL,
    PRIMARY KEY (subject, window_start)
);
