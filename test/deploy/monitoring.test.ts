import t, { type Test } from 'tap'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse, stringify } from 'yaml'
import { askAlone, DEADLINE_MS, freePort } from '../helpers/http.ts'
import { logged, start } from '../helpers/process.ts'
import { needs } from '../helpers/programs.ts'
import { until } from '../helpers/wait.ts'

// deploy/monitoring, as a monitoring team would use it: promtool's checks and the rules' unit tests,
// then Debian's Prometheus and blackbox exporter for real against the service, with the outage of
// outage.json made short, and the dashboard's every query asked of that Prometheus.

const FOLDER = new URL('../../deploy/monitoring', import.meta.url).pathname
const skip = needs('prometheus') || needs('blackbox-exporter')
const read = (file: string) => readFileSync(join(FOLDER, file), 'utf8')
const promtool = (...args: string[]) => spawnSync('promtool', args, { cwd: FOLDER, encoding: 'utf8' })

interface Rule { alert: string, expr: string, for?: string }
const RULES = (parse(read('alerts.yml')) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((group) => group.rules)

t.test('promtool checks the configuration and the rules, and every rule passes its unit tests', { skip }, async (t) => {
  for (const args of [['check', 'config', 'prometheus.yml'], ['check', 'rules', 'alerts.yml'], ['test', 'rules', 'alerts.test.yml']]) {
    const checked = promtool(...args)
    t.equal(checked.status, 0, `promtool ${args.join(' ')}: ${checked.stdout}${checked.stderr}`)
  }
  const tests = parse(read('alerts.test.yml')) as { tests: Array<{ alert_rule_test: Array<{ alertname: string, exp_alerts: unknown[] }> }> }
  const firing = new Set(tests.tests.flatMap((test) => test.alert_rule_test.filter((check) => check.exp_alerts.length > 0).map((check) => check.alertname)))
  t.same(RULES.map((rule) => rule.alert).filter((alert) => !firing.has(alert)), [], 'every alert is shown firing by a unit test')
})

/** A program of the test's, stopped when the test ends; its output kept for a failure's message. */
function run (t: Test, command: string, args: string[]): { child: ChildProcess, output: () => string } {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (chunk) => { output += chunk })
  child.stderr!.on('data', (chunk) => { output += chunk })
  t.teardown(() => { child.kill('SIGTERM') })
  return { child, output: () => output }
}

/** Prometheus's HTTP API: the data of a GET. */
async function api (port: number, path: string): Promise<any> {
  const answer = await globalThis.fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(DEADLINE_MS) })
  if (answer.status !== 200) throw new Error(`Prometheus ${path}: ${answer.status} ${await answer.text()}`)
  return ((await answer.json()) as { data: unknown }).data
}

t.test('a rehearsed outage: the down alert pending, then firing while the API answers 503, then resolved after; every dashboard query has a series', { skip }, async (t) => {
  const dir = t.testdir()
  // No fault until Prometheus sees the service up; then outage.json, re-read as it changes, with its
  // 503 window from 2 s to 32 s after that instead of minutes.
  const faultsFile = join(dir, 'outage.json')
  writeFileSync(faultsFile, JSON.stringify({ rules: [] }))
  const outage = JSON.parse(read('outage.json'))
  outage.rules[0].schedule = { from: 2, to: 32 }
  const service = await start(t, { FAULTS: faultsFile, METRICS: 'true' })
  const target = `http://127.0.0.1:${service.port}/api/status/`

  const exporterPort = await freePort()
  copyFileSync(join(FOLDER, 'blackbox.yml'), join(dir, 'blackbox.yml'))
  const exporter = run(t, 'prometheus-blackbox-exporter', [`--config.file=${join(dir, 'blackbox.yml')}`, `--web.listen-address=127.0.0.1:${exporterPort}`])

  // The committed configuration and rules, with every interval a second and the down alert's wait two.
  const alerts = parse(read('alerts.yml')) as { groups: Array<{ rules: Rule[] }> }
  for (const rule of alerts.groups.flatMap((group) => group.rules)) if (rule.alert === 'InventoryApiDown') rule.for = '2s'
  writeFileSync(join(dir, 'alerts.yml'), stringify(alerts))
  const config = parse(read('prometheus.yml'))
  config.global = { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' }
  const [scrape, probe] = config.scrape_configs
  scrape.static_configs[0].targets = [`127.0.0.1:${service.port}`]
  probe.static_configs[0].targets = [target]
  probe.relabel_configs.find((relabel: { target_label: string }) => relabel.target_label === '__address__').replacement = `127.0.0.1:${exporterPort}`
  writeFileSync(join(dir, 'prometheus.yml'), stringify(config))
  const prometheusPort = await freePort()
  const prometheus = run(t, 'prometheus', [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${prometheusPort}`, '--log.level=warn'])
  const running = () => {
    for (const [name, program] of [['prometheus', prometheus], ['blackbox exporter', exporter]] as const) {
      if (program.child.exitCode !== null) throw new Error(`${name} exited: ${program.output()}`)
    }
  }

  // The alert's states as Prometheus reports them, each with what the API answered when it was first seen.
  const seen: Array<[string, number]> = []
  const stateOf = async () => {
    running()
    const { alerts } = await api(prometheusPort, '/api/v1/alerts').catch(() => ({ alerts: [] }))
    return (alerts as Array<{ labels: { alertname: string, instance: string }, state: string }>)
      .find((alert) => alert.labels.alertname === 'InventoryApiDown' && alert.labels.instance === target)?.state ?? 'inactive'
  }
  const watch = async (state: string) => {
    await until(`InventoryApiDown ${state}`, async () => {
      const now = await stateOf()
      if (now !== seen.at(-1)?.[0]) seen.push([now, (await askAlone(service.port, '/api/status/')).status])
      return now === state
    }, 90_000)
  }
  await until('the probe to find the service up', async () => {
    running()
    const { result } = await api(prometheusPort, '/api/v1/query?query=probe_success').catch(() => ({ result: [] }))
    return result[0]?.value[1] === '1'
  }, 60_000)
  await watch('inactive')
  writeFileSync(faultsFile, JSON.stringify(outage))
  await logged(service, '"msg":"faults reloaded"')
  await watch('firing')
  await watch('inactive')
  const states = seen.filter(([state], i) => i === 0 || state !== seen[i - 1]![0])
  t.same(states.map(([state]) => state), ['inactive', 'pending', 'firing', 'inactive'], 'pending, then firing, then resolved')
  t.equal(states[2]![1], 503, 'firing while the API answers 503: inside the scheduled window')
  t.equal(states[3]![1], 200, 'resolved once it answers again')

  // Every query of the dashboard, over what this run produced: each gets a series.
  const dashboard = JSON.parse(read('grafana-dashboard.json')) as { panels: Array<{ title: string, targets: Array<{ expr: string }> }> }
  for (const panel of dashboard.panels) {
    for (const { expr } of panel.targets) {
      const query = expr.replaceAll('$job', '.*').replaceAll('$__rate_interval', '1m')
      const { result } = await api(prometheusPort, `/api/v1/query?query=${encodeURIComponent(query)}`)
      t.ok(result.length > 0, `${panel.title}: ${expr}`)
    }
  }
})
