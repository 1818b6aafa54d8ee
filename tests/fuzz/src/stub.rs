//! A stand-in HTTP/1.1 server on loopback that answers each request with the next scripted
//! answer (status and body), or a fixed fallback once the script is used up. The model target
//! points the model client and the tools' upstreams at it, so their real HTTP and parsing code
//! reads whatever the fuzzer wrote. The server lives as long as the fuzzing process.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex, PoisonError};

/// One scripted answer: HTTP status and body.
pub type Answer = (u16, Vec<u8>);

struct Script {
    answers: VecDeque<Answer>,
    fallback: Answer,
}

pub struct Stub {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    script: Arc<Mutex<Script>>,
}

impl Stub {
    /// Starts the server; `fallback` answers every request the script does not.
    pub fn start(fallback: Answer) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let base = format!("http://{}", listener.local_addr().expect("a bound address"));
        let script = Arc::new(Mutex::new(Script { answers: VecDeque::new(), fallback }));
        let shared = script.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let script = shared.clone();
                std::thread::spawn(move || serve(conn, &script));
            }
        });
        Stub { base, script }
    }

    /// Replaces the script.
    pub fn load(&self, answers: Vec<Answer>) {
        self.script.lock().unwrap_or_else(PoisonError::into_inner).answers = answers.into();
    }

    fn next(script: &Mutex<Script>) -> Answer {
        let mut s = script.lock().unwrap_or_else(PoisonError::into_inner);
        match s.answers.pop_front() {
            Some(a) => a,
            None => s.fallback.clone(),
        }
    }
}

/// Answers requests on one kept-alive connection until the client closes it.
fn serve(conn: TcpStream, script: &Mutex<Script>) {
    let _ = conn.set_nodelay(true);
    let Ok(mut writer) = conn.try_clone() else { return };
    let mut reader = BufReader::new(conn);
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        let mut first = true;
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let l = line.trim_end();
            if l.is_empty() && !first {
                break;
            }
            first = false;
            if let Some((name, value)) = l.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let (status, body) = Stub::next(script);
        let head = format!(
            "HTTP/1.1 {status} Fuzz\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        if writer.write_all(head.as_bytes()).and_then(|()| writer.write_all(&body)).is_err() {
            return;
        }
    }
}
