// The conversation lives only in this browser (localStorage), never on the relay; "Clear"
// removes it. Each entry: {role, text, receipt?, at}.

const KEY = 'svc.chat.history';
const MAX_ENTRIES = 200;

export function load() {
  try {
    const entries = JSON.parse(localStorage.getItem(KEY) ?? '[]');
    return Array.isArray(entries) ? entries : [];
  } catch {
    return [];
  }
}

export function save(entries) {
  localStorage.setItem(KEY, JSON.stringify(entries.slice(-MAX_ENTRIES)));
}

export function clear() {
  localStorage.removeItem(KEY);
}
