/**
 * The SDK clients' retry strategy (shared/aws/clients.ts gives it to every client): the SDK's
 * standard mode — 3 attempts, a throttling or transient error retried after a full-jitter backoff
 * of random × min(base × 2^retry, 20 s), base 1 s after throttling and 50 ms otherwise — with the
 * wait done by an injected `sleep`. In Lambda that is real time; the embedded environment passes
 * its clock's, so on the stepped (virtual) clock a retry happens later in virtual time, as in AWS,
 * instead of at the same virtual instant (the SDK's own strategy waits with setTimeout). The SDK's
 * retry quota (a client-wide budget of retries) is not kept: a function's clients live for one
 * container and each call stops after its 3 attempts.
 */

/** Attempts per call, the first included (SDK standard mode's default). */
export const SdkMaxAttempts = 3;
/** Backoff base after a throttling error, and after any other retryable error (ms). */
export const SdkThrottlingBackoffBaseMs = 1_000;
export const SdkBackoffBaseMs = 50;
/** Longest backoff (ms). */
export const SdkMaxBackoffMs = 20_000;

/** The part of the SDK's RetryErrorInfo (@smithy/types) this strategy reads. */
interface RetryErrorInfo {
  errorType: 'TRANSIENT' | 'THROTTLING' | 'SERVER_ERROR' | 'CLIENT_ERROR';
}

/** The SDK's RetryToken: which retry this is. */
class Token {
  constructor(private readonly count: number) {}
  getRetryCount(): number {
    return this.count;
  }
  /** The wait is already over when the middleware asks (it was done in refreshRetryTokenForRetry). */
  getRetryDelay(): number {
    return 0;
  }
}

/** The SDK's RetryStrategyV2 (module doc). */
export class SleepingRetryStrategy {
  readonly mode = 'standard';

  constructor(
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
    private readonly random: () => number = Math.random,
  ) {}

  async acquireInitialRetryToken(): Promise<Token> {
    return new Token(0);
  }

  /** Waits the backoff, then allows the next attempt. @throws when the error is not retryable or the attempts are used up. */
  async refreshRetryTokenForRetry(token: Token, info: RetryErrorInfo): Promise<Token> {
    const retry = token.getRetryCount();
    if ((info.errorType !== 'THROTTLING' && info.errorType !== 'TRANSIENT') || retry + 1 >= SdkMaxAttempts) throw new Error('No retry token available');
    await this.sleep(this.backoffMs(retry, info.errorType === 'THROTTLING'));
    return new Token(retry + 1);
  }

  recordSuccess(): void {}

  /** Full jitter over the exponential bound. */
  backoffMs(retry: number, throttled: boolean): number {
    const base = throttled ? SdkThrottlingBackoffBaseMs : SdkBackoffBaseMs;
    return Math.floor(this.random() * Math.min(base * 2 ** retry, SdkMaxBackoffMs));
  }
}
