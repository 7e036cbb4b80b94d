import type { Static } from '@sinclair/typebox'
import * as Type from '@sinclair/typebox'

// `accepts`: what a value must be, in words, for the messages that refuse a profile.
const Version = Type.String({ minLength: 1, description: 'version text', accepts: 'a version: a non-empty string' })
const Versions = Type.Record(Type.String({ minLength: 1 }), Version, { accepts: 'an object of names and their versions' })

/** One object type as a profile declares it; the service adds its `url`. */
export const ProfileObjectType = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: 2147483647, accepts: 'a whole number from 1 to 2147483647' }),
  app_label: Type.String({
    pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
    description: 'application machine name',
    accepts: 'letters, digits and _, not starting with a digit',
  }),
  model: Type.String({ pattern: '^[a-z0-9]+$', description: 'model machine name', accepts: 'lowercase letters and digits only' }),
  display: Type.String({ minLength: 1, accepts: 'a non-empty string' }),
}, { additionalProperties: false, accepts: 'an object type: an object of id, app_label, model and display' })

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
    'rq-workers-running': Type.Integer({ minimum: 0, accepts: 'a whole number from 0 up' }),
    'runtime-version': Version,
    'service-version': Version,
    /** The full version (`4.3.7-Docker-3.3.0`), served as the reference's `netbox-full-version`; the version when absent. */
    'service-full-version': Type.Optional(Version),
  }, { additionalProperties: false, accepts: 'an object of framework-version, installed-apps, plugins, rq-workers-running, runtime-version, service-version and optionally service-full-version' }),
  objectTypes: Type.Array(ProfileObjectType, { accepts: 'a list of object types' }),
}, { additionalProperties: false, accepts: 'an object of status and objectTypes' })

export type Profile = Static<typeof Profile>
export type ProfileObjectType = Static<typeof ProfileObjectType>
