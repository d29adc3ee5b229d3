/** The part of autocannon's API the HTTP bench uses (the package ships no types). */
declare module 'autocannon' {
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    workers?: number;
    pipelining?: number;
    method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
    headers?: Record<string, string>;
    body?: string;
  }
  interface Result {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    errors: number;
    non2xx: number;
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
