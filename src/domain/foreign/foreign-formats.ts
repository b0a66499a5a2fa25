/**
 * The formats of other tools an import takes (docs/migrations.md#from-other-tools): each format's
 * name → its translator and the test that recognises its file by content (for the drop folder).
 * Adding a tool is one line here. Until all four of `FOREIGN_FORMATS` are in, a known name may be
 * missing: the import then answers that the format is not available in this build.
 */

import { isFliptFile, translateFlipt } from './flipt-translator.ts'
import { FOREIGN_FORMATS, type ForeignFormat, type Translator } from './foreign-translation.ts'

/** One tool's import: its translator, and whether a parsed file is one of its files. */
export interface ForeignFormatEntry {
  translate: Translator
  recognises: (raw: unknown) => boolean
}

/** The registry (see module comment): a Partial record while some tools are still to come. */
const REGISTRY: Partial<Record<ForeignFormat, ForeignFormatEntry>> = {
  flipt: { translate: translateFlipt, recognises: isFliptFile },
}

/** Whether `name` is one of the formats of other tools (available in this build or not). */
export function isForeignFormat(name: string): name is ForeignFormat {
  return (FOREIGN_FORMATS as readonly string[]).includes(name)
}

/** The import of `format`, or `undefined` when this build does not have it. */
export function foreignFormat(format: ForeignFormat): ForeignFormatEntry | undefined {
  return REGISTRY[format]
}

/** Whether the import of `format` takes YAML and TOML (Flipt, GO Feature Flag) besides JSON. */
export function takesText(format: ForeignFormat): boolean {
  return format === 'flipt' || format === 'gofeatureflag'
}

/** The format whose file `raw` is, by its content, or `undefined` (a migration file, a flagd document, anything else). */
export function recogniseForeignFile(raw: unknown): ForeignFormat | undefined {
  for (const format of FOREIGN_FORMATS) if (REGISTRY[format]?.recognises(raw) === true) return format
  return undefined
}
