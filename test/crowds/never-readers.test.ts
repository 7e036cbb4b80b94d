import t from 'tap'
import { neverReadingCrowd } from '../helpers/hostile.ts'
import { needs } from '../helpers/programs.ts'

// 5,000 clients that pipeline and never read put the kernel's TCP memory under pressure for every
// socket on the machine, so the files of test/crowds/ run alone, one after another (tap's `serial`).

t.test('5,000 connections that pipeline new pages and never read leave the replica alive and serving, until the send timeout closes them', { skip: needs('python3') }, async (t) => {
  await neverReadingCrowd(t, {})
})
