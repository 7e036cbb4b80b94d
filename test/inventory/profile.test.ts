import t from 'tap'
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DEFAULT_PROFILE_FILE, loadProfile } from '../../lib/inventory/profile.ts'
import { DEFAULT_PROFILE } from '../helpers/build.ts'
import { thrown } from '../helpers/thrown.ts'

t.test('the embedded default profile is the reference data, as is', async (t) => {
  // The SHA-256 of the reference's default-inventory.json, byte for byte: the repository stands alone.
  const sha256 = createHash('sha256').update(readFileSync(DEFAULT_PROFILE_FILE)).digest('hex')
  t.equal(sha256, '3a313b6bf503d052c38cc567b2929bfc12ea6175f4b0a98c354c77589ca0f7c1')
  t.equal(DEFAULT_PROFILE.objectTypes.length, 163)
})

t.test('a bad profile is refused with the file, the field and the problem', async (t) => {
  const dir = t.testdir()
  const write = (name: string, content: unknown) => {
    const file = join(dir, name)
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content))
    return file
  }
  const edited = (edit: (profile: any) => void) => {
    const profile = structuredClone(DEFAULT_PROFILE)
    edit(profile)
    return profile
  }
  const cases: Array<[string, unknown, string]> = [
    ['not-json.json', '{"status": ', 'is not valid JSON at line 1, column 12: Unexpected end of JSON input'],
    ['comma.json', '{\n  "status": {},\n  "objectTypes": [\n    {"id": 1}\n    {"id": 2}\n  ]\n}', 'is not valid JSON at line 5, column 5: Expected \',\' or \']\' after array element'],
    ['token.json', '{\n  "status": {\n    "plugins": x\n  }\n}', 'is not valid JSON at line 3, column 16: Unexpected token \'x\''],
    ['middle.json', '{"status": {"plugins": {"netbox_bgp": "0.16.0", "netbox_topology_views": x, "netbox_secrets": "2.1.0", "netbox_floorplan": "0.6.0"}}}',
      'is not valid JSON at line 1, column 74: Unexpected token \'x\''],
    ['trailing.json', '{"status": {}, "objectTypes": [],}\n', 'is not valid JSON at line 1, column 34: Expected double-quoted property name'],
    ['empty.json', '', 'is not valid JSON at line 1, column 1: Unexpected end of JSON input'],
    ['array.json', '[]', 'the profile must be an object of status and objectTypes; got []'],
    ['no-status.json', { objectTypes: [] }, '/status is missing; it must be an object of framework-version, installed-apps, plugins, rq-workers-running, runtime-version, service-version and optionally service-full-version'],
    ['extra.json', edited((p) => { p.extra = 1 }), '/extra is not expected; the object around it must be an object of status and objectTypes'],
    ['workers.json', edited((p) => { p.status['rq-workers-running'] = '1' }), '/status/rq-workers-running must be a whole number from 0 up; got "1"'],
    ['version.json', edited((p) => { p.status.plugins.netbox_bgp = 16 }), '/status/plugins/netbox_bgp must be a version: a non-empty string; got 16'],
    ['model.json', edited((p) => { p.objectTypes[3].model = 'IP-Prefix' }),
      '/objectTypes/3/model must be lowercase letters and digits only; got "IP-Prefix"'],
    ['id.json', edited((p) => { p.objectTypes[0].id = 0 }), '/objectTypes/0/id must be a whole number from 1 to 2147483647; got 0'],
    ['types.json', edited((p) => { p.objectTypes = { 1: p.objectTypes[1] } }), '/objectTypes must be a list of object types; got {"1":{"id":2,"app_label":"circuits","model":"providernetwor…'],
    ['type.json', edited((p) => { p.objectTypes[2] = 'dcim.site' }), '/objectTypes/2 must be an object type: an object of id, app_label, model and display; got "dcim.site"'],
    ['app.json', edited((p) => { p.objectTypes[2].app_label = '2fa' }), '/objectTypes/2/app_label must be letters, digits and _, not starting with a digit; got "2fa"'],
    ['display.json', edited((p) => { delete p.objectTypes[7].display }), '/objectTypes/7/display is missing; it must be a non-empty string'],
    ['same-id.json', edited((p) => { p.objectTypes[9].id = 3 }), '/objectTypes/9/id must be unique; got 3, the id of /objectTypes/2'],
    ['same-pair.json', edited((p) => { p.objectTypes[5].model = 'group' }),
      '/objectTypes/5 must be a unique app_label and model; got "auth" and "group", as /objectTypes/4'],
    ['two-versions.json', edited((p) => { p.status.plugins.netbox_bgp = '0.17.0' }),
      '/status/plugins/netbox_bgp must be the version in /status/installed-apps/netbox_bgp ("0.16.0"); got "0.17.0"'],
  ]
  for (const [name, content, problem] of cases) {
    const file = write(name, content)
    const error = thrown(() => loadProfile(file))
    t.same([error?.name, error?.message], ['ProfileError', `Bad profile ${file}: ${problem}`], name)
  }
  const missing = join(dir, 'missing.json')
  t.throws(() => loadProfile(missing), { message: `Bad profile ${missing}: cannot be read (ENOENT: no such file or directory, open '${missing}')` })
})

t.test('plugins may be left out of installed-apps', async (t) => {
  const profile = structuredClone(DEFAULT_PROFILE)
  delete profile.status['installed-apps'].netbox_bgp
  const file = join(t.testdir(), 'profile.json')
  writeFileSync(file, JSON.stringify(profile))
  t.same(loadProfile(file), profile)
})

t.test('a profile an editor saved with a byte order mark is read as without', async (t) => {
  const file = join(t.testdir(), 'profile.json')
  writeFileSync(file, `\uFEFF${JSON.stringify(DEFAULT_PROFILE, null, 2)}`)
  t.same(loadProfile(file), DEFAULT_PROFILE)
})
