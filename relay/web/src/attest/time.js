// Unix time from the date forms the verifier reads: RFC 3339 (collateral JSON) and the X.509
// UTCTime / GeneralizedTime of certificates and CRLs. Whole seconds, UTC, no Date parsing
// (whose leniency differs between browsers).

// Howard Hinnant's days-from-civil (proleptic Gregorian calendar).
export function daysFromCivil(y, m, d) {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const daysInMonth = (y, m) => [31, y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];

/// Seconds since the epoch, or null when a field is out of range (seconds may be 60, a leap
/// second, counted as 59 as chrono's timestamp does).
export function unixTime(y, mo, d, h, mi, s) {
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 60) return null;
  return daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + Math.min(s, 59);
}

/// `YYYY-MM-DDTHH:MM:SS[.fff]Z` only, as shared::time::parse_rfc3339 (the document's
/// `validUntil`); null otherwise.
export function parseRfc3339Utc(text) {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\..*)?Z$/s.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number);
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return null;
  const t = daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
  return t >= 0 ? t : null;
}

/// RFC 3339 with any offset, as dcap-qvl parses the collateral's dates (chrono); throws with
/// dcap-qvl's message otherwise, or when the time is before the epoch.
export function parseRfc3339(text) {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/.exec(text);
  const t = m && unixTime(+m[1], +m[2], +m[3], +m[4], +m[5], +m[6]);
  if (t === null || t === undefined || (m[9] && (+m[10] > 23 || +m[11] > 59))) {
    throw new Error(`Failed to parse RFC3339 datetime: input is not a valid RFC 3339 date: ${text}`);
  }
  const offset = m[9] ? (m[9] === '+' ? 1 : -1) * (+m[10] * 3600 + +m[11] * 60) : 0;
  const unix = t - offset;
  if (unix < 0) throw new Error('RFC3339 datetime is before Unix epoch');
  return unix;
}
