use std::sync::Mutex;
use std::time::Duration;

use shared::address::Address;

use crate::{
    Account, Chain, ChainError, ChainTransaction, Commitment, Confirmation, LatestBlockhash, SignatureInfo,
    SignatureStatus,
};

/// A chain whose status answers and block height are scripted: each status read takes the
/// next answer (the last one repeats).
struct Scripted {
    statuses: Mutex<Vec<Option<SignatureStatus>>>,
    height: u64,
    reads: Mutex<usize>,
}

fn status(level: Option<Commitment>, err: Option<&str>) -> Option<SignatureStatus> {
    Some(SignatureStatus { slot: 1, err: err.map(str::to_string), confirmation_status: level })
}

impl Scripted {
    fn new(statuses: Vec<Option<SignatureStatus>>, height: u64) -> Self {
        Scripted { statuses: Mutex::new(statuses), height, reads: Mutex::new(0) }
    }
}

impl Chain for Scripted {
    async fn latest_blockhash(&self) -> Result<LatestBlockhash, ChainError> {
        unimplemented!()
    }
    async fn send_transaction(&self, _: &[u8]) -> Result<String, ChainError> {
        unimplemented!()
    }
    async fn signature_statuses(&self, _: &[String]) -> Result<Vec<Option<SignatureStatus>>, ChainError> {
        *self.reads.lock().unwrap() += 1;
        let mut s = self.statuses.lock().unwrap();
        let next = if s.len() > 1 { s.remove(0) } else { s[0].clone() };
        Ok(vec![next])
    }
    async fn transaction(&self, _: &str) -> Result<Option<ChainTransaction>, ChainError> {
        unimplemented!()
    }
    async fn account(&self, _: &Address) -> Result<Option<Account>, ChainError> {
        unimplemented!()
    }
    async fn token_balance(&self, _: &Address) -> Result<Option<u64>, ChainError> {
        unimplemented!()
    }
    async fn balance(&self, _: &Address) -> Result<u64, ChainError> {
        unimplemented!()
    }
    async fn signatures_for_address(
        &self,
        _: &Address,
        _: Option<&str>,
        _: usize,
    ) -> Result<Vec<SignatureInfo>, ChainError> {
        unimplemented!()
    }
    async fn minimum_balance_for_rent_exemption(&self, _: usize) -> Result<u64, ChainError> {
        unimplemented!()
    }
    async fn block_height(&self) -> Result<u64, ChainError> {
        Ok(self.height)
    }
}

const LONG: Duration = Duration::from_secs(10);

#[tokio::test]
async fn waits_for_the_level_asked() {
    let chain = Scripted::new(
        vec![None, status(Some(Commitment::Confirmed), None), status(Some(Commitment::Finalized), None)],
        10,
    );
    assert_eq!(chain.confirm("s", 100, Commitment::Finalized, LONG).await, Ok(Confirmation::Confirmed));
    assert_eq!(*chain.reads.lock().unwrap(), 3);
    let chain = Scripted::new(vec![status(Some(Commitment::Confirmed), None)], 10);
    assert_eq!(chain.confirm("s", 100, Commitment::Processed, LONG).await, Ok(Confirmation::Confirmed));
}

#[tokio::test]
async fn failure_expiry_and_timeout() {
    let chain =
        Scripted::new(vec![status(Some(Commitment::Confirmed), Some("{\"InstructionError\":[0,{\"Custom\":1}]}"))], 10);
    assert_eq!(
        chain.confirm("s", 100, Commitment::Confirmed, LONG).await,
        Ok(Confirmation::Failed("{\"InstructionError\":[0,{\"Custom\":1}]}".into()))
    );
    // Unseen, and the height is past the last valid one.
    let chain = Scripted::new(vec![None], 200);
    assert_eq!(chain.confirm("s", 100, Commitment::Confirmed, LONG).await, Ok(Confirmation::Expired));
    // Landed at a lower level after the height passed: not expired, keeps waiting.
    let chain = Scripted::new(vec![status(Some(Commitment::Processed), None)], 200);
    let started = std::time::Instant::now();
    let waited = chain.confirm("s", 100, Commitment::Finalized, Duration::from_millis(300)).await;
    assert_eq!(waited, Ok(Confirmation::TimedOut));
    assert!(started.elapsed() < Duration::from_secs(2));
}
