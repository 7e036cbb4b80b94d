/** Where a serving process is on its way out: read by /readyz and by the HTTP server. */
export class Lifecycle {
  /** False from the shutdown signal on: /readyz answers 503 so that load balancers stop sending. */
  ready = true
  /** True once connections are being closed: every response carries `Connection: close`. */
  closing = false
}
