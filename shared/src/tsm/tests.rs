use super::fake::{FakeTsm, echo_quote};
use super::*;

fn fast() -> Retry {
    Retry { attempts: 3, delay: Duration::from_millis(1) }
}

fn assert_cleaned_up(fake: &FakeTsm) {
    assert!(fake.items.lock().unwrap().is_empty(), "report items left behind");
    let log = fake.log.lock().unwrap();
    let made = log.iter().filter(|l| l.starts_with("mkdir")).count();
    let removed = log.iter().filter(|l| l.starts_with("rmdir")).count();
    assert_eq!(made, removed);
}

#[test]
fn quote_carries_report_data_and_item_is_removed() {
    let fake = FakeTsm::new(Box::new(echo_quote));
    let rd = [7u8; 64];
    let q = get_quote(&fake, &rd, fast()).unwrap();
    assert_eq!(crate::quote::report_data(&q).unwrap(), rd);
    assert_cleaned_up(&fake);
}

#[test]
fn no_provider_is_enxio() {
    let mut fake = FakeTsm::new(Box::new(echo_quote));
    fake.provider = None;
    assert_eq!(get_quote(&fake, &[0; 64], fast()), Err(TsmError::NoProvider));
}

#[test]
fn wrong_provider_is_refused() {
    let mut fake = FakeTsm::new(Box::new(echo_quote));
    fake.provider = Some("sev_guest".into());
    assert_eq!(get_quote(&fake, &[0; 64], fast()), Err(TsmError::WrongProvider("sev_guest".into())));
    assert_cleaned_up(&fake);
}

#[test]
fn busy_is_retried_within_bound() {
    let fake = FakeTsm::new(Box::new(echo_quote));
    *fake.busy_reads.lock().unwrap() = 2;
    assert!(get_quote(&fake, &[1; 64], fast()).is_ok());
    assert_cleaned_up(&fake);

    *fake.busy_reads.lock().unwrap() = 100;
    assert_eq!(get_quote(&fake, &[1; 64], fast()), Err(TsmError::Busy(3)));
    assert_cleaned_up(&fake);
}

#[test]
fn silently_lost_inblob_write_is_caught_by_generation() {
    let fake = FakeTsm::new(Box::new(echo_quote));
    *fake.lost_commits.lock().unwrap() = 1;
    // With the write lost, outblob sees no 64-byte inblob: EINVAL, an I/O error, not a quote.
    assert!(matches!(get_quote(&fake, &[1; 64], fast()), Err(TsmError::Io(_))));
    assert_cleaned_up(&fake);
}

#[test]
fn interleaved_writer_is_caught_by_generation() {
    let mut fake = FakeTsm::new(Box::new(echo_quote));
    fake.interloper = true;
    assert_eq!(get_quote(&fake, &[1; 64], fast()), Err(TsmError::GenerationMismatch { before: 0, after: 2 }));
    assert_cleaned_up(&fake);
}

#[test]
fn quote_must_echo_report_data_and_have_sane_length() {
    let fake = FakeTsm::new(Box::new(|_| echo_quote(&[9; 64])));
    assert_eq!(get_quote(&fake, &[1; 64], fast()), Err(TsmError::ReportDataMismatch));
    let fake = FakeTsm::new(Box::new(|_| Vec::new()));
    assert_eq!(get_quote(&fake, &[1; 64], fast()), Err(TsmError::BadQuoteLength(0)));
    let fake = FakeTsm::new(Box::new(|_| vec![0; MAX_QUOTE_LEN + 1]));
    assert_eq!(get_quote(&fake, &[1; 64], fast()), Err(TsmError::BadQuoteLength(MAX_QUOTE_LEN + 1)));
}

#[test]
fn fake_models_kernel_input_rules() {
    let fake = FakeTsm::new(Box::new(echo_quote));
    fake.mkdir("x").unwrap();
    assert_eq!(fake.write("x", "inblob", &[0; 65]).unwrap_err().raw_os_error(), Some(27));
    fake.write("x", "inblob", &[0; 32]).unwrap();
    assert_eq!(fake.read("x", "outblob").unwrap_err().raw_os_error(), Some(22));
    assert_eq!(fake.read("x", "auxblob").unwrap_err().raw_os_error(), Some(2));
}

#[test]
fn std_fs_paths_and_missing_root() {
    let dir = tempfile::tempdir().unwrap();
    let missing = StdFs { root: dir.path().join("absent") };
    // configfs not mounted or tsm not loaded: the report directory does not exist.
    assert_eq!(get_quote(&missing, &[0; 64], fast()), Err(TsmError::NoProvider));

    let fs = StdFs { root: dir.path().to_path_buf() };
    fs.mkdir("item").unwrap();
    std::fs::write(dir.path().join("item/provider"), "tdx_guest\n").unwrap();
    std::fs::write(dir.path().join("item/inblob"), "").unwrap();
    assert_eq!(fs.read("item", "provider").unwrap(), b"tdx_guest\n");
    fs.write("item", "inblob", &[5; 64]).unwrap();
    assert_eq!(std::fs::read(dir.path().join("item/inblob")).unwrap(), vec![5; 64]);
    // An attribute that does not exist is not created.
    assert!(fs.write("item", "nonexistent", b"x").is_err());
    assert!(!dir.path().join("item/nonexistent").exists());
}
