// The relay's JSON API, same origin only (the page's CSP allows no other). Every failure
// becomes an ApiError carrying the contract's code, and `sentence` says it in words.

export class ApiError extends Error {
  constructor(status, code, message, retryAfter) {
    super(message || code);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

export async function call(method, path, { body, key } = {}) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (key) headers.Authorization = `Bearer ${key}`;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
      referrerPolicy: 'no-referrer',
    });
  } catch {
    throw new ApiError(0, 'network', 'the relay could not be reached');
  }
  let value = null;
  try {
    value = await response.json();
  } catch {
    if (response.ok) throw new ApiError(response.status, 'malformed', 'the relay answered with something that is not JSON');
  }
  if (!response.ok) {
    const retry = Number(response.headers.get('Retry-After'));
    throw new ApiError(response.status, value?.error ?? `http_${response.status}`, value?.message, Number.isFinite(retry) && retry > 0 ? retry : undefined);
  }
  return value;
}

/// What an error means to the person using the page.
export function sentence(error) {
  if (!(error instanceof ApiError)) return `Something went wrong: ${error?.message ?? error}.`;
  switch (error.code) {
    case 'network':
      return 'The service could not be reached. Check your connection and try again.';
    case 'free_trial_exhausted':
      return 'You have used today’s free messages. Sign in with a wallet and deposit to keep chatting.';
    case 'rate_limited':
      return `Too many requests. Try again in ${error.retryAfter ?? 'a few'} seconds.`;
    case 'gpu_not_configured':
      return 'This model has no GPU node configured yet. Choose another model.';
    case 'gpu_not_attested':
      return 'The GPU node for this model did not prove itself, so nothing was sent to it. Try again later.';
    case 'tee_unreachable':
      return 'The enclave cannot be reached right now. Nothing was sent. Try again in a moment.';
    case 'insufficient_balance':
    case 'payment_required':
      return 'Your balance is too low for this call. Deposit on the Account page.';
    case 'unauthorized':
      return 'Your API key was not accepted. Sign in again on the Account page.';
    case 'forbidden':
      return 'Your API key is not allowed to do this.';
    default:
      if (error.status === 402) return 'Payment is required: your balance is too low. Deposit on the Account page.';
      if (error.status === 429) return `Too many requests. Try again in ${error.retryAfter ?? 'a few'} seconds.`;
      if (error.status === 401) return 'Your API key was not accepted. Sign in again on the Account page.';
      return `The service refused the request (${error.code}${error.message && error.message !== error.code ? `: ${error.message}` : ''}).`;
  }
}
