-- The transparency log of receipts (docs/log.md). Portable: TEXT and BIGINT only; hashes are
-- lowercase hex.
--
-- One row holds the size. Every append bumps it with UPDATE … RETURNING in the receipt's own
-- transaction, which row-locks it until commit: leaf indexes are dense and unique across
-- relays on one PostgreSQL (SQLite has one writer anyway).
CREATE TABLE tlog_head (
    id   BIGINT PRIMARY KEY,
    size BIGINT NOT NULL
);

INSERT INTO tlog_head (id, size) VALUES (0, 0);

-- What each leaf hashes (shared::tlog::entry), one per receipt address.
CREATE TABLE tlog_entries (
    idx        BIGINT PRIMARY KEY,
    leaf_hash  TEXT   NOT NULL,
    address    TEXT   NOT NULL UNIQUE,
    entry_hex  TEXT   NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX tlog_entries_by_leaf ON tlog_entries (leaf_hash);

-- Every complete subtree's hash: (level, idx) covers leaves [idx * 2^level, (idx + 1) * 2^level).
-- Written once, when its last leaf is appended; roots and proofs are O(log n) of these rows.
CREATE TABLE tlog_nodes (
    level BIGINT NOT NULL,
    idx   BIGINT NOT NULL,
    hash  TEXT   NOT NULL,
    PRIMARY KEY (level, idx)
);

-- Anchored tree heads, one per size, written with their ledger transaction in one database
-- transaction: a restart or a second relay cannot anchor the same head twice.
CREATE TABLE tlog_anchors (
    tree_size     BIGINT PRIMARY KEY,
    root_hash     TEXT   NOT NULL,
    sth_timestamp BIGINT NOT NULL,
    sth_signature TEXT   NOT NULL,
    sth_hash      TEXT   NOT NULL,
    tx_signature  TEXT   NOT NULL UNIQUE REFERENCES ledger_commits (signature),
    created_at    BIGINT NOT NULL
);
