import t, { type Test } from 'tap'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse, stringify } from 'yaml'
import { askAlone, freePort } from '../helpers/http.ts'
import { logged, start } from '../helpers/process.ts'
import { needs } from '../helpers/programs.ts'
import { DEADLINE_MS, until } from '../helpers/wait.ts'

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

t.test('the dashboard loads as a file, through the HTTP API or the Import page: every reference is to its own variables or Grafana\'s', async (t) => {
  const text = read('grafana-dashboard.json')
  const dashboard = JSON.parse(text) as { __inputs?: unknown, templating: { list: Array<{ name: string, type: string, query: unknown }> }, panels: Array<{ title: string, datasource: unknown, targets: Array<{ datasource: unknown }> }> }
  t.equal(dashboard.__inputs, undefined, 'no inputs, which only the Import page fills in')
  const variables = dashboard.templating.list.map((variable) => variable.name)
  t.same(dashboard.templating.list[0], { name: 'datasource', label: 'Prometheus', type: 'datasource', query: 'prometheus', current: {}, hide: 0, refresh: 1, regex: '', includeAll: false, multi: false },
    'the Prometheus to read, a variable: the default one unless another is picked')
  const references = new Set([...text.matchAll(/\$\{?(\w+)/g)].map((match) => match[1]!))
  t.same([...references].filter((name) => !variables.includes(name) && !['__rate_interval', '__all'].includes(name)), [], `every $ reference is a variable of its own or Grafana's: ${[...references].join(', ')}`)
  // Grafana's reference to the variable, not a template string.
  const datasource = { type: 'prometheus', uid: '${datasource}' } // eslint-disable-line no-template-curly-in-string
  for (const panel of dashboard.panels) {
    t.same([panel.datasource, ...panel.targets.map((target) => target.datasource)], Array(panel.targets.length + 1).fill(datasource), `${panel.title}: the chosen Prometheus`)
  }
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

/**
 * The rehearsal runs fifteen times faster than README.md's: every interval of the committed files
 * (15 s) becomes a second, and every duration of the rules and the outage is divided by 15.
 */
const SPEED = 15
const faster = (duration: string) => duration.replace(/(\d+)m/g, (_, minutes) => `${Number(minutes) * 60 / SPEED}s`)
/** Seconds of the fast rehearsal as README.md's minutes and seconds. */
const asRehearsed = (seconds: number) => {
  const whole = Math.round(seconds * SPEED)
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`
}

/** An alert's changes of state, each with when it was seen (seconds since the schedule was read) and what the API answered then. */
type Changes = Array<{ state: string, at: number, status: number }>

t.test('a rehearsed outage: each alert fires during what it describes and resolves after it; a first refused reload fires; every dashboard query has a series', { skip }, async (t) => {
  const dir = t.testdir()
  // No fault until Prometheus sees the service up; then outage.json, re-read as it changes, its
  // window made fifteen times shorter.
  const faultsFile = join(dir, 'outage.json')
  writeFileSync(faultsFile, JSON.stringify({ rules: [] }))
  const outage = JSON.parse(read('outage.json'))
  const window = outage.rules[0].schedule as { from: number, to: number }
  outage.rules[0].schedule = { from: window.from / SPEED, to: window.to / SPEED }
  const service = await start(t, { FAULTS: faultsFile, METRICS: 'true' })
  const target = `http://127.0.0.1:${service.port}/api/status/`

  const exporterPort = await freePort()
  copyFileSync(join(FOLDER, 'blackbox.yml'), join(dir, 'blackbox.yml'))
  const exporter = run(t, 'prometheus-blackbox-exporter', [`--config.file=${join(dir, 'blackbox.yml')}`, `--web.listen-address=127.0.0.1:${exporterPort}`])

  // The committed configuration and rules, fifteen times faster, with this test's addresses.
  const alerts = parse(read('alerts.yml')) as { groups: Array<{ rules: Rule[] }> }
  for (const rule of alerts.groups.flatMap((group) => group.rules)) {
    rule.expr = faster(rule.expr)
    if (rule.for !== undefined) rule.for = faster(rule.for)
  }
  writeFileSync(join(dir, 'alerts.yml'), stringify(alerts))
  const config = parse(read('prometheus.yml'))
  t.same(config.global, { scrape_interval: '15s', evaluation_interval: '15s' })
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
  await until('the probe to find the service up', async () => {
    running()
    const { result } = await api(prometheusPort, '/api/v1/query?query=probe_success').catch(() => ({ result: [] }))
    return result[0]?.value[1] === '1'
  })

  // Every alert's changes of state as Prometheus reports them, from the moment the schedule is read.
  const changes = new Map<string, Changes>()
  let since = 0
  const watch = async () => {
    running()
    const { alerts } = await api(prometheusPort, '/api/v1/alerts').catch(() => ({ alerts: [] }))
    const states = new Map((alerts as Array<{ labels: { alertname: string }, state: string }>).map((alert) => [alert.labels.alertname, alert.state]))
    for (const name of new Set([...changes.keys(), ...states.keys()])) {
      const state = states.get(name) ?? 'inactive'
      const seen = changes.get(name) ?? []
      if (seen.at(-1)?.state !== state) seen.push({ state, at: (performance.now() - since) / 1000, status: (await askAlone(service.port, '/api/status/')).status })
      changes.set(name, seen)
    }
  }
  const states = (name: string) => (changes.get(name) ?? []).map((change) => change.state)
  const until2 = (what: string, done: () => boolean) => until(what, async () => { await watch(); return done() })
  writeFileSync(faultsFile, JSON.stringify(outage))
  await logged(service, '"msg":"faults reloaded"')
  since = performance.now()
  const outageAlerts = ['InventoryApiDown', 'InventoryServerErrors', 'InventoryFaultsInjected']
  await until2('the outage\'s alerts to fire and resolve', () => outageAlerts.every((name) => states(name).join() === 'pending,firing,inactive' || states(name).join() === 'firing,inactive'))
  for (const name of outageAlerts) {
    const seen = changes.get(name)!
    const firing = seen.find((change) => change.state === 'firing')!
    const resolved = seen.at(-1)!
    t.equal(firing.status, 503, `${name} fires while the API answers 503`)
    t.equal(resolved.status, 200, `${name} resolves once it answers 200 again`)
    t.comment(`${name}: ${seen.map((change) => `${change.state} at ${asRehearsed(change.at)}`).join(', ')}; the 503s from ${asRehearsed(window.from / SPEED)} to ${asRehearsed(window.to / SPEED)}`)
  }
  t.same(states('InventoryApiDown'), ['pending', 'firing', 'inactive'], 'the down alert pending, firing, then resolved')
  t.same(states('InventoryReloadFailed'), [], 'no reload refused yet')

  // One bad edit, this process's first refused reload, fires; a good one resolves.
  writeFileSync(faultsFile, '{"rules": [')
  await logged(service, 'The faults in use stay')
  since = performance.now()
  await until2('InventoryReloadFailed to fire', () => states('InventoryReloadFailed').includes('firing'))
  const reloads = service.output().split('"msg":"faults reloaded"').length - 1
  writeFileSync(faultsFile, JSON.stringify({ rules: [] }))
  await logged(service, '"msg":"faults reloaded"', reloads + 1)
  await until2('InventoryReloadFailed to resolve', () => states('InventoryReloadFailed').at(-1) === 'inactive')
  t.same(states('InventoryReloadFailed'), ['firing', 'inactive'], 'the first refused reload fires at once; the next taken resolves it')
  t.comment(`InventoryReloadFailed: ${changes.get('InventoryReloadFailed')!.map((change) => `${change.state} at ${asRehearsed(change.at)}`).join(', ')} after the bad edit`)

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
