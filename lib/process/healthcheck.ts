import { request } from 'node:http'
import { loadConfig } from '../config.ts'

/**
 * The container's HEALTHCHECK, with no curl in the image: exits 0 when the service on
 * this host answers GET /healthz with 200 (a probe path: any Host, no token needed).
 */
const config = loadConfig(process.env)
request({ host: '127.0.0.1', port: config.port, path: '/healthz', timeout: 2000 }, (res) => {
  res.resume()
  process.exitCode = res.statusCode === 200 ? 0 : 1
})
  .on('timeout', function (this: ReturnType<typeof request>) { this.destroy(new Error('timed out')) })
  .on('error', (error) => {
    console.error(`healthcheck failed: ${error.message}`)
    process.exitCode = 1
  })
  .end()
