-- Managed wallets' privacy back end, the enclave pool (docs/wallets.md). The relay keeps what
-- the enclave sealed and cannot read it: the pool key (a sealed object, its address public),
-- and per mint the book of private balances with its version, replaced only by the next
-- version (compare and set).
CREATE TABLE privacy_pool (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    object_id  TEXT    NOT NULL,
    address    TEXT    NOT NULL,
    created_at BIGINT  NOT NULL
);

CREATE TABLE privacy_books (
    mint       TEXT   PRIMARY KEY,
    version    BIGINT NOT NULL,
    blob       TEXT   NOT NULL,
    updated_at BIGINT NOT NULL
);

-- Withdrawals: the order the enclave signed and its payout transaction, written with the book
-- that debits it, before the payout is sent. state: pending (sent or to send; a payout that
-- cannot land is replaced by a new one of the same order), landed.
CREATE TABLE wallet_withdrawals (
    order_id          TEXT   PRIMARY KEY,
    wallet_id         TEXT   NOT NULL REFERENCES wallets (id),
    mint              TEXT   NOT NULL,
    amount            TEXT   NOT NULL,
    destination       TEXT   NOT NULL,
    order_json        TEXT   NOT NULL,
    payout_tx         TEXT   NOT NULL,
    payout_sig        TEXT   NOT NULL UNIQUE,
    last_valid_height BIGINT NOT NULL,
    state             TEXT   NOT NULL,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);

CREATE INDEX wallet_withdrawals_pending ON wallet_withdrawals (state, updated_at);
