-- The Solana ledger writer's durable queue (docs/log.md "Ledger writer"). One row per commit
-- of the embedded log (a receipt or an anchor), written in the same database transaction as
-- the commit, so a commit that exists is one the writer will send.
--
-- state: queued (to build and send) → sending (chain_signature recorded before the send) →
-- landed. A `sending` row whose blockhash expired unseen goes back to queued and is rebuilt
-- with a fresh blockhash: the old transaction can no longer land, so nothing lands twice.
-- attempts doubles as a version: a writer claims a row by updating it where attempts is what
-- it read, so two relays on one PostgreSQL never send the same attempt.
CREATE TABLE ledger_outbox (
    commit_signature  TEXT   PRIMARY KEY REFERENCES ledger_commits (signature),
    state             TEXT   NOT NULL,
    attempts          BIGINT NOT NULL,
    next_attempt_at   BIGINT NOT NULL,
    chain_signature   TEXT   UNIQUE,
    last_valid_height BIGINT,
    last_error        TEXT,
    created_at        BIGINT NOT NULL,
    landed_at         BIGINT
);

CREATE INDEX ledger_outbox_due ON ledger_outbox (state, next_attempt_at);
