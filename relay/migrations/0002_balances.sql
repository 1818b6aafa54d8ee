-- Prepaid balances per API key, in integer base units of a currency ("usdc" = the stablecoin,
-- 6 decimals; "svc" = the service token). Every change is a row in an append-only journal.
CREATE TABLE balances (
    key_id   TEXT   NOT NULL,
    currency TEXT   NOT NULL,
    amount   BIGINT NOT NULL CHECK (amount >= 0),
    PRIMARY KEY (key_id, currency)
);

CREATE TABLE balance_journal (
    id            TEXT   PRIMARY KEY,
    key_id        TEXT   NOT NULL,
    currency      TEXT   NOT NULL,
    delta         BIGINT NOT NULL,
    balance_after BIGINT NOT NULL,
    kind          TEXT   NOT NULL,
    reference     TEXT   NOT NULL,
    created_at    BIGINT NOT NULL
);

CREATE INDEX balance_journal_by_key ON balance_journal (key_id, created_at);
