import { Type, type Static } from '@sinclair/typebox'

const Version = Type.String({ minLength: 1, description: 'version text' })
const Versions = Type.Record(Type.String({ minLength: 1 }), Version)

/** One object type as a profile declares it; the service adds its `url`. */
export const ProfileObjectType = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: 2147483647 }),
  app_label: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'application machine name' }),
  model: Type.String({ pattern: '^[a-z0-9]+$', description: 'model machine name: lowercase, no separators' }),
  display: Type.String({ minLength: 1 }),
}, { additionalProperties: false })

/**
 * An inventory profile: the shape of data/default-inventory.json.
 * `installed-apps` holds the components; a plugin may be repeated there with the
 * same version or left out, since the served `installed-apps` is the union.
 */
export const Profile = Type.Object({
  status: Type.Object({
    'framework-version': Version,
    'installed-apps': Versions,
    plugins: Versions,
    'rq-workers-running': Type.Integer({ minimum: 0 }),
    'runtime-version': Version,
    'service-version': Version,
  }, { additionalProperties: false }),
  objectTypes: Type.Array(ProfileObjectType),
}, { additionalProperties: false })

export type Profile = Static<typeof Profile>
export type ProfileObjectType = Static<typeof ProfileObjectType>
