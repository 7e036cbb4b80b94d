import t from 'tap'
import { neverReadingCrowd } from '../helpers/hostile.ts'
import { needs } from '../helpers/programs.ts'

// The crowd of never-readers.test.ts against WORKERS=2: each worker holds its share, and the primary leads.

t.test('5,000 connections that pipeline new pages and never read leave WORKERS=2 alive and serving, until the send timeout closes them', { skip: needs('python3') }, async (t) => {
  await neverReadingCrowd(t, { WORKERS: '2' })
})
