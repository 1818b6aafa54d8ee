//! A STAND-IN GPU node, for tests on a machine without a GPU or a TDX host (docs/gpu.md). The
//! real agent is `gpu-node` (`crate::gpu_agent` runs it); this one plays the nodes the agent
//! never is, hostile ones ([`Behaviour`]), and records every byte a caller sent to `/v1/*`, so
//! a test can tell whether a prompt reached it. Like the agent it serves TLS on its own key
//! (the agent's TLS server), `GET /attest?nonce=` answered with a TDX quote from the development
//! quote PKI (`tests/dev-quote`) and the real H100 sample's report re-issued for the enclave's
//! nonce by a development GPU identity (`tests/dev-gpu`), and `/v1/*` forwarded to the real
//! model server. Only an enclave built with `dev-quotes` and told both development roots
//! trusts it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use dev_gpu::node::{Answer, DevNode};
use gpu_node::serve::TlsListener;
use shared::gpu::node::gpu_nonce;

/// The node's development PKIs' seeds.
pub(crate) const TDX_SEED: [u8; 32] = [0x4e; 32];
pub(crate) const GPU_SEED: [u8; 32] = [0x47; 32];

/// The genuine H100 report whose measurements the stand-in's GPU shows.
pub const H100_TEMPLATE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/test-vectors/nvidia-gpu-samples/go-nvattest-tools/test_raw_gpu_attestation_report.dat"
);
/// The RIMs that report's firmware was measured against (`svc gpu-reference` reads them).
pub const H100_DRIVER_RIM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/test-vectors/nvidia-gpu-samples/go-nvattest-tools/rim/NV_GPU_DRIVER_GH100_550.90.07.xml"
);
pub const H100_VBIOS_RIM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/test-vectors/nvidia-gpu-samples/go-nvattest-tools/rim/NV_GPU_VBIOS_1010_0200_882_96009F0001.xml"
);

/// How the node answers `/attest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Fresh evidence, bound as the protocol says.
    Honest,
    /// GPU reports made for another nonce (an earlier session's), in a fresh, correctly bound
    /// quote: what a node that cannot reach its GPU now would try.
    ReplayedGpuEvidence,
    /// One GPU in NVIDIA's devtools mode: a genuine, fresh report whose measurement differs.
    Devtools,
}

struct Node {
    behaviour: Behaviour,
    pin: [u8; 32],
    upstream: String,
    /// The node's quote PKI and its GPUs (one development device each, under one root).
    board: DevNode,
    received: Arc<Mutex<Vec<u8>>>,
    attestations: Arc<Mutex<usize>>,
    /// While set, completions never answer (a node that hangs mid-call).
    stalled: Arc<AtomicBool>,
}

/// A running stand-in node.
pub struct GpuNodeStandin {
    /// `https://127.0.0.1:<port>/v1`.
    pub base_url: String,
    /// SHA-256 of its TLS SubjectPublicKeyInfo (what the enclave pins).
    pub pin: [u8; 32],
    received: Arc<Mutex<Vec<u8>>>,
    attestations: Arc<Mutex<usize>>,
    stalled: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for GpuNodeStandin {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl GpuNodeStandin {
    /// Starts a node with `gpus` GPUs that forwards completions to `upstream` (a `/v1` URL).
    pub async fn start(behaviour: Behaviour, gpus: u8, upstream: &str) -> Self {
        let key = rcgen::KeyPair::generate().unwrap();
        let pin = gpu_node::serve::pin(&key);
        let acceptor = gpu_node::serve::tls(&key).unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let attestations = Arc::new(Mutex::new(0));
        let stalled = Arc::new(AtomicBool::new(false));
        let node = Arc::new(Node {
            behaviour,
            pin,
            upstream: upstream.trim_end_matches('/').to_string(),
            board: DevNode::new(&TDX_SEED, &GPU_SEED, gpus, std::fs::read(H100_TEMPLATE).unwrap()),
            received: received.clone(),
            attestations: attestations.clone(),
            stalled: stalled.clone(),
        });
        let app = Router::new()
            .route("/attest", axum::routing::get(attest))
            .route("/v1/{*rest}", axum::routing::post(forward))
            .with_state(node);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let listener = TlsListener { tcp: listener, acceptor };
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        GpuNodeStandin { base_url: format!("https://127.0.0.1:{port}/v1"), pin, received, attestations, stalled, task }
    }

    /// Makes completions hang (`true`) or answer again (`false`).
    pub fn stall(&self, on: bool) {
        self.stalled.store(on, Ordering::SeqCst);
    }

    /// Whether `needle` appears in anything a caller sent to `/v1/*`.
    pub fn received_contains(&self, needle: &str) -> bool {
        let received = self.received.lock().unwrap();
        received.windows(needle.len()).any(|w| w == needle.as_bytes())
    }

    /// Bytes received on `/v1/*` so far.
    pub fn received_len(&self) -> usize {
        self.received.lock().unwrap().len()
    }

    /// `/attest` answers given so far.
    pub fn attestations(&self) -> usize {
        *self.attestations.lock().unwrap()
    }

    /// The enclave configuration's `gpuNodes` entry for this node (see [`enclave_entry`]).
    pub fn enclave_entry(&self, gpus: usize, gpu_policy: &serde_json::Value) -> serde_json::Value {
        enclave_entry(&self.pin, gpus, gpu_policy)
    }
}

/// The enclave configuration's `gpuNodes` entry for a node on this module's development PKIs
/// whose TLS key hashes to `pin`: the dev placeholder measurements for its image, the
/// development roots, and `gpu` (from `svc gpu-reference`).
pub fn enclave_entry(pin: &[u8; 32], gpus: usize, gpu_policy: &serde_json::Value) -> serde_json::Value {
    let (tdx_root, gpu_root) = DevNode::new(&TDX_SEED, &GPU_SEED, 1, Vec::new()).dev_roots();
    let measurements: serde_json::Value = serde_json::to_value(crate::dev_measurements()).unwrap();
    serde_json::json!({
        "tlsPinSha256": hex::encode(pin),
        "measurements": measurements,
        "gpus": gpus,
        "gpu": gpu_policy,
        "devRoots": {"tdxRootDer": hex::encode(tdx_root), "gpuRootSpkiSha256": hex::encode(gpu_root)},
    })
}

#[derive(serde::Deserialize)]
struct AttestQuery {
    nonce: String,
}

async fn attest(State(node): State<Arc<Node>>, Query(q): Query<AttestQuery>) -> axum::response::Response {
    let Some(nonce) = hex::decode(&q.nonce).ok().and_then(|n| <[u8; 32]>::try_from(n).ok()) else {
        return (StatusCode::BAD_REQUEST, "nonce must be 64 hex").into_response();
    };
    *node.attestations.lock().unwrap() += 1;
    let now = shared::time::unix_now();
    let gpus = node.board.gpus.len();
    let mut answer = Answer::honest(&node.pin, &nonce, gpus, now - 60);
    match node.behaviour {
        Behaviour::Honest => {}
        Behaviour::ReplayedGpuEvidence => answer.gpu_nonce = gpu_nonce(&node.pin, &[0; 32]),
        Behaviour::Devtools => answer.devtools = Some(gpus - 1),
    }
    // The node image's measurements: the published development placeholders.
    axum::Json(node.board.evidence(&crate::dev_measurements(), &answer)).into_response()
}

/// Records the request and forwards it to the real model server.
async fn forward(
    State(node): State<Arc<Node>>,
    axum::extract::Path(rest): axum::extract::Path<String>,
    body: Bytes,
) -> axum::response::Response {
    node.received.lock().unwrap().extend_from_slice(&body);
    if node.stalled.load(Ordering::SeqCst) {
        std::future::pending::<()>().await;
    }
    let answer = reqwest::Client::new()
        .post(format!("{}/{rest}", node.upstream))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await;
    match answer {
        Ok(r) => {
            let status = StatusCode::from_u16(r.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
            (status, [("content-type", "application/json")], r.bytes().await.unwrap_or_default()).into_response()
        }
        Err(_) => StatusCode::BAD_GATEWAY.into_response(),
    }
}
