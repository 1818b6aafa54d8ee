// The TD's measurements against the reference values (shared/src/attest/policy/measurements.rs):
// MRTD, RTMR1 and RTMR2 equal one published image, RTMR0 is in the platform allowlist, and the
// three host-chosen registers are zero or equal their pinned value.

import { hex } from '../bytes.js';
import { Outcome, REJECT } from '../document.js';

const ZERO = '0'.repeat(96);

const list = (values) => (values.length ? values.join(' | ') : '(none published)');

/// `m`: parsed measurements (../measurements.js); `td`: the TD 1.0 fields of the report.
export function checkMeasurements(m, td) {
  const out = new Outcome();
  const mrtd = hex(td.mrTd);
  const image = m.images.find((i) => i.mrtd === mrtd);
  if (!image) {
    out.record('mrtd', false, list(m.images.map((i) => i.mrtd)), mrtd);
    out.fail(REJECT, 'mrtd_unknown');
  } else {
    out.record('mrtd', true, image.mrtd, mrtd, `image ${image.name}`);
    out.compare('rtmr1', 'rtmr1_mismatch', image.rtmr1, hex(td.rtMr1));
    out.compare('rtmr2', 'rtmr2_mismatch', image.rtmr2, hex(td.rtMr2));
  }
  const rtmr0 = hex(td.rtMr0);
  const rtmr0Ok = m.rtmr0.some((r) => r.value === rtmr0);
  out.record('rtmr0', rtmr0Ok, list(m.rtmr0.map((r) => r.value)), rtmr0);
  if (!rtmr0Ok) out.fail(REJECT, 'rtmr0_unknown');
  for (const [name, reason, pinned, actual] of [
    ['mr_config_id', 'mrconfigid_not_allowed', m.mrConfigId, td.mrConfigId],
    ['mr_owner', 'mrowner_not_allowed', m.mrOwner, td.mrOwner],
    ['mr_owner_config', 'mrownerconfig_not_allowed', m.mrOwnerConfig, td.mrOwnerConfig],
  ]) {
    out.compare(name, reason, pinned ?? ZERO, hex(actual));
  }
  return out;
}
