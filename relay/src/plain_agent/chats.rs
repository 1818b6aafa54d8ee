//! Chat history of the plaintext `/agent` path: stored only when the caller names a
//! `chatId`, keyed by owner so one caller cannot read another's chat.

use sqlx::Row;

use crate::store::{Store, StoreError};

/// Longest accepted `chatId`.
pub const MAX_CHAT_ID: usize = 128;

pub fn valid_chat_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= MAX_CHAT_ID && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
}

/// One stored turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// `user` or `assistant`.
    pub role: String,
    pub content: String,
}

/// The last `max` turns of a chat, oldest first.
pub async fn history(store: &Store, owner: &str, chat_id: &str, max: u32) -> Result<Vec<Turn>, StoreError> {
    let rows = sqlx::query(
        "SELECT role, content FROM chat_turns WHERE owner = $1 AND chat_id = $2 ORDER BY seq DESC LIMIT $3",
    )
    .bind(owner)
    .bind(chat_id)
    .bind(i64::from(max))
    .fetch_all(store.pool())
    .await?;
    let mut turns = rows
        .into_iter()
        .map(|r| Ok(Turn { role: r.try_get("role")?, content: r.try_get("content")? }))
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    turns.reverse();
    Ok(turns)
}

/// Appends a user turn and the assistant's reply in one transaction. Each insert takes its
/// sequence number in the same statement (a leading write, so SQLite waits for the lock
/// instead of failing); two concurrent calls on one chat collide on the key and the loser
/// retries.
pub async fn append(
    store: &Store,
    owner: &str,
    chat_id: &str,
    prompt: &str,
    reply: &str,
    now: i64,
) -> Result<(), StoreError> {
    'attempt: for _ in 0..5 {
        let mut tx = store.begin().await?;
        for (role, content) in [("user", prompt), ("assistant", reply)] {
            let inserted = sqlx::query(
                "INSERT INTO chat_turns (owner, chat_id, seq, role, content, created_at) \
                 SELECT $1, $2, COALESCE(MAX(seq), 0) + 1, $3, $4, $5 FROM chat_turns WHERE owner = $1 AND chat_id = $2 \
                 ON CONFLICT DO NOTHING",
            )
            .bind(owner)
            .bind(chat_id)
            .bind(role)
            .bind(content)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            if inserted.rows_affected() != 1 {
                tx.rollback().await?;
                continue 'attempt;
            }
        }
        tx.commit().await?;
        return Ok(());
    }
    Err(StoreError::Corrupt("chat turn sequence kept colliding"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_ids() {
        assert!(valid_chat_id("c-1_a.b:2"));
        assert!(!valid_chat_id(""));
        assert!(!valid_chat_id("has space"));
        assert!(!valid_chat_id(&"a".repeat(129)));
        assert!(!valid_chat_id("ä"));
    }
}
