import t from 'tap'
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DEFAULT_PROFILE_FILE, loadProfile } from '../lib/inventory/profile.ts'
import { DEFAULT_PROFILE } from './helper.ts'

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
    ['not-json.json', '{"status": ', 'is not valid JSON (Unexpected end of JSON input)'],
    ['array.json', '[]', 'the document: Expected object (found [])'],
    ['no-status.json', { objectTypes: [] }, '/status: Expected required property'],
    ['extra.json', edited((p) => { p.extra = 1 }), '/extra: Unexpected property (found 1)'],
    ['workers.json', edited((p) => { p.status['rq-workers-running'] = '1' }), '/status/rq-workers-running: Expected integer (found "1")'],
    ['version.json', edited((p) => { p.status.plugins.netbox_bgp = 16 }), '/status/plugins/netbox_bgp: Expected string (found 16)'],
    ['model.json', edited((p) => { p.objectTypes[3].model = 'IP-Prefix' }),
      '/objectTypes/3/model: Expected string to match \'^[a-z0-9]+$\' (found "IP-Prefix")'],
    ['id.json', edited((p) => { p.objectTypes[0].id = 0 }), '/objectTypes/0/id: Expected integer to be greater or equal to 1 (found 0)'],
    ['display.json', edited((p) => { delete p.objectTypes[7].display }), '/objectTypes/7/display: Expected required property'],
    ['same-id.json', edited((p) => { p.objectTypes[9].id = 3 }), '/objectTypes/9/id: id 3 is already used by /objectTypes/2'],
    ['same-pair.json', edited((p) => { p.objectTypes[5].model = 'group' }),
      '/objectTypes/5: app_label "auth" with model "group" is already declared by /objectTypes/4'],
    ['two-versions.json', edited((p) => { p.status.plugins.netbox_bgp = '0.17.0' }),
      '/status/plugins/netbox_bgp: version "0.17.0" differs from /status/installed-apps/netbox_bgp ("0.16.0")'],
  ]
  for (const [name, content, problem] of cases) {
    const file = write(name, content)
    t.throws(() => loadProfile(file), { name: 'ProfileError', message: `Bad profile ${file}: ${problem}` }, name)
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
