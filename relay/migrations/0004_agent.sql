-- Free /agent messages per network address and UTC day (day = unix seconds / 86400).
CREATE TABLE free_trial (
    address TEXT   NOT NULL,
    day     BIGINT NOT NULL,
    used    BIGINT NOT NULL CHECK (used >= 0),
    PRIMARY KEY (address, day)
);

-- Plaintext /agent chat history, only when the caller sends a chatId. The owner (API key id
-- or guest address) is part of the key, so one caller cannot read another's chat.
CREATE TABLE chat_turns (
    owner      TEXT   NOT NULL,
    chat_id    TEXT   NOT NULL,
    seq        BIGINT NOT NULL,
    role       TEXT   NOT NULL,
    content    TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (owner, chat_id, seq)
);
