import { http } from '../builtins.ts'
import { loadConfig, type Config } from '../config.ts'

/** Where to reach a service listening on every address: loopback, of the same family. */
const ANY_ADDRESS: Record<string, string> = { '0.0.0.0': '127.0.0.1', '::': '::1' }

/**
 * The container's HEALTHCHECK, with no curl in the image: exits 0 when the service on
 * this host answers GET /healthz with 200 (a probe path: any Host, no token needed). It asks
 * the address the service listens on (HOST), the environment being the service's own.
 */
function check (): void {
  let config: Config
  try {
    config = loadConfig(process.env)
  } catch (error) {
    return unhealthy(error as Error)
  }
  http.request({ host: ANY_ADDRESS[config.host] ?? config.host, port: config.port, path: '/healthz', timeout: 2000 }, (res) => {
    res.resume()
    process.exitCode = res.statusCode === 200 ? 0 : 1
  })
    .on('timeout', function (this: ReturnType<typeof http.request>) { this.destroy(new Error('timed out')) })
    .on('error', unhealthy)
    .end()
}

function unhealthy (error: Error): void {
  console.error(`healthcheck failed: ${error.message}`)
  process.exitCode = 1
}

check()
