// Where the API key lives in the browser: sessionStorage of this tab only (docs/web.md). It
// is gone when the tab closes, is never in a cookie (so no request carries it unless the page
// adds it), and never in localStorage, which outlives the session on disk.

const KEY = 'svc.apiKey';

export const apiKey = () => sessionStorage.getItem(KEY);
export const setApiKey = (key) => sessionStorage.setItem(KEY, key);
export const signOut = () => sessionStorage.removeItem(KEY);
