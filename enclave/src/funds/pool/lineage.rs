//! Which book of each mint this boot may open: the head the freshness witness acknowledged
//! (DESIGN §13). Heads come from the secrets bundle at provisioning (the key holder's heads,
//! sealed to this boot's key, so they cannot be replayed from an earlier boot) and then from the
//! witness's signed answers. A head only moves forward: the witness's heads form one lineage
//! whose versions grow, so an answer naming an older head (a replayed one) changes nothing.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use shared::witness::{Head, WitnessAnswer, digest};

#[derive(Default)]
pub struct Lineage {
    heads: Mutex<HashMap<String, Head>>,
}

impl Lineage {
    /// The head of `mint` this boot knows (genesis before its first book).
    pub fn head(&self, mint: &str) -> Head {
        self.heads.lock().ok().and_then(|h| h.get(mint).cloned()).unwrap_or_else(Head::genesis)
    }

    /// The heads of a bundle, each taken unless this boot already knows a newer one.
    pub fn install(&self, heads: &BTreeMap<String, Head>) {
        for (mint, head) in heads {
            self.learn(mint, head);
        }
    }

    /// What a witness answer (already verified) says: its head, if newer than the one known.
    /// True when `head` is now this mint's head.
    pub fn learn_answer(&self, answer: &WitnessAnswer) -> bool {
        self.learn(&answer.mint, &answer.head)
    }

    fn learn(&self, mint: &str, head: &Head) -> bool {
        let Ok(mut heads) = self.heads.lock() else { return false };
        let known = heads.entry(mint.to_string()).or_insert_with(Head::genesis);
        if head.version > known.version {
            *known = head.clone();
        }
        known == head
    }

    /// The head `blob` (a stored book, or none for a mint's first) is, if it is this mint's
    /// head; `None` for any other book: an older one, a sibling, or none where a head exists.
    pub fn opens(&self, mint: &str, blob: Option<&str>) -> Option<Head> {
        let head = self.head(mint);
        let named = match blob {
            None => Head::genesis().digest,
            Some(blob) => digest(blob),
        };
        (named == head.digest).then_some(head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(head: &Head) -> WitnessAnswer {
        WitnessAnswer {
            mint: "m".into(),
            parent: Head::genesis(),
            next: head.clone(),
            requester: String::new(),
            head: head.clone(),
            witness: String::new(),
            signature: String::new(),
        }
    }

    #[test]
    fn only_the_witnessed_head_opens_and_heads_only_move_forward() {
        let lineage = Lineage::default();
        let (one, two) = (Head::of(1, "one"), Head::of(2, "two"));
        // Before any head: only "no book" opens.
        assert_eq!(lineage.opens("m", None), Some(Head::genesis()));
        assert_eq!(lineage.opens("m", Some("one")), None);
        lineage.install(&[("m".to_string(), one.clone())].into());
        // Rows: (book offered, opens as).
        let rows = [(None, None), (Some("one"), Some(one.clone())), (Some("sibling"), None), (Some("two"), None)];
        for (blob, opens) in rows {
            assert_eq!(lineage.opens("m", blob), opens, "{blob:?}");
        }
        assert!(lineage.learn_answer(&answer(&two)));
        assert_eq!(lineage.opens("m", Some("two")), Some(two.clone()));
        // A replayed answer naming the older head, or a bundle that is behind, is ignored.
        assert!(!lineage.learn_answer(&answer(&one)));
        lineage.install(&[("m".to_string(), one)].into());
        assert_eq!(lineage.head("m"), two);
        assert_eq!(lineage.head("other"), Head::genesis());
    }
}
