//! The relay's HTTP server holds nothing for slow or idle clients (issue 18 finding 7): a
//! request head sent a byte at a time is cut off at `headerReadSecs`, a body trickled in gets
//! 408 `request_timeout` at `bodyReadSecs`, and past `maxConnections` new connections wait
//! until one closes, while the relay keeps answering the others.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use e2e::{Stack, StackOptions};
use serde_json::json;

fn stack(server: serde_json::Value) -> Stack {
    Stack::start_with(StackOptions { relay: json!({"server": server}), ..StackOptions::default() })
}

fn connect(stack: &Stack) -> TcpStream {
    let stream = TcpStream::connect(stack.relay_url.trim_start_matches("http://")).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(8))).unwrap();
    stream
}

/// Reads until the server closes; what it sent.
fn read_to_close(stream: &mut TcpStream) -> String {
    let mut all = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => all.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("the server kept the connection open: {e}"),
        }
    }
    String::from_utf8_lossy(&all).into_owned()
}

#[test]
fn a_request_head_sent_a_byte_at_a_time_is_cut_off() {
    let stack = stack(json!({"headerReadSecs": 1}));
    let mut slow = connect(&stack);
    let started = Instant::now();
    let head = b"GET /health HTTP/1.1\r\nHost: relay\r\nX-Slow: ";
    let mut cut = false;
    for byte in head.iter().chain(b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".iter()) {
        if slow.write_all(&[*byte]).is_err() {
            cut = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        if started.elapsed() > Duration::from_secs(3) {
            break;
        }
    }
    if !cut {
        // The writes may still be buffered: the server must have closed its side.
        read_to_close(&mut slow);
    }
    assert!(started.elapsed() < Duration::from_secs(6), "cut after {:?}", started.elapsed());
    // Others are served all along.
    let mut other = connect(&stack);
    other.write_all(b"GET /health HTTP/1.1\r\nHost: relay\r\nConnection: close\r\n\r\n").unwrap();
    assert!(read_to_close(&mut other).starts_with("HTTP/1.1 200"));
}

#[test]
fn a_trickled_body_gets_408() {
    let stack = stack(json!({"bodyReadSecs": 1}));
    let mut stream = connect(&stack);
    let head = format!(
        "POST /tee/process HTTP/1.1\r\nHost: relay\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n{{\"encryptedPrompt\":",
        stack.api_key
    );
    stream.write_all(head.as_bytes()).unwrap();
    let started = Instant::now();
    let answer = read_to_close(&mut stream);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"error\":\"request_timeout\""), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
}

#[test]
fn past_the_connection_cap_new_connections_wait_for_a_free_one() {
    let stack = stack(json!({"maxConnections": 2, "headerReadSecs": 30}));
    let mut idle: Vec<TcpStream> = (0..2).map(|_| connect(&stack)).collect();
    // Let the relay accept both before the third arrives.
    std::thread::sleep(Duration::from_millis(300));
    let mut third = connect(&stack);
    third.set_read_timeout(Some(Duration::from_millis(800))).unwrap();
    third.write_all(b"GET /health HTTP/1.1\r\nHost: relay\r\nConnection: close\r\n\r\n").unwrap();
    let mut buf = [0u8; 64];
    let waited = third.read(&mut buf);
    assert!(waited.is_err(), "answered past the cap: {waited:?}");
    // One idle connection goes: the waiting one is accepted and answered.
    drop(idle.pop());
    third.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let answer = read_to_close(&mut third);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}
