/**
 * Polls `f` every `pollMs` until it returns a value (not undefined), for the real tier's waits on
 * the API server's controllers. @throws Error naming `what` after `timeoutMs` (real ms).
 */
export async function until<T>(what: string, f: () => Promise<T | undefined>, timeoutMs = 120_000, pollMs = 300): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
