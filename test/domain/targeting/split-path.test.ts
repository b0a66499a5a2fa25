import { describe, expect, test } from 'bun:test'
import { splitPath } from '../../../src/domain/targeting/rule-operators.ts'

/** The reading of a path a character at a time, as flagd's evaluator reads it (docs/targeting.md#rules). */
function slowSplit(path: string): string[] {
  const parts: string[] = []
  let current = ''
  for (let i = 0; i < path.length; i++) {
    const c = path[i] as string
    if (c === '\\' && (path[i + 1] === '.' || path[i + 1] === '/' || path[i + 1] === '\\')) {
      current += path[i + 1]
      i++
    } else if (c === '.') {
      parts.push(current)
      current = ''
    } else current += c
  }
  if (parts.length !== path.length) parts.push(current)
  return parts
}

describe('splitPath', () => {
  test('reads the paths of the rule language', () => {
    expect(splitPath('country')).toEqual(['country'])
    expect(splitPath('user.plan.tier')).toEqual(['user', 'plan', 'tier'])
    expect(splitPath('a..b')).toEqual(['a', '', 'b'])
    expect(splitPath('a.')).toEqual(['a', ''])
    expect(splitPath('.a')).toEqual(['', 'a'])
    expect(splitPath('')).toEqual([])
    expect(splitPath('.')).toEqual([''])
    expect(splitPath('..')).toEqual(['', ''])
    expect(splitPath('a\\.b.c')).toEqual(['a.b', 'c'])
    expect(splitPath('a\\\\.b')).toEqual(['a\\', 'b'])
    expect(splitPath('a\\/b')).toEqual(['a/b'])
    expect(splitPath('a\\b')).toEqual(['a\\b'])
  })

  test('every path over dots, backslashes and slashes reads as the character-at-a-time reading does', () => {
    const alphabet = ['a', '.', '\\', '/', 'é']
    const paths = ['']
    for (let length = 1; length <= 6; length++)
      for (let n = 0; n < alphabet.length ** length; n++) {
        let path = ''
        for (let i = 0, k = n; i < length; i++, k = Math.floor(k / alphabet.length)) path += alphabet[k % alphabet.length]
        paths.push(path)
      }
    for (const path of paths) expect([path, splitPath(path)]).toEqual([path, slowSplit(path)])
  })
})
