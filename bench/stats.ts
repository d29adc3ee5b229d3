/** Small statistics helpers shared by the bench sections. */

export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Times `fn` `n` times sequentially after `warmup` runs; returns the latencies in ms. */
export async function timeSeq(n: number, fn: (i: number) => Promise<unknown>, warmup = 20): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn(i);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}

/**
 * Times two implementations of the same work interleaved (a, b, a, b, …), so drift in the
 * machine's load affects both alike. Returns both sample sets.
 */
export async function timePair(n: number, a: (i: number) => Promise<unknown>, b: (i: number) => Promise<unknown>, warmup = 20) {
  for (let i = 0; i < warmup; i++) {
    await a(i);
    await b(i);
  }
  const sa: number[] = [];
  const sb: number[] = [];
  for (let i = 0; i < n; i++) {
    let t0 = performance.now();
    await a(i);
    sa.push(performance.now() - t0);
    t0 = performance.now();
    await b(i);
    sb.push(performance.now() - t0);
  }
  return [sa, sb] as const;
}

/** Operations per second with `concurrency` workers running `fn` for about `ms` milliseconds. */
export async function throughput(fn: (i: number) => Promise<unknown>, opts: { concurrency?: number; ms?: number } = {}): Promise<number> {
  const concurrency = opts.concurrency ?? 16;
  const until = performance.now() + (opts.ms ?? 2000);
  let done = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      while (performance.now() < until) {
        await fn(done * concurrency + w);
        done++;
      }
    }),
  );
  return done / ((performance.now() - t0) / 1000);
}
