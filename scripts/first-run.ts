/**
 * The request `npm start` sends for each poller's first run, so that it does not wait for
 * the first tick: the dashboard's "Run now" (POST /pollers/:name/run, admin), as
 * `trigger=startup`, which the run history shows as such and the audit log leaves out (no
 * operator asked for it). Node-free: a workerd test sends this very request to the Worker.
 */
export function firstRunRequest(base: string, poller: string, adminToken: string): Request {
  return new Request(`${base}/pollers/${encodeURIComponent(poller)}/run?trigger=startup`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}` },
  });
}
