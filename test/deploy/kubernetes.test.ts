import t from 'tap'
import { spawnSync } from 'node:child_process'
import { readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { parse, parseAllDocuments } from 'yaml'
import { Deployment } from 'kubernetes-models/apps/v1'
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1'
import { ConfigMap, Service } from 'kubernetes-models/v1'
import { PodMonitor, Probe, PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1'
import { loadConfig } from '../../lib/config.ts'
import { DEFAULT_PROFILE_FILE } from '../../lib/inventory/profile.ts'
import { PROBE_PATHS } from '../../lib/paths.ts'
import { shutdownBudgetMs } from '../../lib/process/stopping.ts'
import { needs } from '../helpers/programs.ts'

// deploy/kubernetes, built offline by `kubectl kustomize` with no flags, as `kubectl apply -k`
// builds it, checked against the Kubernetes API schemas and the service's own configuration.
const BASE = new URL('../../deploy/kubernetes', import.meta.url).pathname
function kustomize (folder: string) {
  const built = spawnSync('kubectl', ['kustomize', folder], { encoding: 'utf8' })
  if (built.error !== undefined || built.status !== 0) throw new Error(`kubectl kustomize ${folder} failed: ${built.error?.message ?? built.stderr}`)
  return parseAllDocuments(built.stdout).map((document) => document.toJS())
}
const skip = needs('kubectl')
const objects = skip === false ? kustomize(BASE) : []
const MODELS = {
  'apps/v1 Deployment': Deployment,
  'v1 Service': Service,
  'v1 ConfigMap': ConfigMap,
  'autoscaling/v2 HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
} as const
const one = <K extends keyof typeof MODELS>(kind: K) => objects.find((object) => `${object.apiVersion} ${object.kind}` === kind)

t.test('every object is valid against the Kubernetes API schemas', { skip }, async (t) => {
  t.same(objects.map((object) => `${object.apiVersion} ${object.kind}`).sort(), Object.keys(MODELS).sort(), 'one of each')
  for (const object of objects) {
    const Model = MODELS[`${object.apiVersion} ${object.kind}` as keyof typeof MODELS]
    t.doesNotThrow(() => new Model(object).validate(), `${object.kind} ${object.metadata.name}`)
  }
  t.throws(() => new Deployment({ ...one('apps/v1 Deployment'), spec: { replicas: 'two' } }).validate(), 'and the validation bites')
})

t.test('the Deployment agrees with the service: environment, ports, probes, grace period, security', { skip }, async (t) => {
  const deployment = one('apps/v1 Deployment')
  const pod = deployment.spec.template
  const [container] = pod.spec.containers
  const env = Object.fromEntries(container.env.map(({ name, value }: { name: string, value: string }) => [name, value]))
  const config = loadConfig(env)
  t.equal(config.profileWatch, true, 'PROFILE_WATCH, so that a ConfigMap update is served')
  t.equal(config.metrics, true)
  const port = container.ports.find((candidate: { name: string }) => candidate.name === 'http')
  t.equal(port.containerPort, config.port, 'the port the service listens on')
  t.equal(pod.metadata.annotations['prometheus.io/port'], String(config.port))
  t.equal(pod.metadata.annotations['prometheus.io/path'], '/metrics')
  t.same([container.readinessProbe.httpGet, container.livenessProbe.httpGet, container.startupProbe.httpGet],
    [{ path: '/readyz', port: 'http' }, { path: '/healthz', port: 'http' }, { path: '/healthz', port: 'http' }])
  t.ok(PROBE_PATHS.includes(container.readinessProbe.httpGet.path) && PROBE_PATHS.includes(container.livenessProbe.httpGet.path))
  const readinessLagMs = container.readinessProbe.periodSeconds * container.readinessProbe.failureThreshold * 1000
  t.ok(readinessLagMs <= config.drainDelayMs, `out of rotation (${readinessLagMs} ms) before the drain delay (${config.drainDelayMs} ms) is over`)
  t.ok(pod.spec.terminationGracePeriodSeconds * 1000 > shutdownBudgetMs(config),
    `grace period ${pod.spec.terminationGracePeriodSeconds} s above the shutdown budget (${shutdownBudgetMs(config)} ms)`)
  t.match(pod.spec.securityContext, { runAsNonRoot: true, runAsUser: 1000 })
  t.same(container.securityContext, { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } })
  t.match(container.resources, { requests: { cpu: '250m', memory: '192Mi' }, limits: { memory: '256Mi' } })
  t.equal(env.NODE_OPTIONS, '--max-old-space-size=64', 'the heap the memory limit was measured with (docs/performance.md)')

  const mount = container.volumeMounts.find((candidate: { name: string }) => candidate.name === 'profile')
  t.notOk('subPath' in mount, 'a folder mount, which the kubelet updates (a subPath mount is never updated)')
  t.equal(config.profile, `${mount.mountPath}/profile.json`, 'PROFILE is the mounted ConfigMap\'s file')
  const volume = pod.spec.volumes.find((candidate: { name: string }) => candidate.name === 'profile')
  const configMap = one('v1 ConfigMap')
  t.equal(volume.configMap.name, configMap.metadata.name)
  t.equal(configMap.data['profile.json'], readFileSync(DEFAULT_PROFILE_FILE, 'utf8'), 'the embedded default profile, as is')
})

t.test('the base\'s profile is the embedded default profile, byte for byte', { skip }, async (t) => {
  t.equal(readFileSync(join(BASE, 'profile.json'), 'utf8'), readFileSync(DEFAULT_PROFILE_FILE, 'utf8'))
})

t.test('the overlay of deploy/kubernetes/README.md, where it puts it (outside the repository, beside a clone), serves the user\'s own image and profile', { skip }, async (t) => {
  const guide = readFileSync(new URL('../../deploy/kubernetes/README.md', import.meta.url), 'utf8')
  const overlayYaml = /```yaml\n# my-deployment\/kustomization\.yaml[^\n]*\n([^]*?)```/.exec(guide)![1]!
  // A folder outside the repository: the clone (a link to this one) and the overlay beside it.
  const folder = t.testdir({ 'my-deployment': { 'kustomization.yaml': overlayYaml, 'my-profile.json': '{"mine":true}\n' } })
  symlinkSync(new URL('../..', import.meta.url).pathname, join(folder, 'inventory-status-api'))
  const built = kustomize(join(folder, 'my-deployment'))
  const deployment = built.find((object) => object.kind === 'Deployment')
  t.equal(deployment.spec.template.spec.containers[0].image, 'registry.example.com/team/inventory-status-api:1.2.3')
  t.equal(deployment.spec.template.spec.containers[0].imagePullPolicy, 'IfNotPresent', 'an image loaded into kind or minikube is used, not pulled')
  const configMap = built.find((object) => object.kind === 'ConfigMap')
  t.same(configMap.data, { 'profile.json': '{"mine":true}\n' })
  t.equal(configMap.metadata.name, 'inventory-profile', 'the name the Deployment mounts')
})

t.test('the Service, the autoscaler and the disruption budget point at the Deployment\'s pods', { skip }, async (t) => {
  const deployment = one('apps/v1 Deployment')
  const labels = deployment.spec.template.metadata.labels
  t.same(deployment.spec.selector.matchLabels, labels)
  const service = one('v1 Service')
  t.same(service.spec.selector, labels)
  t.same(service.spec.ports, [{ name: 'http', port: 80, targetPort: 'http' }])
  const autoscaler = one('autoscaling/v2 HorizontalPodAutoscaler')
  t.same(autoscaler.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name })
  t.ok(autoscaler.spec.minReplicas >= 2, 'two replicas at least: one can drain while the other serves')
  const budget = one('policy/v1 PodDisruptionBudget')
  t.same(budget.spec.selector.matchLabels, labels)
  t.ok(budget.spec.minAvailable < autoscaler.spec.minReplicas, 'a node can always be drained')
})

t.test('the monitoring component of deploy/kubernetes/README.md adds a PodMonitor, a Probe and the alerts as a PrometheusRule, each valid and pointing at the pods', { skip }, async (t) => {
  const guide = readFileSync(new URL('../../deploy/kubernetes/README.md', import.meta.url), 'utf8')
  const overlayYaml = /```yaml\n# my-monitored\/kustomization\.yaml\n([^]*?)```/.exec(guide)![1]!
  const folder = t.testdir({ 'my-monitored': { 'kustomization.yaml': overlayYaml } })
  symlinkSync(new URL('../..', import.meta.url).pathname, join(folder, 'inventory-status-api'))
  const built = kustomize(join(folder, 'my-monitored'))
  const find = (kind: string) => built.find((object) => object.apiVersion === 'monitoring.coreos.com/v1' && object.kind === kind)
  const [podMonitor, probe, rule] = [find('PodMonitor'), find('Probe'), find('PrometheusRule')]
  t.doesNotThrow(() => new PodMonitor(podMonitor).validate(), 'PodMonitor')
  t.doesNotThrow(() => new Probe(probe).validate(), 'Probe')
  t.doesNotThrow(() => new PrometheusRule(rule).validate(), 'PrometheusRule')
  t.same(built.filter((object) => !object.apiVersion.startsWith('monitoring.coreos.com/')).length, objects.length, 'and the base, as it is')

  const deployment = built.find((object) => object.kind === 'Deployment')
  const pod = deployment.spec.template
  t.match(pod.metadata.labels, podMonitor.spec.selector.matchLabels, 'the PodMonitor selects the Deployment\'s pods')
  const [endpoint] = podMonitor.spec.podMetricsEndpoints
  t.same([endpoint.path, pod.spec.containers[0].ports.some((port: { name: string }) => port.name === endpoint.port)], ['/metrics', true])
  t.equal(pod.metadata.labels[podMonitor.spec.jobLabel], 'inventory-status-api', 'its job, as the dashboard and the alerts name it')
  const alerts = parse(readFileSync(new URL('../../deploy/monitoring/alerts.yml', import.meta.url), 'utf8'))
  t.same(rule.spec, alerts, 'the alerts of deploy/monitoring/alerts.yml, the same groups')
  t.match(rule.spec.groups[0].rules[0].expr, `job="${probe.spec.jobName}"`, 'the probe\'s job, as the down alert selects it')
  const blackbox = parse(readFileSync(new URL('../../deploy/monitoring/blackbox.yml', import.meta.url), 'utf8'))
  t.ok(probe.spec.module in blackbox.modules, 'a module of deploy/monitoring/blackbox.yml')
})
