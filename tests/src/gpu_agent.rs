//! The real GPU node agent (`svc-gpu-node`, the `gpu-node` crate, built with its feature `dev`)
//! on the development PKIs of [`crate::gpu_node`], stapling OCSP answers from a stand-in of
//! NVIDIA's responder. Only the evidence sources are development ones: its TLS, its protocol,
//! its stapling and its forwarding are the node's.

use std::time::{Duration, Instant};

use dev_gpu::node::DevNode;
use serde_json::json;

use crate::Process;
use crate::gpu_node::{GPU_SEED, H100_TEMPLATE, TDX_SEED};

pub struct GpuNodeAgent {
    /// `https://127.0.0.1:<port>/v1`.
    pub base_url: String,
    /// What the agent printed as `tlsPinSha256=`.
    pub pin: [u8; 32],
    /// What the agent asked NVIDIA's responder (stood in for).
    pub ocsp: standins::nvidia_ocsp::Recorder,
    _responder: standins::Running,
    _process: Process,
    _dir: tempfile::TempDir,
}

impl GpuNodeAgent {
    /// Starts the agent with `gpus` development GPUs in front of `upstream` (a `/v1` URL).
    pub async fn start(gpus: u8, upstream: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let board = DevNode::new(&TDX_SEED, &GPU_SEED, gpus, Vec::new());
        let answers = board.gpus.iter().flat_map(|g| g.ocsp(shared::time::unix_now() - 60)).collect();
        let (responder, ocsp) = standins::nvidia_ocsp::start(answers).await;
        let port = crate::free_port();
        let config = json!({
            "listen": format!("127.0.0.1:{port}"),
            "tlsKey": dir.path().join("tls-key.pem"),
            "modelServer": upstream,
            "ocspUrl": format!("{}/", responder.base_url),
            "dev": {
                "tdxSeed": hex::encode(TDX_SEED),
                "gpuSeed": hex::encode(GPU_SEED),
                "gpus": gpus,
                "template": H100_TEMPLATE,
                "measurements": concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/dev.json"),
            },
        });
        let path = dir.path().join("gpu-node.json");
        std::fs::write(&path, config.to_string()).unwrap();
        let process = Process::spawn_binary("svc-gpu-node", &path, dir.path().join("gpu-node.log"));
        let deadline = Instant::now() + Duration::from_secs(30);
        let pin = loop {
            let log = process.log_text();
            if let Some(pin) = log.split("tlsPinSha256=").nth(1).and_then(|rest| rest.get(..64)) {
                break <[u8; 32]>::try_from(hex::decode(pin).unwrap()).unwrap();
            }
            assert!(Instant::now() < deadline, "svc-gpu-node did not start: {log}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        GpuNodeAgent {
            base_url: format!("https://127.0.0.1:{port}/v1"),
            pin,
            ocsp,
            _responder: responder,
            _process: process,
            _dir: dir,
        }
    }
}
