//! Private inference: a chat or agent request from envelope to sealed reply (`chat.rs`), the
//! replay guard (`replay.rs`), the served models (`models.rs`) and the gate every GPU node
//! passes before it sees a prompt (`gpu_node.rs`).

pub mod chat;
pub mod gpu_node;
pub mod models;
pub mod replay;
