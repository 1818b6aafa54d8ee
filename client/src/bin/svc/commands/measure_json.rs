//! `svc measure DIR --json`: the summary `svc measure` prints, as one JSON document (fields in
//! docs/cli-json.md). Digests are lowercase hex, as in a measurements file.

use serde_json::{Value, json};
use shared::measure::{ImageMeasurements, Rtmr0Measurement, rtmr};

/// RTMR0 computed for a host profile: its folder name, its memory size in bytes, the result.
pub struct Rtmr0<'a> {
    pub profile: &'a str,
    pub memory: u64,
    pub measurement: &'a Rtmr0Measurement,
}

/// The summary; with `diagnose`, also every TDVF section and every RTMR event.
pub fn summary(m: &ImageMeasurements, rtmr0: Option<Rtmr0<'_>>, cmdline: &str, diagnose: bool) -> Value {
    let mut doc = json!({
        "mrtd": {"singlePass": hex::encode(m.mrtd_single_pass), "twoPass": hex::encode(m.mrtd_two_pass)},
        "rtmr0": rtmr0.as_ref().map(|r| json!({
            "profile": r.profile, "memoryBytes": r.memory, "value": hex::encode(r.measurement.rtmr0),
        })),
        "rtmr1": hex::encode(m.rtmr1),
        "rtmr2": hex::encode(m.rtmr2),
        "imageId": hex::encode(m.image_id),
        "cmdline": cmdline,
        "loadOptions": shared::measure::load_options(cmdline),
    });
    if diagnose {
        let sections: Vec<Value> = m
            .sections
            .iter()
            .map(|s| {
                json!({"kind": format!("{:?}", s.kind), "gpa": s.gpa, "memSize": s.mem_size, "rawSize": s.raw_size,
                       "dataOffset": s.data_offset, "extends": s.extends(), "pageAug": s.page_aug()})
            })
            .collect();
        doc["sections"] = json!(sections);
        doc["events"] = json!({
            "rtmr0": rtmr0.map(|r| events(&r.measurement.events)),
            "rtmr1": events(&m.rtmr1_events),
            "rtmr2": events(&m.rtmr2_events),
        });
    }
    doc
}

fn events(list: &[rtmr::Event]) -> Vec<Value> {
    list.iter().map(|e| json!({"digest": hex::encode(e.digest), "description": e.description})).collect()
}
