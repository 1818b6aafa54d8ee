// The published reference values, schema version 1 (docs/attestation.md "Measurements file";
// shared/src/attest/measurements.rs): checked as strictly as the Rust side reads them, with
// unknown fields refused and every register 96 lowercase hex characters.

export class MeasurementsError extends Error {}

const MR = /^[0-9a-f]{96}$/;

function fields(value, allowed, required, where) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new MeasurementsError(`${where} is not an object`);
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw new MeasurementsError(`${where}: unknown field \`${key}\``);
  }
  for (const key of required) {
    if (!(key in value)) throw new MeasurementsError(`${where}: missing field \`${key}\``);
  }
}

function mr(value, where) {
  if (typeof value !== 'string' || !MR.test(value)) throw new MeasurementsError(`${where}: expected 96 lowercase hex characters`);
  return value;
}

/// `null` or absent means the register must be zero; a value pins it.
function optionalMr(value, where) {
  return value === undefined || value === null ? null : mr(value, where);
}

function u32(value, where) {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new MeasurementsError(`${where}: expected an unsigned 32-bit integer`);
  return value;
}

/// The measurements file as the verifier uses it; throws MeasurementsError if it is not valid.
export function parseMeasurements(value) {
  const top = ['schemaVersion', 'images', 'rtmr0', 'mrConfigId', 'mrOwner', 'mrOwnerConfig', 'minTcbEvaluationDataNumber'];
  fields(value, top, ['schemaVersion', 'images', 'rtmr0'], 'measurements');
  const version = u32(value.schemaVersion, 'schemaVersion');
  if (version !== 1) throw new MeasurementsError(`measurements schemaVersion ${version} is not supported (expected 1)`);
  if (!Array.isArray(value.images)) throw new MeasurementsError('images is not a list');
  if (!Array.isArray(value.rtmr0)) throw new MeasurementsError('rtmr0 is not a list');
  const images = value.images.map((img, i) => {
    const where = `images[${i}]`;
    fields(img, ['name', 'mrtd', 'rtmr1', 'rtmr2'], ['name', 'mrtd', 'rtmr1', 'rtmr2'], where);
    if (typeof img.name !== 'string') throw new MeasurementsError(`${where}.name is not a string`);
    return { name: img.name, mrtd: mr(img.mrtd, `${where}.mrtd`), rtmr1: mr(img.rtmr1, `${where}.rtmr1`), rtmr2: mr(img.rtmr2, `${where}.rtmr2`) };
  });
  const rtmr0 = value.rtmr0.map((entry, i) => {
    const where = `rtmr0[${i}]`;
    fields(entry, ['platform', 'value'], ['platform', 'value'], where);
    if (typeof entry.platform !== 'string') throw new MeasurementsError(`${where}.platform is not a string`);
    return { platform: entry.platform, value: mr(entry.value, `${where}.value`) };
  });
  const min = value.minTcbEvaluationDataNumber;
  return {
    schemaVersion: 1,
    images,
    rtmr0,
    mrConfigId: optionalMr(value.mrConfigId, 'mrConfigId'),
    mrOwner: optionalMr(value.mrOwner, 'mrOwner'),
    mrOwnerConfig: optionalMr(value.mrOwnerConfig, 'mrOwnerConfig'),
    minTcbEvaluationDataNumber: min === undefined || min === null ? null : u32(min, 'minTcbEvaluationDataNumber'),
  };
}
